"""AI predictions from the browser: upload, preview (writes nothing), confirm (writes, all or
nothing); the API says which studies changed."""

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.messages import get_messages
from django.core import signing
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from readerstudy.models import AuditEvent, Role
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.predictions.preview import upload_claim
from readerstudy.predictions.services import predictions_import
from readerstudy.predictions.views import MULTIPART_SLACK, SALT
from tests.factories import (
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def csv_of(study, letter="B", extra=""):
    rows = "".join(f"{i.question.source_id},{letter}\n" for i in study.items.all())
    return f"question_id,prediction\n{rows}{extra}".encode()


def preview(client, study, content, model="MedGemma", replace=False):
    data = {"model": model, "file": SimpleUploadedFile("preds.csv", content)}
    if replace:
        data["replace"] = "on"
    return client.post(reverse("study-predictions", args=[study.slug]), data)


def token_of(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def nothing_written():
    return not (
        AIModel.objects.exists()
        or Prediction.objects.exists()
        or AuditEvent.objects.filter(action__startswith="predictions").exists()
    )


def test_the_analysis_page_offers_the_upload_form(client, study, pi):
    client.force_login(pi)
    html = client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert f'action="{reverse("study-predictions", args=[study.slug])}"' in html
    assert 'enctype="multipart/form-data"' in html


def test_preview_shows_rows_matches_failures_and_every_changed_study_and_writes_nothing(
    client, study, pi, study_b
):
    MembershipFactory(study=study_b, user=pi, role=Role.PI)
    client.force_login(pi)
    content = csv_of(study, extra="b-only,no idea at all\n")
    response = preview(client, study, content)
    assert response.status_code == 200
    html = response.content.decode()
    rows = dict(re.findall(r"<tr><th>(.*?)</th><td[^>]*>(.*?)</td></tr>", html))
    assert rows["Rows in the file"] == "5"
    assert rows["Questions matched in the dataset"] == "5 of 5"
    assert rows["… of them in this study"] == "4"
    assert rows[next(k for k in rows if k.startswith("Failed extractions"))] == "1"
    assert "Studies whose results change (2)" in html
    assert f"<strong>{study.slug}</strong>" in html and "<strong>study-b</strong>" in html
    assert "Import 5 predictions" in html
    assert nothing_written()
    stored = list((Path(settings.MEDIA_ROOT) / "uploads" / "predictions").glob("*/*"))
    assert [p.read_bytes() for p in stored] == [content]  # the file is stored first


def test_confirm_imports_the_previewed_file_and_names_the_changed_studies(client, study, pi):
    client.force_login(pi)
    token = token_of(preview(client, study, csv_of(study, "C")))
    response = client.post(
        reverse("study-predictions-confirm", args=[study.slug]), {"token": token}
    )
    assert response.url == reverse("analysis", args=[study.slug])
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("Imported 4 predictions of “MedGemma” (0 failed extractions)")
    assert message.endswith(f"Studies whose results changed: {study.slug}.")
    assert set(Prediction.objects.values_list("letter", flat=True)) == {"C"}
    assert AuditEvent.objects.get(study=study, action="predictions.upload").actor == pi
    assert not list((Path(settings.MEDIA_ROOT) / "uploads" / "predictions").glob("*/*"))
    # The same token again: the file is gone, nothing changes.
    again = client.post(reverse("study-predictions-confirm", args=[study.slug]), {"token": token})
    assert again.status_code == 400 and Prediction.objects.count() == 4
    # One failed extraction is "1 failed extraction", not "1 failed extractions".
    token = token_of(
        preview(client, study, csv_of(study, "I cannot tell"), model="Other", replace=True)
    )
    response = client.post(
        reverse("study-predictions-confirm", args=[study.slug]), {"token": token}
    )
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("Imported 4 predictions of “Other” (4 failed extractions)")
    single = csv_of(study, "C").replace(b",C\n", b",no idea\n", 1)
    token = token_of(preview(client, study, single, model="Third"))
    response = client.post(
        reverse("study-predictions-confirm", args=[study.slug]), {"token": token}
    )
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("Imported 4 predictions of “Third” (1 failed extraction)")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b" \n", "the file is empty"),
        (b"id,answer\nq1,A\n", "CSV needs a header with question_id,prediction"),
        (b"\xff\xfe\x00binary", "the file is not UTF-8 text"),
        (b"question_id,prediction,Probability\nq1,A,0.9\n", "not read (misspelt or given twice)"),
        (b"question_id,prediction,probability\nq1,A,1.5\n", "is not a probability from 0 to 1"),
    ],
)
def test_a_bad_file_gives_a_clear_error_and_writes_nothing(client, study, pi, content, message):
    client.force_login(pi)
    response = preview(client, study, content)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported." in html and message in html
    assert 'name="token"' not in html and nothing_written()


