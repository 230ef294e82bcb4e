"""The PI's "new study" page: upload a question bank, import it and sample a study, atomically."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from readerstudy.models import Dataset, Membership, Question, ReaderStudy, Role
from tests.factories import UserFactory
from tests.readerstudy_tests import rexvqa_builder as rb
from tests.readerstudy_tests.conftest import uids
from tests.readerstudy_tests.test_import_questions import row

pytestmark = pytest.mark.django_db


@pytest.fixture
def creator(client):
    user = UserFactory(username="creator")
    user.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(user)
    return user


@pytest.fixture
def images_root(tmp_path, settings):
    root = tmp_path / "hospital-images"
    for case in ("c1", "c2", "c3"):
        target = root / "images" / case / "pa.png"
        target.parent.mkdir(parents=True)
        shutil.copyfile(rb.RESOURCES / "tiny_8bit.png", target)
    settings.IMPORT_IMAGES_ROOT = str(root)
    return root


def bank(rows: list[dict], name: str = "bank.csv") -> SimpleUploadedFile:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return SimpleUploadedFile(name, buffer.getvalue().encode(), content_type="text/csv")


def post(client, upload=None, **fields):
    data = {
        "slug": "uploaded",
        "title": "Uploaded bank",
        "sample": 3,
        "seed": 1,
        "stratify": "none",
        "dataset_name": "Hospital bank",
        "image_source": "folder",
        **fields,
    }
    if upload is not None:
        data["questions_file"] = upload
    return client.post(reverse("study-create"), data)


def test_upload_imports_and_samples_a_study(client, creator, images_root):
    rows = [row("q1", "c1"), row("q2", "c2"), row("q3", "c3")]
    response = post(client, bank(rows))
    assert response.status_code == 302
    study = ReaderStudy.objects.get(slug="uploaded")
    assert study.dataset.name == "Hospital bank" and study.items.count() == 3
    assert Membership.objects.filter(study=study, user=creator, role=Role.PI).exists()
    assert not study.items.filter(question__case__images__display="").exists()
    page = client.get(response.url)
    assert "Imported 3 new questions" in page.content.decode()


def test_one_bad_row_is_shown_on_the_form_and_nothing_is_written(client, creator, images_root):
    rows = [row("q1", "c1"), row("q2", "c2", correct="E"), row("q3", "c3")]
    response = post(client, bank(rows))
    assert response.status_code == 200
    text = response.content.decode()
    assert "row 3 (question &#x27;q2&#x27;), column &#x27;correct&#x27;" in text
    assert "Nothing was imported or created" in text
    assert not Dataset.objects.exists() and not Question.objects.exists()
    assert not ReaderStudy.objects.exists()


def test_sampling_error_after_import_rolls_the_import_back(client, creator, images_root):
    rows = [row("q1", "c1"), row("q2", "c2")]
    response = post(client, bank(rows), sample=5)
    assert response.status_code == 200
    assert "only 2 are available" in response.content.decode()
    assert not Dataset.objects.exists() and not ReaderStudy.objects.exists()


def test_upload_into_an_existing_dataset_chosen_above(client, creator, images_root):
    post(client, bank([row("q1", "c1"), row("q2", "c2"), row("q3", "c3")]), sample=1)
    dataset = Dataset.objects.get()
    more = bank([row("q4", "c1"), row("q5", "c2")])
    response = post(client, more, slug="second", sample=5, dataset_name="", dataset=dataset.id)
    assert response.status_code == 302
    assert dataset.questions.count() == 5 and Dataset.objects.count() == 1


@pytest.mark.parametrize(
    ("upload", "fields", "message"),
    [
        (None, {}, "Choose a dataset, or upload a question bank."),
        ("bank.ods", {}, "Upload a .csv or .xlsx file"),
        ("bank.csv", {"dataset_name": ""}, "Name the dataset"),
        ("bank.csv", {"image_source": ""}, "Choose where the images"),
        ("bank.csv", {"image_source": "dicomweb"}, "Select a valid choice"),  # not configured
        ("bank.xlsx", {}, "not a readable .xlsx workbook"),
    ],
)
def test_form_errors_never_500_and_write_nothing(
    client, creator, images_root, upload, fields, message
):
    file = bank([row()], upload) if upload else None
    response = post(client, file, **fields)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Dataset.objects.exists() and not ReaderStudy.objects.exists()


def test_upload_needs_a_configured_image_source(client, creator, settings):
    """A PI is told whom to ask; the server's settings are said to its administrators only."""
    settings.IMPORT_IMAGES_ROOT, settings.DICOMWEB_URL = "", ""
    html = post(client, bank([row()]), image_source="").content.decode()
    assert "no image source for uploaded questions yet: ask its administrator" in html
    assert "IMPORT_IMAGES_ROOT" not in html and "manage.py" not in html
    creator.is_staff = True
    creator.save()
    html = post(client, bank([row()]), image_source="").content.decode()
    assert "no image source for uploads (IMPORT_IMAGES_ROOT or DICOMWEB_URL)" in html


def test_oversized_upload_is_refused(client, creator, images_root, settings):
    settings.QUESTION_BANK_MAX_BYTES = 100
    response = post(client, bank([row()]))
    assert "larger than 100 bytes" in response.content.decode()


def test_image_paths_cannot_leave_the_configured_root(client, creator, images_root, tmp_path):
    (tmp_path / "secret.png").write_bytes((rb.RESOURCES / "tiny_8bit.png").read_bytes())
    response = post(
        client, bank([row("q1", "c1", image_paths="images/../../secret.png")]), sample=1
    )
    assert "escapes the images root" in response.content.decode()
    assert not Dataset.objects.exists()


def test_upload_with_images_from_the_configured_pacs(client, creator, pacs, settings):
    settings.DICOMWEB_URL = pacs.dicomweb_url
    settings.DICOMWEB_USER, settings.DICOMWEB_PASSWORD = pacs.user, pacs.password
    rows = [row("q1", "c1", image_paths="", study_uid=uids("RG3_UNCR.dcm")[0])]
    response = post(client, bank(rows), sample=1, image_source="dicomweb")
    assert response.status_code == 302
    image = ReaderStudy.objects.get().items.get().question.case.images.get()
    assert image.source_uri.startswith(pacs.dicomweb_url) and image.display


def test_pacs_failure_on_upload_is_shown_and_leaves_no_file(client, creator, pacs, settings):
    settings.DICOMWEB_URL = pacs.dicomweb_url
    settings.DICOMWEB_USER, settings.DICOMWEB_PASSWORD = pacs.user, "wrong"
    rows = [row("q1", "c1", image_paths="", study_uid=uids("RG3_UNCR.dcm")[0])]
    response = post(client, bank(rows), sample=1, image_source="dicomweb")
    assert "refused the credentials (HTTP 401)" in response.content.decode()
    assert not Dataset.objects.exists()
    assert not list((Path(settings.MEDIA_ROOT) / "sources").rglob("*.dcm"))


@pytest.mark.parametrize("ext", ["csv", "xlsx"])
def test_template_download(client, creator, ext):
    response = client.get(reverse("question-bank-template", args=[ext]))
    assert response.status_code == 200
    assert f'filename="question_bank_template.{ext}"' in response["Content-Disposition"]
    assert client.get("/studies/new/question-bank-template.txt").status_code == 404


def test_template_download_needs_the_permission(client):
    client.force_login(UserFactory(username="reader-only"))
    assert client.get(reverse("question-bank-template", args=["csv"])).status_code == 403
