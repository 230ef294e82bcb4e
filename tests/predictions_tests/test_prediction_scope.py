"""Predictions belong to the dataset, so an upload may change what several studies show: the
uploader must be a PI of every study that shows the model, and each such study gets an audit
event. Red-team finding: a PI of study B replaced study A's MedGemma (81.8% -> 13.6%) through
/api/v1/studies/B/predictions/, with no audit event."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from readerstudy.models import AuditEvent, Role
from readerstudy.predictions.models import Prediction
from readerstudy.predictions.services import predictions_import
from tests.factories import (
    MembershipFactory,
)

pytestmark = pytest.mark.django_db


def upload(user, study, model, letter, *, source_ids=None, replace=False):
    ids = source_ids or [i.question.source_id for i in study.items.all()]
    rows = "".join(f"{qid},{letter}\n" for qid in ids)
    client = APIClient()
    client.force_authenticate(user)
    return client.post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {
            "model": model,
            "file": SimpleUploadedFile("p.csv", f"question_id,prediction\n{rows}".encode()),
            "replace": replace,
        },
        format="multipart",
    )


def letters(model):
    return dict(
        Prediction.objects.filter(model__name=model).values_list("question__source_id", "letter")
    )


def test_a_pi_of_another_study_cannot_replace_what_study_a_shows(study, pi, study_b, pi_b):
    rows = "".join(f"{i.question.source_id},B\n" for i in study.items.all())
    predictions_import(  # as the demo's seed does: an operator's import
        dataset=study.dataset,
        model_name="MedGemma-demo",
        content=f"question_id,prediction\n{rows}".encode(),
    )
    before = letters("MedGemma-demo")
    response = upload(pi_b, study_b, "MedGemma-demo", "D", replace=True)
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "MedGemma-demo" in detail and "not a PI" in detail
    assert study.slug not in detail  # the other study is not named to an outsider
    assert letters("MedGemma-demo") == before


def test_a_new_model_on_shared_questions_needs_every_pi_too(study, pi, study_b, pi_b):
    shared = [i.question.source_id for i in study_b.items.all()]
    response = upload(pi_b, study_b, "new-model", "A", source_ids=shared)
    assert response.status_code == 403
    assert not Prediction.objects.exists()


def test_a_model_only_on_questions_of_my_study_is_mine_to_upload(study, pi, study_b, pi_b):
    response = upload(pi_b, study_b, "b-model", "A", source_ids=["b-only"])
    assert response.status_code == 201
    event = AuditEvent.objects.get(action="predictions.upload")
    assert event.study == study_b and event.actor == pi_b
    assert event.detail["model"] == "b-model" and event.detail["predictions"] == 1
    assert not AuditEvent.objects.filter(study=study, action__startswith="predictions").exists()


def test_a_pi_of_both_studies_may_replace_and_each_study_is_audited(study, pi, study_b, pi_b):
    response = upload(pi, study, "MedGemma-demo", "B")
    assert response.status_code == 403  # B shows two of these questions
    MembershipFactory(study=study_b, user=pi, role=Role.PI)
    assert upload(pi, study, "MedGemma-demo", "B").status_code == 201
    assert upload(pi, study_b, "MedGemma-demo", "D", replace=True).status_code == 201
    uploads = AuditEvent.objects.filter(action="predictions.upload")
    replaces = AuditEvent.objects.filter(action="predictions.replace")
    assert {e.study for e in uploads} == {study, study_b}
    assert {e.study for e in replaces} == {study, study_b}
    assert all(e.actor == pi for e in [*uploads, *replaces])
    assert replaces.get(study=study).detail["replaced"] == 4
    assert set(letters("MedGemma-demo").values()) == {"D"}


def test_the_command_line_import_is_audited_without_an_actor(study, tmp_path):
    from django.core.management import call_command

    path = tmp_path / "p.csv"
    rows = "".join(f"{i.question.source_id},A\n" for i in study.items.all())
    path.write_text(f"question_id,prediction\n{rows}")
    call_command(
        "import_predictions", str(path), "--dataset", study.dataset.name, "--model", "m", "--json"
    )
    event = AuditEvent.objects.get(action="predictions.upload")
    assert event.study == study and event.actor is None and event.detail["source"] == "p.csv"
