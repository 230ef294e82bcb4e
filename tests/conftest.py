"""Shared fixtures: isolated media, personas around one study; the Hypothesis profiles."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study

RESOURCES = Path(__file__).parent / "resources"

# Hypothesis profiles, chosen by HYPOTHESIS_PROFILE. `ci` (.ci/run) draws the same examples on
# every run, so a red CI means the code changed, never the dice; a failure prints the blob to
# reproduce it. `dev` (the default, `make test`) draws afresh each run and remembers failures
# locally; `fuzz` (`make fuzz`) draws many more. Tests pin only max_examples, so the profile
# decides whether the draw is random.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.register_profile("fuzz", max_examples=2_000, print_blob=True, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    return settings.MEDIA_ROOT


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
