"""Confidence with every answer: the study's scale decides whether it is asked, and the answer
service refuses, in words, a rating that is missing, off the scale or not asked for; the page
and the API report it as that field's error."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Answer, AnswerRevision
from annotation.services import AnswerConflict, InvalidAnswerValue, answer_submit
from readerstudy.vocabulary import CONFIDENCE_SCALES, ConfidenceScale

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(study):
    return study.items.order_by("position").first()


def rated(study, scale: str):
    study.confidence_scale = scale
    study.save(update_fields=["confidence_scale"])
    return study


def test_a_study_asks_for_no_confidence_by_default_and_refuses_one(item, reader):
    assert item.study.confidence_scale == ConfidenceScale.NONE and item.study.scale is None
    answer_submit(reader=reader, item=item, choice="A")
    assert Answer.objects.get().confidence is None
    with pytest.raises(InvalidAnswerValue, match="asks for no confidence rating") as refused:
        answer_submit(reader=reader, item=item, choice="A", confidence=3)
    assert refused.value.field == "confidence"
    assert Answer.objects.get().confidence is None


@pytest.mark.parametrize(
    ("scale", "good", "bad"),
    [
        (ConfidenceScale.FIVE, [1, "5", " 3 "], [0, 6, "4.5", "sure", -1, 10**9]),
        (ConfidenceScale.PERCENT, [0, "100", 37], [101, -1, "50%", "1e2"]),
    ],
)
def test_the_rating_is_checked_against_the_studys_scale(item, reader, scale, good, bad):
    rated(item.study, scale)
    points = CONFIDENCE_SCALES[scale]
    words = f"whole number from {points.lowest} to {points.highest}"
    for value in bad:
        with pytest.raises(InvalidAnswerValue, match=words):
            answer_submit(reader=reader, item=item, choice="B", confidence=value)
    assert not Answer.objects.exists()
    for value in good:
        answer_submit(reader=reader, item=item, choice="B", confidence=value)
        assert Answer.objects.get().confidence == int(str(value).strip())


def test_the_rating_is_required_when_the_study_has_a_scale(item, reader):
    rated(item.study, ConfidenceScale.FIVE)
    for missing in (None, ""):
        with pytest.raises(InvalidAnswerValue, match="from 1 to 5"):
            answer_submit(reader=reader, item=item, choice="B", confidence=missing)
    assert not Answer.objects.exists()


def test_a_changed_rating_is_a_revision_and_a_repeat_is_not(item, reader):
    rated(item.study, ConfidenceScale.FIVE)
    answer_submit(reader=reader, item=item, choice="B", confidence=2)
    assert not answer_submit(reader=reader, item=item, choice="B", confidence="2").revised
    outcome = answer_submit(reader=reader, item=item, choice="B", confidence=5)
    assert outcome.revised
    revision = AnswerRevision.objects.get()
    assert (revision.old["confidence"], revision.new["confidence"]) == (2, 5)


def test_a_rating_changed_elsewhere_is_a_conflict_not_overwritten(item, reader):
    rated(item.study, ConfidenceScale.PERCENT)
    answer_submit(reader=reader, item=item, choice="B", confidence=40)
    # This page showed the answer as saved with 40; meanwhile another tab saved 90.
    answer_submit(reader=reader, item=item, choice="B", confidence=90)
    with pytest.raises(AnswerConflict) as conflict:
        answer_submit(
            reader=reader,
            item=item,
            choice="B",
            confidence=10,
            base={"choice": "B", "confidence": "40"},
        )
    assert conflict.value.saved["confidence"] == "90"
    assert Answer.objects.get().confidence == 90


def test_the_page_reports_a_bad_rating_as_a_form_error(reader_client, study):
    rated(study, ConfidenceScale.FIVE)
    url = reverse("reader-answer", kwargs={"slug": study.slug, "number": 1})
    page = reader_client.post(url, {"choice": "A", "confidence": "7"})
    assert page.status_code == 422 and "from 1 to 5" in page.content.decode()
    script = reader_client.post(
        url, {"choice": "A", "confidence": ""}, HTTP_ACCEPT="application/json"
    )
    assert script.status_code == 422
    assert script.json() == {
        "error": "Rate your confidence with a whole number from 1 to 5.",
        "field": "confidence",
    }
    assert not Answer.objects.exists()
    saved = reader_client.post(
        url, {"choice": "A", "confidence": "4"}, HTTP_ACCEPT="application/json"
    )
    assert saved.status_code == 200 and saved.json()["answer"]["confidence"] == 4


def test_the_api_takes_the_rating_and_refuses_one_off_the_scale_as_a_field_error(study, reader):
    rated(study, ConfidenceScale.PERCENT)
    client = APIClient()
    client.force_authenticate(reader)
    url = f"/api/v1/studies/{study.slug}/cases/1/answer/"
    refused = client.put(url, {"choice": "A", "confidence": 140}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {
        "confidence": ["Rate your confidence with a whole number from 0 to 100."]
    }
    saved = client.put(url, {"choice": "A", "confidence": 85}, format="json")
    assert saved.status_code == 201 and saved.json()["confidence"] == 85
    case = client.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    assert case["answer"]["confidence"] == 85


def test_roc_ratings_order_answer_and_confidence_as_rating_studies_do():
    five = CONFIDENCE_SCALES[ConfidenceScale.FIVE]
    absent = [five.roc_rating(present=False, confidence=c) for c in (5, 4, 3, 2, 1)]
    present = [five.roc_rating(present=True, confidence=c) for c in (1, 2, 3, 4, 5)]
    assert absent + present == [float(r) for r in range(1, 11)]
    percent = CONFIDENCE_SCALES[ConfidenceScale.PERCENT]
    assert percent.roc_rating(present=True, confidence=80) == 80.0
    assert percent.roc_rating(present=False, confidence=80) == 20.0
