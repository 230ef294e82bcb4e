"""A study's confidence scale is part of its design: chosen on the new-study form, the design
page and `create_study`, said in the design sentence, and fixed once anyone has answered."""

import io
import re
from io import StringIO

import pandas as pd
import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.urls import reverse

from analysis.design_frame import design_frame
from annotation.models import Answer
from annotation.selectors import item_at
from annotation.services import AnswerConflict, InvalidAnswerValue, answer_submit
from annotation.sessions import reading_of
from readerstudy.design.rules import Design, DesignError
from readerstudy.design.services import study_design_set
from readerstudy.models import Image, ReaderStudy, Role
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def pi_client(client, design_study):
    user = UserFactory(username="boss")
    MembershipFactory(study=design_study, user=user, role=Role.PI)
    client.force_login(user)
    return client


def scale_of(study) -> str:
    return ReaderStudy.objects.get(pk=study.pk).confidence_scale


def test_the_design_page_sets_the_scale_and_the_sentence_says_it(pi_client, design_study):
    url = reverse("pi-design", args=[design_study.slug])
    html = pi_client.get(url).content.decode()
    assert 'name="confidence_scale"' in html and '<option value="none" selected>' in html
    form = {"arms": "unaided", "groups": "0", "anchor": "0", "washout_days": "0"}
    page = pi_client.post(url, {**form, "confidence_scale": "1-5"}, follow=True)
    assert "confidence rated 1-5 with each answer" in page.content.decode()
    assert scale_of(design_study) == "1-5"
    refused = pi_client.post(url, {**form, "confidence_scale": "1-10"}).content.decode()
    assert "Select a valid choice" in refused and scale_of(design_study) == "1-5"


def test_the_scale_is_fixed_once_anyone_answered(design_study):
    reader = add_readers(design_study, 1)[0]
    study_design_set(study=design_study, design=Design(confidence_scale="0-100"))
    item = design_study.items.order_by("position").first()
    answer_submit(reader=reader, item=item, choice="A", confidence=60)
    with pytest.raises(DesignError, match="cannot change"):
        study_design_set(study=design_study, design=Design(confidence_scale="none"))
    assert scale_of(design_study) == "0-100"


def test_a_page_made_before_the_scale_was_set_keeps_its_cases_but_must_give_a_rating(
    design_study,
):
    """The scale moves no case and no letter: a page shown before it keeps its layout, and
    its answer without a rating is refused in words (the draft stays to be rated)."""
    reader = add_readers(design_study, 1)[0]
    item = design_study.items.order_by("position").first()
    before = reading_of(design_study, reader).layout
    study_design_set(study=design_study, design=Design(confidence_scale="1-5"))
    assert reading_of(design_study, reader).layout == before
    with pytest.raises(InvalidAnswerValue, match="from 1 to 5"):
        answer_submit(reader=reader, item=item, choice="A", layout=before)
    answer_submit(reader=reader, item=item, choice="A", confidence=3, layout=before)


def test_create_study_takes_the_scale(db):
    source = build_study(4)
    Image.objects.filter(case__dataset=source.dataset).delete()  # nothing to derive here
    out = StringIO()
    call_command(
        "create_study",
        "rated",
        "--dataset",
        source.dataset.name,
        "--sample",
        "4",
        "--confidence-scale",
        "0-100",
        stdout=out,
    )
    assert "confidence rated 0-100 with each answer" in out.getvalue()
    assert ReaderStudy.objects.get(slug="rated").confidence_scale == "0-100"


def test_the_new_study_form_offers_the_scale(client, db):
    user = UserFactory(username="creator")
    user.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(user)
    html = client.get(reverse("study-create")).content.decode()
    assert 'name="confidence_scale"' in html and "Confidence with every answer" in html


def test_a_second_read_keeps_the_first_answers_confidence_beside_the_final_one(db, set_design):
    study = build_study(3)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", aid_mode="second-read", confidence_scale="1-5"))
    item = item_at(study, reader, 1)
    answer_submit(reader=reader, item=item, choice="A", confidence=2)  # before the AI
    answer_submit(reader=reader, item=item, choice="D", confidence=5)  # after it
    stored = Answer.objects.get(item=item, reader=reader)
    assert (stored.first_choice, stored.first_confidence) == ("A", 2)
    assert (stored.choice, stored.confidence) == ("D", 5)
    row = design_frame(study).query("question_id == @item.question.source_id").iloc[0]
    assert (row["first_answer"], row["first_confidence"]) == ("A", 2)
    assert (row["answer"], row["confidence"]) == ("D", 5)


def test_a_second_reads_first_confidence_sent_again_changed_is_refused_not_dropped(db, set_design):
    """A second tab (or a replayed outbox entry) that never showed the AI sends the first
    answer again with another confidence: the first answer is fixed, so this is refused in
    words, as a changed first choice is; it is never silently kept as it was."""
    study = build_study(3)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", aid_mode="second-read", confidence_scale="1-5"))
    item = item_at(study, reader, 1)
    answer_submit(reader=reader, item=item, choice="A", confidence=2)
    same = answer_submit(reader=reader, item=item, choice="A", confidence=2, stage="first")
    assert not same.revised and same.stage == "first"
    with pytest.raises(AnswerConflict, match=r"first answer to this case, A \(confidence 2\)"):
        answer_submit(reader=reader, item=item, choice="A", confidence=5, stage="first")
    stored = Answer.objects.get(item=item, reader=reader)
    assert (stored.first_choice, stored.first_confidence, stored.choice) == ("A", 2, "")


