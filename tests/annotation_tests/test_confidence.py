"""Confidence with every answer: the study's scale decides whether it is asked, and the answer
service refuses, in words, a rating that is missing, off the scale or not asked for; the page
and the API report it as that field's error."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Answer, AnswerRevision
from annotation.selectors import ordered_item_ids
from annotation.services import AnswerConflict, InvalidAnswerValue, answer_submit, reader_finish
from readerstudy.vocabulary import (
    CONFIDENCE_SCALES,
    PAGE_SHORTCUTS,
    ConfidenceScale,
    answer_shortcuts,
)

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
    assert refused.json() == {  # the API's one shape of a refused input (api_errors)
        "detail": "Invalid input.",
        "errors": {"confidence": ["Rate your confidence with a whole number from 0 to 100."]},
    }
    not_a_number = client.put(url, {"choice": "A", "confidence": "high"}, format="json")
    assert not_a_number.status_code == 400 and set(not_a_number.json()["errors"]) == {"confidence"}
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


def case_html(client, study, number=1) -> str:
    return client.get(reverse("reader-case", args=[study.slug, number])).content.decode()


def test_a_study_without_a_scale_shows_no_confidence_and_keeps_digit_keys(reader_client, study):
    html = case_html(reader_client, study)
    assert 'name="confidence"' not in html and "How sure" not in html
    assert 'data-keys="1 a"' in html  # option A: 1 or a, as always


def test_a_five_point_scale_is_rated_with_the_digits_and_the_options_keep_their_letters(
    reader_client, study
):
    rated(study, ConfidenceScale.FIVE)
    html = case_html(reader_client, study)
    scale = CONFIDENCE_SCALES[ConfidenceScale.FIVE]
    assert scale.prompt in html
    assert 'data-required="Rate your confidence with a whole number from 1 to 5."' in html
    for point in scale.points:
        assert re.search(
            rf'<input type="radio" name="confidence" value="{point}"[^>]*data-keys="{point}"', html
        ), point
        assert f"{point} {scale.labels[point]}" in html
    assert 'data-keys="a"' in html and 'data-keys="1 a"' not in html
    help_html = html[html.index('id="help"') :]
    assert "the digits rate your confidence" in help_html


def test_a_fine_scale_is_a_number_box_reached_by_its_key_with_a_slider(reader_client, study):
    rated(study, ConfidenceScale.PERCENT)
    html = case_html(reader_client, study)
    key = PAGE_SHORTCUTS["confidence"]
    box = re.search(r'<input type="number" name="confidence"[^>]*>', html).group(0)
    assert 'min="0"' in box and 'max="100"' in box and f'data-keys="{key}"' in box
    assert 'data-mirror-of="confidence"' in html and "100: surely right" in html
    assert 'data-keys="1 a"' in html  # the digits stay the options' keys
    help_html = html[html.index('id="help"') :]
    assert f"<kbd>{key.upper()}</kbd></td><td>How likely is your answer right" in help_html


def test_the_saved_rating_is_shown_again_and_on_a_locked_case(reader_client, study, reader):
    rated(study, ConfidenceScale.PERCENT)
    item = study.items.order_by("position").first()
    number = ordered_item_ids(study, reader).index(item.id) + 1
    answer_submit(reader=reader, item=item, choice="A", confidence=73)
    assert re.search(r'name="confidence" value="73"', case_html(reader_client, study, number))
    reader_finish(reader=reader, study=study)
    assert "Confidence: <strong>73 %</strong>" in case_html(reader_client, study, number)


def test_the_list_of_cases_shows_each_answer_with_its_rating(reader_client, study, reader):
    rated(study, ConfidenceScale.FIVE)
    item = study.items.order_by("position").first()
    number = ordered_item_ids(study, reader).index(item.id) + 1
    answer_submit(reader=reader, item=item, choice="A", confidence=4)
    html = reader_client.get(reverse("reader-review", args=[study.slug])).content.decode()
    row = re.search(rf'<li class="answered" data-case="{number}".*?</li>', html, re.S).group(0)
    assert re.search(r"A <span[^>]*>· 4</span>", row)


def test_a_locked_case_names_a_five_point_rating_as_confidence(reader_client, study, reader):
    rated(study, ConfidenceScale.FIVE)
    item = study.items.order_by("position").first()
    number = ordered_item_ids(study, reader).index(item.id) + 1
    answer_submit(reader=reader, item=item, choice="A", confidence=2)
    reader_finish(reader=reader, study=study)
    html = case_html(reader_client, study, number)
    assert "Confidence: <strong>2 Unsure</strong>" in html and "?:" not in html


def test_the_instructions_say_how_to_rate(reader_client, study):
    rated(study, ConfidenceScale.FIVE)
    html = reader_client.get(reverse("reader-instructions", args=[study.slug])).content.decode()
    assert "say how sure you are" in html and "1 guessing, 2 unsure" in html


def test_the_api_describes_the_scale_where_a_study_has_one(study, reader):
    client = APIClient()
    client.force_authenticate(reader)
    case = client.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    assert "confidence" not in case  # a study without a scale: its cases as they always were
    [row] = client.get("/api/v1/studies/").json()["results"]
    assert row["confidence"] is None
    rated(study, ConfidenceScale.FIVE)
    case = client.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    assert case["confidence"]["scale"] == "1-5" and case["confidence"]["labels"]["5"] == "Certain"
    [row] = client.get("/api/v1/studies/").json()["results"]
    assert (row["confidence"]["lowest"], row["confidence"]["highest"]) == (1, 5)


@pytest.mark.parametrize("scale", ConfidenceScale.values)
def test_no_answer_key_does_two_things_under_any_scale(scale):
    keys = [k for values in answer_shortcuts(scale).values() for ks in values.values() for k in ks]
    keys += PAGE_SHORTCUTS.values()
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


@pytest.mark.parametrize("sent", ["3.5", "true", '"three"', "[3]", '{"c": 3}', '"٣"'])
@pytest.mark.parametrize(
    ("scale", "words"),
    [
        (ConfidenceScale.FIVE, "Rate your confidence with a whole number from 1 to 5."),
        (ConfidenceScale.NONE, "This study asks for no confidence rating."),
    ],
)
def test_the_api_refuses_any_value_that_is_not_a_point_in_the_scales_words(
    study, reader, scale, words, sent
):
    """A fraction, a boolean, text or a list is refused as an off-scale number is: the one
    rule's words, in the documented shape, the reader's other fields not stored half."""
    rated(study, scale)
    client = APIClient()
    client.force_authenticate(reader)
    url = f"/api/v1/studies/{study.slug}/cases/1/answer/"
    body = f'{{"choice": "A", "comment": "kept", "confidence": {sent}}}'
    refused = client.put(url, body, content_type="application/json")
    assert refused.status_code == 400
    assert refused.json() == {"detail": "Invalid input.", "errors": {"confidence": [words]}}
    assert not Answer.objects.exists()


def test_an_api_rating_given_on_a_scale_the_study_no_longer_has_is_refused(study, reader):
    """An API client that read the case's scale (1-5) before the PI moved it to 0-100 says so
    with `scale`: its 4 is refused (409), not stored as 4 %."""
    rated(study, ConfidenceScale.FIVE)
    client = APIClient()
    client.force_authenticate(reader)
    shown = client.get(f"/api/v1/studies/{study.slug}/cases/1/").json()["confidence"]["scale"]
    rated(study, ConfidenceScale.PERCENT)
    url = f"/api/v1/studies/{study.slug}/cases/1/answer/"
    refused = client.put(url, {"choice": "A", "confidence": 4, "scale": shown}, format="json")
    assert refused.status_code == 409
    assert "on the 1–5 scale" in refused.json()["detail"]
    assert not Answer.objects.exists()
    saved = client.put(url, {"choice": "A", "confidence": 40, "scale": "0-100"}, format="json")
    assert saved.status_code == 201
