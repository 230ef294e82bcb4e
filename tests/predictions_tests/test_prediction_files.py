"""Hostile prediction files answer 400 with the reason and import nothing (they were 500s).

Found by the red team: a CSV field over 128 KiB, JSON nested 100k deep, an integer of more than
4300 digits, and a NUL byte (PostgreSQL cannot store it) each failed the upload with a 500.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from readerstudy.predictions.models import AIModel, Prediction

pytestmark = pytest.mark.django_db


def post(user, study, body: bytes, name="p.csv"):
    client = APIClient()
    client.force_authenticate(user)
    return client.post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "m", "file": SimpleUploadedFile(name, body)},
        format="multipart",
    )


def qid(study):
    return study.items.order_by("position").first().question.source_id


HOSTILE = {
    "csv field over 128 KiB": (
        lambda q: f'question_id,prediction\n{q},"{"x" * 140_000}"\n'.encode(),
        "line 2: not valid CSV",
    ),
    "csv header over 128 KiB": (
        lambda q: f'"{"h" * 140_000}",prediction\n{q},A\n'.encode(),
        "line 1: not valid CSV",
    ),
    "json nested 100k deep": (
        lambda q: ("{" + f'"{q}": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),
        "nested too deeply",
    ),
    "nul byte in csv": (lambda q: f"question_id,prediction\n{q},A\x00B\n".encode(), "NUL"),
    "nul escape in json": (
        lambda q: json.dumps({q: {"model_prediction": "A\x00"}}).encode(),
        "NUL",
    ),
    "lone surrogate in json": (
        lambda q: ('{"' + q + '": {"model_prediction": "\\ud800"}}').encode(),
        "surrogate",
    ),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_files_are_refused_with_the_reason(study, pi, case):
    make, reason = HOSTILE[case]
    response = post(pi, study, make(qid(study)))
    assert response.status_code == 400, response.content[:300]
    detail = response.json()["detail"]
    assert detail.startswith("Nothing was imported.") and reason in detail
    assert not AIModel.objects.exists() and not Prediction.objects.exists()


def test_numbers_in_json_are_kept_as_written(study, pi):
    """A 5000-digit integer and 1e999 used to fail the conversion; a prediction is text."""
    items = list(study.items.order_by("position"))
    big = "9" * 5000
    text = (
        f'{{"{items[0].question.source_id}": {{"model_prediction": {big}}}, '
        f'"{items[1].question.source_id}": {{"model_prediction": 2, "model_response": 1e999}}, '
        f'"{items[2].question.source_id}": {{"model_response": NaN}}}}'
    )
    response = post(pi, study, text.encode(), name="p.json")
    assert response.status_code == 201, response.content[:300]
    raw = dict(Prediction.objects.values_list("question__source_id", "raw_response"))
    assert raw[items[0].question.source_id] == big
    assert raw[items[1].question.source_id] == "1e999"
    assert raw[items[2].question.source_id] == "NaN"
    assert response.json()["failed_extractions"] == 3
