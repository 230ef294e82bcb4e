"""import_rexvqa --dicomweb: images fetched from a real PACS (Debian's Orthanc) by their UIDs.

Tests that need the PACS take the `pacs` fixture and are skipped, with the reason, where
Orthanc is not installed. Those marked `needs_pylibjpeg` render JPEG 2000 / JPEG Lossless
instances and need pydicom's pixel-data plugins.
"""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from readerstudy.dicomweb import DicomwebClient, DicomwebConfig, DicomwebError, parse_resource
from readerstudy.models import Case, Dataset, Image, Question
from readerstudy.orthanc_local import free_port
from readerstudy.services.studies import study_create
from tests.readerstudy_tests import rexvqa_builder as rb
from tests.readerstudy_tests.conftest import needs_pylibjpeg, radiograph, uids

pytestmark = pytest.mark.django_db
PASSWORD_VAR = "READERSTUDY_TEST_PACS_PASSWORD"


def image_path(name: str, patient: str = "p1") -> str:
    study, series, sop = uids(name)
    return f"../deid_png/{patient}/a1/studies/{study}/series/{series}/instances/{sop}.png"


def write_records(root: Path, records: dict) -> Path:
    path = root / "metadata" / "test.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records))
    return path


def pacs_args(pacs, monkeypatch, password: str | None = None) -> list[str]:
    monkeypatch.setenv(PASSWORD_VAR, password or pacs.password)
    return [
        "--dicomweb",
        pacs.dicomweb_url,
        "--dicomweb-user",
        pacs.user,
        "--dicomweb-password-env",
        PASSWORD_VAR,
    ]


def run(path: Path, *args: str) -> dict:
    out = StringIO()
    call_command("import_rexvqa", str(path), "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def assert_nothing_written() -> None:
    assert Dataset.objects.count() == 0
    assert Case.objects.count() == 0
    assert Question.objects.count() == 0
    assert Image.objects.count() == 0
    sources = Path(settings.MEDIA_ROOT) / "sources"
    assert not [p for p in sources.rglob("*") if p.is_file()] if sources.exists() else True


def cases_file(root: Path, names: list[str]) -> Path:
    records = {}
    for index, name in enumerate(names):
        study = f"case-{index}"
        for q in (1, 2):
            records[f"{study}-q{q}"] = rb.record(
                q, study, StudyInstanceUid=uids(name)[0], ImagePath=[image_path(name)]
            )
    return write_records(root, records)


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(["RG1_UNCR.dcm", "RG3_UNCR.dcm"], id="uncompressed"),
        pytest.param(
            ["RG1_J2KR.dcm", "RG1_J2KI.dcm", "JPEG-LL.dcm"], id="compressed", marks=needs_pylibjpeg
        ),
    ],
)
def test_pacs_import_renders_the_same_display_images_as_files(pacs, monkeypatch, tmp_path, names):
    # The same ReXVQA file twice: images on disk (deid_png/...) and images only in the PACS.
    disk_root, pacs_root = tmp_path / "disk", tmp_path / "pacs"
    disk_file, pacs_file = cases_file(disk_root, names), cases_file(pacs_root, names)
    for name in names:
        target = disk_root / image_path(name)[3:]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(radiograph(name), target)
    run(disk_file, "--dataset", "disk")
    summary = run(pacs_file, "--dataset", "pacs", *pacs_args(pacs, monkeypatch))
    assert summary["images_created"] == len(names)
    assert not (pacs_root / "deid_png").exists()

    for dataset in ("disk", "pacs"):
        created = study_create(
            slug=dataset, dataset=Dataset.objects.get(name=dataset), n=2 * len(names), seed=3
        )
        assert created.images_derived == len(names)
    for index, name in enumerate(names):
        disk = Image.objects.get(case__dataset__name="disk", case__study_id=f"case-{index}")
        fetched = Image.objects.get(case__dataset__name="pacs", case__study_id=f"case-{index}")
        study, series, sop = uids(name)
        assert fetched.source_uri == (
            f"{pacs.dicomweb_url}/studies/{study}/series/{series}/instances/{sop}"
        )
        assert Path(fetched.source_path).is_relative_to(Path(settings.MEDIA_ROOT) / "sources")
        assert fetched.display and fetched.display == disk.display  # same content hash
        media = Path(settings.MEDIA_ROOT)
        assert (media / fetched.display).read_bytes() == (media / disk.display).read_bytes()
        assert (fetched.width, fetched.height, fetched.bits_stored) == (
            disk.width,
            disk.height,
            disk.bits_stored,
        )


