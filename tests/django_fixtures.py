"""The Django fixtures every app's tests share (a plugin tests/conftest.py loads when
pytest-django runs): isolated media, an empty cache, personas around one study, the demo
seeded once per session."""

import io
import shutil
from pathlib import Path

import pytest

from readerstudy.models import Role
from tests.factories import PASSWORD, MembershipFactory, UserFactory, build_study
from tests.radiographs import derived_once, place


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


@pytest.fixture
def derive_once(monkeypatch):
    """Study creation (and so `seed_demo`) derives each distinct radiograph once per session
    (tests/radiographs.py); for tests about what is made of the images, not how."""
    monkeypatch.setattr("readerstudy.services.studies.derive_display_image", derived_once)


# What `seed_demo` writes to the database: the demo's users and the apps' rows.
DEMO_TABLES = ("auth.user", "readerstudy", "predictions", "annotation", "analysis")


@pytest.fixture(scope="session")
def _demo_snapshot(django_db_setup, django_db_blocker, tmp_path_factory):
    """`seed_demo --password PASSWORD` run once per session, in a transaction rolled back
    afterwards: its rows as a loaddata fixture (users and permissions by natural key) and the
    media folder it wrote. Seeding costs 30-50 s; loading the rows well under a second."""
    from django.core.management import call_command
    from django.db import transaction
    from django.test.utils import override_settings

    folder = tmp_path_factory.mktemp("demo")
    media, rows = folder / "media", folder / "demo.json"
    media.mkdir()
    with (
        django_db_blocker.unblock(),
        override_settings(MEDIA_ROOT=media),
        pytest.MonkeyPatch.context() as patch,
        transaction.atomic(),
    ):
        patch.setattr("readerstudy.services.studies.derive_display_image", derived_once)
        call_command("seed_demo", "--password", PASSWORD, stdout=io.StringIO())
        call_command(
            "dumpdata",
            *DEMO_TABLES,
            natural_foreign=True,
            use_base_manager=True,
            output=str(rows),
            stdout=io.StringIO(),
        )
        transaction.set_rollback(True)
    return rows, media


@pytest.fixture
def demo(_demo_snapshot, settings):
    """The demo as `seed_demo --password PASSWORD` leaves it (study "demo"), loaded from the
    session's snapshot, its files in this test's MEDIA_ROOT. Needs a django_db mark."""
    from django.core.management import call_command
    from django.db.models import Value
    from django.db.models.functions import Replace

    from readerstudy.models import Image, ReaderStudy

    rows, media = _demo_snapshot
    media_root = Path(settings.MEDIA_ROOT)
    for path in media.rglob("*"):
        if path.is_file():
            relative = path.relative_to(media)
            if path.suffix == ".json":  # seed_demo writes it again (in place): a copy
                (media_root / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, media_root / relative)
            else:
                place(str(relative), media, media_root)
    call_command("loaddata", str(rows), stdout=io.StringIO())
    Image.objects.update(
        source_path=Replace("source_path", Value(str(media)), Value(str(media_root)))
    )
    return ReaderStudy.objects.get(slug="demo")