def test_a_rating_from_a_page_made_under_another_scale_is_refused_not_reread(client, design_study):
    """Before anyone answered, the PI moves the scale from 1-5 to 0-100 while a reader has the
    case open: the page's "4" (Confident) would be stored as 4 % on the new scale. The page
    says the scale it asked on; an answer from another scale's page is refused in words (the
    outbox keeps it as a draft), and the reloaded page rates on the new scale."""
    reader = add_readers(design_study, 1)[0]
    study_design_set(study=design_study, design=Design(confidence_scale="1-5"))
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[design_study.slug, 1])).content.decode()
    action = re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1)
    action = action.replace("&amp;", "&")
    assert "scale=1-5" in action
    study_design_set(study=design_study, design=Design(confidence_scale="0-100"))
    refused = client.post(
        action, {"choice": "A", "confidence": "4"}, HTTP_ACCEPT="application/json"
    )
    assert refused.status_code == 409
    assert "asked for your confidence on the 1–5 scale" in refused.json()["error"]
    assert "now asks it on the 0–100 scale" in refused.json()["error"]
    assert not Answer.objects.exists()
    page = client.get(reverse("reader-case", args=[design_study.slug, 1])).content.decode()
    action = re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1)
    saved = client.post(
        action.replace("&amp;", "&"),
        {"choice": "A", "confidence": "80"},
        HTTP_ACCEPT="application/json",
    )
    assert saved.status_code == 200 and Answer.objects.get().confidence == 80


def test_a_page_that_asked_a_rating_is_refused_once_the_study_asks_none(client, design_study):
    reader = add_readers(design_study, 1)[0]
    study_design_set(study=design_study, design=Design(confidence_scale="0-100"))
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[design_study.slug, 1])).content.decode()
    action = re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1)
    study_design_set(study=design_study, design=Design(confidence_scale="none"))
    refused = client.post(
        action.replace("&amp;", "&"),
        {"choice": "A", "confidence": "70"},
        HTTP_ACCEPT="application/json",
    )
    assert (
        refused.status_code == 409
        and "now asks for no confidence rating" in (refused.json()["error"])
    )
    assert not Answer.objects.exists()


def test_a_fine_scales_rating_on_a_page_now_of_five_points_is_refused_as_a_scale_change(
    client, design_study
):
    reader = add_readers(design_study, 1)[0]
    study_design_set(study=design_study, design=Design(confidence_scale="0-100"))
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[design_study.slug, 1])).content.decode()
    action = re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1)
    study_design_set(study=design_study, design=Design(confidence_scale="1-5"))
    refused = client.post(action.replace("&amp;", "&"), {"choice": "A", "confidence": "80"})
    assert refused.status_code == 409
    assert "asked for your confidence on the 0–100 scale" in refused.content.decode()
    assert not Answer.objects.exists()


def test_a_second_read_shows_the_reader_their_first_rating_beside_their_first_answer(
    db, client, set_design
):
    """Between the two answers of a second read the reader sees what they answered before the
    AI, and how sure they were, on the page and in the API."""
    from rest_framework.test import APIClient

    study = build_study(3)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", aid_mode="second-read", confidence_scale="1-5"))
    item = item_at(study, reader, 1)
    answer_submit(reader=reader, item=item, choice="A", confidence=2)  # before the AI
    client.force_login(reader)
    html = client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    said = re.search(r'<p class="first-answer"[^>]*>(.*?)</p>', html, re.S).group(1)
    assert "Confidence: <strong>2</strong>" in said
    api = APIClient()
    api.force_authenticate(reader)
    case = api.get(f"/api/v1/studies/{study.slug}/cases/1/").json()
    assert case["first_confidence"] == 2


def test_every_export_of_a_second_read_has_the_first_answers_confidence(db, client, set_design):
    """responses.csv (as the feedback CSV) gives a second read's first rating beside its first
    answer: without it the unaided reading of a second read cannot be re-analysed."""
    study = build_study(3)
    add_model(study)
    reader = add_readers(study, 1)[0]
    pi = UserFactory(username="boss")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    set_design(study, crossover(arms="aided", aid_mode="second-read", confidence_scale="1-5"))
    item = item_at(study, reader, 1)
    answer_submit(reader=reader, item=item, choice="A", confidence=2)  # before the AI
    answer_submit(reader=reader, item=item, choice="D", confidence=5)  # after it
    client.force_login(pi)
    url = reverse("analysis-table", args=[study.slug, "responses", "csv"])
    responses = pd.read_csv(io.StringIO(client.get(url).content.decode()))
    row = responses[responses["rater"] == "Reader 1"].dropna(subset=["answer"]).iloc[0]
    assert (row["first_answer"], row["first_confidence"]) == ("A", 2)
    assert (row["answer"], row["confidence"]) == ("D", 5)
    feedback = client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
    row = pd.read_csv(io.StringIO(feedback)).iloc[0]
    assert (row["first_choice"], row["first_confidence"]) == ("A", 2)
