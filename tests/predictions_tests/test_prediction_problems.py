"""A predictions file's problems all at once, with their rows, and the rows where no letter
was found (issue 34); a model's predictions uploaded into a dataset before any study shows it,
for a new study's aided arm."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from readerstudy.models import AuditEvent
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.predictions.services import PredictionImportError, predictions_import
from tests.factories import UserFactory, build_study

pytestmark = pytest.mark.django_db


def _ids(study) -> list[str]:
    return [i.question.source_id for i in study.items.order_by("position")]


def _four_kinds(study) -> bytes:
    """A duplicate, an id not in the dataset, an empty id and a NUL, besides good rows, a
    prediction 'E' and an empty one."""
    a, b, c, d = _ids(study)[:4]
    rows = [
        "question_id,prediction",
        f"{a},A",  # line 2
        f"{b},E",  # line 3: no letter A-D: a failed extraction
        f"{c},",  # line 4: empty: a failed extraction
        f"{a},B",  # line 5: duplicate of line 2
        "nope-7,C",  # line 6: not in the dataset
        ",D",  # line 7: empty question id
        f"{d},bad\x00text",  # line 8: a NUL no database stores
    ]
    return ("\n".join(rows) + "\n").encode()


def test_every_problem_of_a_file_is_said_at_once_with_its_rows(study):
    with pytest.raises(PredictionImportError) as caught:
        predictions_import(dataset=study.dataset, model_name="M", content=_four_kinds(study))
    message = str(caught.value)
    first = _ids(study)[0]
    assert (
        f"duplicate rows for 1 question id(s) (1 row(s)): {first} (line 5, also line 2)" in message
    )
    assert "1 question id(s) not in dataset" in message and "nope-7 (line 6)" in message
    assert "empty question_id (1 row(s)): line 7" in message
    assert "text a database cannot store (1 row(s))" in message and "(line 8," in message
    assert not AIModel.objects.exists() and not Prediction.objects.exists()


def test_the_preview_lists_every_problem_and_the_rows_no_letter_was_found_in(client, study, pi):
    client.force_login(pi)
    data = {"model": "M", "file": SimpleUploadedFile("p.csv", _four_kinds(study))}
    html = client.post(reverse("study-predictions", args=[study.slug]), data).content.decode()
    problems = re.search(r"data-upload-problems.*?</div>", html, flags=re.S).group(0)
    assert len(re.findall("<li>", problems)) == 4
    assert 'name="token"' not in html  # cannot be confirmed
    failed = re.search(r"data-failed-rows.*?</details>", html, flags=re.S).group(0)
    b, c = _ids(study)[1:3]
    assert "line 3" in failed and b in failed and "“E”" in failed
    assert "line 4" in failed and c in failed and "empty" in failed


@pytest.fixture
def creator(client):
    user = UserFactory(username="creator")
    user.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(user)
    return user


def test_a_new_model_is_uploaded_into_a_dataset_and_offered_for_a_new_studys_aid(client, creator):
    source = build_study(4)  # a study of the dataset, whose PI creator is not
    dataset = source.dataset
    other = build_study(2)
    page = client.get(reverse("dataset-predictions") + f"?dataset={dataset.pk}").content.decode()
    assert f'<option value="{dataset.pk}" selected>' in page
    ids = [q.source_id for q in dataset.questions.all()]
    content = ("question_id,prediction\n" + "".join(f"{q},C\n" for q in ids)).encode()
    upload = {
        "dataset": dataset.pk,
        "model": "NewAid",
        "file": SimpleUploadedFile("p.csv", content),
    }
    html = client.post(reverse("dataset-predictions"), upload).content.decode()
    # The questions are in a study creator does not lead: refused, nothing written.
    assert "Only a PI of every study that shows a model" in html and not AIModel.objects.exists()

    fresh = build_study(3).dataset
    fresh.studies.all().delete()  # a dataset no study shows yet
    ids = [q.source_id for q in fresh.questions.all()]
    content = ("question_id,prediction\n" + "".join(f"{q},C\n" for q in ids)).encode()
    upload = {"dataset": fresh.pk, "model": "NewAid", "file": SimpleUploadedFile("p.csv", content)}
    html = client.post(reverse("dataset-predictions"), upload).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', html).group(1)
    # A dataset's preview is not confirmed through a study.
    refused = client.post(reverse("study-predictions-confirm", args=[other.slug]), {"token": token})
    assert refused.status_code in (400, 404) and not AIModel.objects.exists()
    response = client.post(reverse("dataset-predictions-confirm"), {"token": token})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("study-create") + f"?dataset={fresh.pk}")
    assert AIModel.objects.get(dataset=fresh, name="NewAid").predictions.count() == len(ids)
    assert not AuditEvent.objects.filter(action__startswith="predictions").exists()  # no study
    form = client.get(response["Location"]).content.decode()
    assert '<option value="NewAid" selected>' in form
    assert '<option value="unaided,aided" selected>' in form
    assert "Imported 3 predictions of “NewAid”" in form


def test_only_those_who_may_create_studies_upload_into_a_dataset(client, study, pi):
    client.force_login(pi)  # a PI of a study, without the permission to create studies
    assert client.get(reverse("dataset-predictions")).status_code == 403
    assert client.post(reverse("dataset-predictions-confirm"), {"token": "x"}).status_code == 403
    client.logout()
    response = client.get(reverse("dataset-predictions"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