def test_study_uid_alone_lists_the_study_and_reads_view_from_the_header(
    pacs, monkeypatch, tmp_path
):
    study_uid = uids("RG3_UNCR.dcm")[0]
    record = rb.record(1, "s1", StudyInstanceUid=study_uid, ImagePath=[], ImageViewPosition=[])
    summary = run(write_records(tmp_path, {"q1": record}), *pacs_args(pacs, monkeypatch))
    assert summary["images_created"] == 1
    image = Image.objects.get()
    assert image.view_position == "AP" and image.modality == "CR"  # from the DICOM header


@needs_pylibjpeg
def test_study_uid_alone_imports_every_instance_in_order(pacs, monkeypatch, tmp_path):
    study_uid = uids("RG1_UNCR.dcm")[0]
    record = rb.record(1, "s1", StudyInstanceUid=study_uid, ImagePath=[])
    run(write_records(tmp_path, {"q1": record}), *pacs_args(pacs, monkeypatch))
    sops = [uids(n)[2] for n in ("RG1_UNCR.dcm", "RG1_J2KR.dcm", "RG1_J2KI.dcm")]
    stored = [Path(uri).name for uri in Image.objects.values_list("source_uri", flat=True)]
    assert stored == sops


def test_reimport_changes_nothing_and_fetches_nothing(pacs, monkeypatch, tmp_path):
    path = cases_file(tmp_path, ["RG3_UNCR.dcm"])
    args = pacs_args(pacs, monkeypatch)
    run(path, "--dataset", "d", *args)
    cached = Path(Image.objects.get().source_path)

    def no_fetch(self, ref):
        raise AssertionError("re-import fetched an instance again")

    with monkeypatch.context() as patched:
        patched.setattr(DicomwebClient, "fetch", no_fetch)
        again = run(path, "--dataset", "d", *args)
    assert again["questions_created"] == 0 and again["questions_unchanged"] == 2
    assert again["images_created"] == 0 and again["images_unchanged"] == 1
    cached.unlink()  # a lost cache file is fetched again, to the same content address
    run(path, "--dataset", "d", *args)
    assert cached.is_file() and Image.objects.count() == 1


def test_pacs_stopped_mid_import_writes_nothing_and_a_rerun_succeeds(pacs, monkeypatch, tmp_path):
    path = cases_file(tmp_path, ["RG3_UNCR.dcm", "RG1_UNCR.dcm"])  # case-0 then case-1
    args = pacs_args(pacs, monkeypatch)
    original = DicomwebClient.fetch
    fetched = []

    def fetch_then_stop_the_pacs(self, ref):
        data = original(self, ref)
        fetched.append(ref)
        if len(fetched) == 1:
            pacs.stop()
        return data

    with monkeypatch.context() as patched:
        patched.setattr(DicomwebClient, "fetch", fetch_then_stop_the_pacs)
        with pytest.raises(CommandError) as info:
            run(path, "--dataset", "d", *args)
    message = str(info.value)
    assert "nothing was written" in message
    assert "cannot reach the DICOMweb server" in message and "connection refused" in message
    assert "'case-1-q1'" in message and "'ImagePath'" in message
    assert len(fetched) == 1
    assert_nothing_written()  # neither rows nor the instance fetched before the stop

    pacs.start()
    summary = run(path, "--dataset", "d", *args)
    assert summary["questions_created"] == 4 and summary["images_created"] == 2