def test_unknown_ids_and_an_existing_model_are_shown_and_cannot_be_confirmed(client, study, pi):
    predictions_import(dataset=study.dataset, model_name="MedGemma", content=csv_of(study, "A"))
    client.force_login(pi)
    response = preview(client, study, csv_of(study, extra="nope-1,A\n"))
    html = response.content.decode()
    assert "1 question id(s) not in dataset" in html and "nope-1" in html
    assert "already has 4 predictions" in html
    assert 'name="token"' not in html
    replaced = preview(client, study, csv_of(study, "D"), replace=True)
    assert "Predictions of this model replaced" in replaced.content.decode()
    client.post(
        reverse("study-predictions-confirm", args=[study.slug]), {"token": token_of(replaced)}
    )
    assert set(Prediction.objects.values_list("letter", flat=True)) == {"D"}


def test_non_pis_cannot_preview_or_confirm(client, study, pi, reader, expert, outsider):
    client.force_login(pi)
    token = token_of(preview(client, study, csv_of(study)))
    for person in (reader, expert, outsider):
        client.force_login(person)
        assert preview(client, study, csv_of(study)).status_code == 404
        confirm = reverse("study-predictions-confirm", args=[study.slug])
        assert client.post(confirm, {"token": token}).status_code == 404
        assert client.get(reverse("study-predictions", args=[study.slug])).status_code == 404
    assert nothing_written()


def test_a_pi_of_another_study_on_the_dataset_cannot_change_this_one(client, study, study_b, pi_b):
    client.force_login(pi_b)
    response = preview(client, study_b, csv_of(study_b))  # questions study A shows too
    assert response.status_code == 403
    assert "not a PI" in response.content.decode() and study.slug not in response.content.decode()
    assert nothing_written()


def test_a_tampered_file_or_another_studys_token_is_refused(client, study, pi, study_b):
    MembershipFactory(study=study_b, user=pi, role=Role.PI)
    client.force_login(pi)
    token = token_of(preview(client, study, csv_of(study)))
    # The preview of study A, confirmed through study B: refused.
    response = client.post(reverse("study-predictions-confirm", args=["study-b"]), {"token": token})
    assert response.status_code == 400 and "another study" in response.content.decode()
    # Another person's preview: refused.
    other_pi = UserFactory(username="other_pi")
    MembershipFactory(study=study, user=other_pi, role=Role.PI)
    client.force_login(other_pi)
    confirm = reverse("study-predictions-confirm", args=[study.slug])
    assert client.post(confirm, {"token": token}).status_code == 400
    # A forged token: refused.
    client.force_login(pi)
    assert client.post(confirm, {"token": token[:-2] + "xx"}).status_code == 400
    # The stored file changed after the preview: refused, nothing written.
    stored = next((Path(settings.MEDIA_ROOT) / "uploads" / "predictions").glob("*/*"))
    stored.write_bytes(csv_of(study, "D"))
    response = client.post(confirm, {"token": token})
    assert response.status_code == 400
    assert "the file changed after the preview" in response.content.decode()
    assert nothing_written()
    assert not list((Path(settings.MEDIA_ROOT) / "uploads" / "predictions").iterdir())


def test_the_api_response_lists_the_studies_changed(study, pi, study_b):
    MembershipFactory(study=study_b, user=pi, role=Role.PI)
    client = APIClient()
    client.force_authenticate(pi)
    response = client.post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "MedGemma", "file": SimpleUploadedFile("p.csv", csv_of(study))},
        format="multipart",
    )
    assert response.status_code == 201
    assert response.json()["studies"] == sorted([study.slug, "study-b"])


def test_the_api_refuses_a_huge_upload_before_its_body_is_read(study, pi, settings, monkeypatch):
    """As the page does: a session sign-in's CSRF check would otherwise parse the body."""
    settings.PREDICTION_UPLOAD_MAX_BYTES = 1000

    def parse(*args, **kwargs):
        raise AssertionError("the body was read")

    monkeypatch.setattr("rest_framework.parsers.MultiPartParser.parse", parse)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(pi)
    huge = csv_of(study) + b"x" * (MULTIPART_SLACK + 2000)
    response = client.post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "MedGemma", "file": SimpleUploadedFile("p.csv", huge)},
        format="multipart",
    )
    assert response.status_code == 413
    assert "the limit is 1000" in response.json()["detail"]
    assert not AIModel.objects.exists()


def test_files_of_previews_nobody_confirmed_are_removed_later(client, study, pi):
    client.force_login(pi)
    preview(client, study, csv_of(study))
    folder = Path(settings.MEDIA_ROOT) / "uploads" / "predictions"
    [old] = list(folder.iterdir())
    two_hours_ago = time.time() - 2 * 60 * 60
    os.utime(old, (two_hours_ago, two_hours_ago))
    preview(client, study, csv_of(study, "C"))
    assert old not in list(folder.iterdir()) and len(list(folder.iterdir())) == 1


