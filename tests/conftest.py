"""Shared fixtures: isolated media, personas around one study; the Hypothesis profiles."""

from pathlib import Path

import pytest

from readerstudy.models import Role
from tests import profiles
from tests.factories import MembershipFactory, UserFactory, build_study

RESOURCES = Path(__file__).parent / "resources"

profiles.load()  # Hypothesis: `ci` derandomized, `dev` random, `fuzz` more (tests/profiles.py)


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hasher():
    """A real PBKDF2 hash costs ~0.4 s per test user; no test is about the hash's strength."""
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _empty_cache():
    """Cached analyses are keyed by data version; ids and counts repeat across tests."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _no_background_downloads(settings):
    """The analysis downloads are drawn in the background only where a test asks for it
    (tests/analysis_tests/test_analysis_downloads.py): seconds of CPU per page view."""
    settings.ANALYSIS_PREPARE_DOWNLOADS = False


@pytest.fixture
def resources() -> Path:
    return RESOURCES


@pytest.fixture
def study(db):
    return build_study(4, images_per_case=2)


def _member(study, username, role):
    user = UserFactory(username=username)
    MembershipFactory(study=study, user=user, role=role)
    return user


@pytest.fixture
def reader(study):
    return _member(study, "reader", Role.READER)


@pytest.fixture
def other_reader(study):
    return _member(study, "other_reader", Role.READER)


@pytest.fixture
def expert(study):
    return _member(study, "expert", Role.EXPERT)


@pytest.fixture
def pi(study):
    return _member(study, "pi", Role.PI)


@pytest.fixture
def outsider(db):
    return UserFactory(username="outsider")


@pytest.fixture
def reader_client(client, reader):
    client.force_login(reader)
    return client