def test_bad_credentials_are_named_with_the_question(pacs, monkeypatch, tmp_path):
    path = cases_file(tmp_path, ["RG3_UNCR.dcm"])
    with pytest.raises(CommandError) as info:
        run(path, *pacs_args(pacs, monkeypatch, password="wrong-password"))
    message = str(info.value)
    assert "refused the credentials (HTTP 401)" in message and "'case-0-q1'" in message
    assert "wrong-password" not in message
    assert_nothing_written()


def test_missing_instance_is_a_404_naming_the_question(pacs, monkeypatch, tmp_path):
    study, series, _ = uids("RG3_UNCR.dcm")
    missing = f"../deid_png/p1/a1/studies/{study}/series/{series}/instances/1.2.3.999.png"
    records = {
        "good": rb.record(1, "s1", ImagePath=[image_path("RG3_UNCR.dcm")]),
        "lost": rb.record(2, "s2", ImagePath=[missing]),
    }
    with pytest.raises(CommandError) as info:
        run(write_records(tmp_path, records), *pacs_args(pacs, monkeypatch))
    message = str(info.value)
    assert "'lost'" in message and "1.2.3.999" in message and "HTTP 404" in message
    assert_nothing_written()  # the instance fetched for 'good' is removed again


def test_unknown_study_uid_names_the_question(pacs, monkeypatch, tmp_path):
    record = rb.record(1, "s1", StudyInstanceUid="1.2.3.4.5", ImagePath=[])
    with pytest.raises(CommandError) as info:
        run(write_records(tmp_path, {"q1": record}), *pacs_args(pacs, monkeypatch))
    assert "'q1'" in str(info.value) and "'StudyInstanceUid'" in str(info.value)
    assert "has no image instances" in str(info.value)
    assert_nothing_written()


def test_instance_over_the_pixel_cap_is_refused(pacs, monkeypatch, tmp_path, settings):
    settings.MAX_IMAGE_PIXELS = 1000
    path = cases_file(tmp_path, ["RG3_UNCR.dcm"])
    with pytest.raises(CommandError, match=r"'case-0-q1'.*MAX_IMAGE_PIXELS"):
        run(path, *pacs_args(pacs, monkeypatch))
    assert_nothing_written()


def test_undecodable_instance_is_refused_at_import(pacs, monkeypatch, tmp_path):
    import pydicom
    from pydicom.uid import generate_uid

    ds = pydicom.dcmread(radiograph("RG3_UNCR.dcm"))
    ds.StudyInstanceUID = generate_uid(entropy_srcs=["readerstudy-broken-study"])
    ds.SeriesInstanceUID = generate_uid(entropy_srcs=["readerstudy-broken-series"])
    ds.SOPInstanceUID = generate_uid(entropy_srcs=["readerstudy-broken-sop"])
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.PixelData = ds.PixelData[:1000]  # truncated pixel data
    pacs.store([ds])
    path = f"../deid_png/p/a/studies/{ds.StudyInstanceUID}/series/{ds.SeriesInstanceUID}/"
    path += f"instances/{ds.SOPInstanceUID}.png"
    records = {"broken": rb.record(1, "s1", ImagePath=[path])}
    with pytest.raises(CommandError) as info:
        run(write_records(tmp_path, records), *pacs_args(pacs, monkeypatch))
    assert "'broken'" in str(info.value) and "pixel data" in str(info.value)
    assert_nothing_written()


# Without a PACS: what the command refuses before or without a server.


def test_unreachable_server_is_a_clear_error_naming_the_question(tmp_path, settings):
    settings.DICOMWEB_RETRIES, settings.DICOMWEB_BACKOFF = 1, 0.01
    path = write_records(tmp_path, {"q1": rb.record(1, ImagePath=[image_path("RG3_UNCR.dcm")])})
    url = f"http://127.0.0.1:{free_port()}/dicom-web"  # nothing listens there
    with pytest.raises(CommandError) as info:
        run(path, "--dicomweb", url)
    message = str(info.value)
    assert "cannot reach the DICOMweb server" in message and "'q1'" in message
    assert "tried 2 times" in message
    assert_nothing_written()