def _second_pi(study, username="pi2"):
    user = UserFactory(username=username)
    MembershipFactory(study=study, user=user, role=Role.PI)
    return user


def confirm_url(study):
    return reverse("study-predictions-confirm", args=[study.slug])


@pytest.mark.parametrize("existed", [False, True], ids=["new model", "replacement"])
def test_a_preview_of_a_model_another_pi_imported_since_is_refused(client, study, pi, existed):
    """Two PIs preview the same model; the other confirms first. Confirming mine would
    overwrite their import, which my preview never showed (or, for a new model, fail with
    the database's error): refused, preview again."""
    if existed:
        predictions_import(dataset=study.dataset, model_name="MedGemma", content=csv_of(study))
    other = _second_pi(study)
    client.force_login(pi)
    mine = token_of(preview(client, study, csv_of(study, "C"), replace=existed))
    client.force_login(other)
    theirs = token_of(preview(client, study, csv_of(study, "D"), replace=True))
    assert client.post(confirm_url(study), {"token": theirs}).status_code == 302
    client.force_login(pi)
    response = client.post(confirm_url(study), {"token": mine})
    assert response.status_code == 400
    assert "changed since your preview" in response.content.decode()
    assert set(Prediction.objects.values_list("letter", flat=True)) == {"D"}
    assert not AuditEvent.objects.filter(actor=pi).exists()
    assert not list((Path(settings.MEDIA_ROOT) / "uploads" / "predictions").iterdir())


def test_a_preview_confirmed_twice_at_once_is_imported_once(client, study, pi):
    """Two tabs (or a double click) send the same token: the first confirmation takes the
    stored file, the second finds it taken and writes nothing."""
    client.force_login(pi)
    token = token_of(preview(client, study, csv_of(study, "C")))
    claim = signing.loads(token, salt=SALT)
    upload_claim(claim["file"], claim["sha256"])  # the first confirmation, still running
    response = client.post(confirm_url(study), {"token": token})
    assert response.status_code == 400
    assert "confirmed already" in response.content.decode()
    assert nothing_written()


def test_a_token_whose_file_was_removed_is_refused(client, study, pi):
    client.force_login(pi)
    token = token_of(preview(client, study, csv_of(study)))
    for folder in (Path(settings.MEDIA_ROOT) / "uploads" / "predictions").iterdir():
        shutil.rmtree(folder)  # removed as abandoned, or by an operator
    response = client.post(confirm_url(study), {"token": token})
    assert response.status_code == 400 and "upload the file again" in response.content.decode()
    assert nothing_written()


def test_a_huge_upload_is_refused_before_its_body_is_read(client, study, pi, settings):
    settings.PREDICTION_UPLOAD_MAX_BYTES = 1000
    client.force_login(pi)
    huge = csv_of(study) + b"x" * (MULTIPART_SLACK + 2000)
    response = preview(client, study, huge)
    assert response.status_code == 413
    html = response.content.decode()
    assert "File too large" in html and "the limit is 1000" in html
    assert not (Path(settings.MEDIA_ROOT) / "uploads" / "predictions").exists()
    # Just over the limit, within the slack: the form says so.
    response = preview(client, study, csv_of(study) + b"x" * 1000)
    assert response.status_code == 400 and "File too large" in response.content.decode()
    assert nothing_written()


def test_the_upload_still_checks_csrf(study, pi):
    client = Client(enforce_csrf_checks=True)
    client.force_login(pi)
    response = preview(client, study, csv_of(study))
    assert response.status_code == 403 and 'name="token"' not in response.content.decode()
    assert not (Path(settings.MEDIA_ROOT) / "uploads" / "predictions").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "the file is not UTF-8 text"),
        (b"<html><body>predictions</body></html>", "CSV needs a header"),
        (b"[1, 2, 3]", "CSV needs a header"),
        (b"{" * 100_000, "not valid JSON"),
        (b'{"q": [1]}', "expected an object"),
    ],
)
def test_files_that_are_not_predictions_are_refused(client, study, pi, content, message):
    client.force_login(pi)
    response = preview(client, study, content)
    assert response.status_code == 400 and message in response.content.decode()
    assert nothing_written()


def test_a_model_name_with_markup_and_formula_characters_is_shown_as_text(client, study, pi):
    name = '=HYPERLINK("http://x")<script>alert(1)</script>'
    client.force_login(pi)
    response = preview(client, study, csv_of(study, "C"), model=name)
    html = response.content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    response = client.post(confirm_url(study), {"token": token_of(response)}, follow=True)
    html = response.content.decode()
    assert AIModel.objects.get().name == name
    assert "<script>alert(1)" not in html and "Imported 4 predictions of" in html
