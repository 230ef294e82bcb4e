"""The Django fixtures every app's tests share (a plugin tests/conftest.py loads when
pytest-django runs): isolated media, an empty cache, personas around one study, the demo
seeded once per run."""

import fcntl
import io
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from readerstudy.models import Role
from tests.factories import PASSWORD, MembershipFactory, UserFactory, build_study
from tests.radiographs import derived_once, place


@pytest.fixture(autouse=True, scope="session")
def _fast_settings():
    """Settings whose production cost is paid once per process but once per test here.

    A real PBKDF2 hash costs ~0.4 s per test user; no test is about the hash's strength.
    WhiteNoise indexes every static file when its middleware is built (~30 ms): a server builds
    it once, but each test client builds its own (15 of the authorization matrix's 58 s). With
    autorefresh it looks a static file up when asked instead; no test serves static files
    through it (the live server's own handler serves them to the browser)."""
    from django.test.utils import override_settings

    with override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        WHITENOISE_AUTOREFRESH=True,
    ):
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
def figures_unrendered(monkeypatch):
    """Every figure is built but saved as a few placeholder bytes instead of PNG, SVG and PDF
    (4-6 s per ZIP): for tests that fetch the ZIP for its tables and R files only and compare
    numbers (the R-oracle tests). The figures' files are the figure tests' subject."""
    monkeypatch.setattr("analysis.plots.figure_bytes", lambda fig, fmt: f"figure ({fmt})".encode())


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


def _seed_snapshot(folder: Path, django_db_blocker) -> None:
    """`seed_demo --password PASSWORD` in a transaction rolled back afterwards: its rows into
    folder/demo.json (a loaddata fixture: users and permissions by natural key), its files
    into folder/media."""
    from django.core.management import call_command
    from django.db import transaction
    from django.test.utils import override_settings

    media, rows = folder / "media", folder / "demo.json"
    media.mkdir()
    partial = folder / "demo.json.partial"
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
            output=str(partial),
            stdout=io.StringIO(),
        )
        transaction.set_rollback(True)
    partial.rename(rows)  # complete or absent, for the workers that read it


@contextmanager
def _held(lock: Path) -> Iterator[None]:
    """The run's exclusive lock `lock` (a file), held by one test process at a time."""
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def _demo_snapshot(django_db_setup, django_db_blocker, tmp_path_factory):
    """The demo's rows and files, seeded once per run: the first xdist worker to need them
    seeds (3-8 s here, with the radiographs derived once), the others wait for it and load
    the same rows and files (a quarter of a second per test). seed_demo draws from fixed
    seeds, so every worker's own seeding gave the same demo."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp("demo")
        _seed_snapshot(folder, django_db_blocker)
    else:  # the run's temporary folder, shared by its workers
        folder = tmp_path_factory.getbasetemp().parent / "demo"
        with _held(folder.with_suffix(".lock")):
            if not (folder / "demo.json").exists():
                shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half-way
                folder.mkdir()
                _seed_snapshot(folder, django_db_blocker)
    return folder / "demo.json", folder / "media"


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