def test_image_path_without_uids_is_refused(tmp_path):
    path = write_records(tmp_path, {"q1": rb.record(1)})  # ".../instances/img.png"
    with pytest.raises(CommandError, match=r"'q1'.*does not name a DICOMweb instance"):
        run(path, "--dicomweb", "http://127.0.0.1:9/dicom-web")
    assert_nothing_written()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dicomweb", "http://u:p@pacs.example/dicom-web"], "not in the URL"),
        (["--dicomweb", "ftp://pacs.example/"], "not an http(s) URL"),
        (["--dicomweb-user", "u"], "needs --dicomweb URL"),
        (
            [
                "--dicomweb",
                "http://pacs/",
                "--dicomweb-user",
                "u",
                "--dicomweb-password-env",
                "NOPE_X",
            ],
            "NOPE_X",
        ),
    ],
)
def test_bad_dicomweb_options_are_refused(tmp_path, args, message):
    path = write_records(tmp_path, {"q1": rb.record(1)})
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(path, *args)
    assert_nothing_written()


def test_images_root_and_dicomweb_are_exclusive(tmp_path):
    path = write_records(tmp_path, {"q1": rb.record(1)})
    with pytest.raises(CommandError, match="not allowed with"):
        run(path, "--images-root", str(tmp_path), "--dicomweb", "http://pacs/")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("../deid_png/p/a/studies/1.2/series/1.3/instances/1.4.png", ("1.2", "1.3", "1.4")),
        ("studies/1.2/series/1.3/instances/1.4", ("1.2", "1.3", "1.4")),
        ("x/studies/1.2/series/1.3/instances/1.2.826.0.3.1.dcm", ("1.2", "1.3", "1.2.826.0.3.1")),
        ("../deid_png/p/a/studies/1.2/series/1.3/instances/img.png", None),
        ("studies/1.2/series/1.3/instances/1.4/../../../x", None),
        ("studies/1.2/series/1.3/instances/" + "1." * 40 + "1", None),  # UID over 64 characters
    ],
)
def test_parse_resource(path, expected):
    ref = parse_resource(path)
    assert (ref and (ref.study, ref.series, ref.sop)) == expected


def test_config_never_shows_the_password():
    config = DicomwebConfig("http://pacs/dicom-web/", "u", "s3cret", token="t0ken")
    assert "s3cret" not in repr(config) and "t0ken" not in repr(config)
    assert config.url == "http://pacs/dicom-web"
    with pytest.raises(DicomwebError):
        DicomwebConfig("pacs.example/dicom-web")


def test_study_listing_skips_reports_and_presentation_states(monkeypatch):
    def row(series, sop, sop_class, number):
        return {
            "0020000E": {"Value": [series]},
            "00080018": {"Value": [sop]},
            "00080016": {"Value": [sop_class]},
            "00200013": {"Value": [number]},
        }

    rows = [
        row("1.5", "1.5.2", "1.2.840.10008.5.1.4.1.1.1", 2),  # CR image
        row("1.6", "1.6.1", "1.2.840.10008.5.1.4.1.1.88.22", 1),  # enhanced SR
        row("1.5", "1.5.1", "1.2.840.10008.5.1.4.1.1.1.1", 1),  # DX image
        row("1.7", "1.7.1", "1.2.840.10008.5.1.4.1.1.11.1", 1),  # presentation state
    ]
    client = DicomwebClient(DicomwebConfig("http://pacs.invalid/dicom-web"))
    monkeypatch.setattr(client._client, "search_for_instances", lambda **kwargs: rows)
    assert [ref.sop for ref in client.study_instances("1.4")] == ["1.5.1", "1.5.2"]
    monkeypatch.setattr(client._client, "search_for_instances", lambda **kwargs: rows[1:2])
    with pytest.raises(DicomwebError, match="no image instances"):
        client.study_instances("1.4")
