"""Confidence ratings reach what a PI downloads (the feedback CSV, the responses table as CSV
and XLSX, the admin), and nobody else: a reader never sees another reader's rating, and only a
PI sets the scale."""

import io
import re

import pandas as pd
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.selectors import study_responses
from annotation.models import AnswerRevision
from annotation.selectors import ordered_item_ids
from annotation.services import answer_submit
from readerstudy.models import ReaderStudy
from readerstudy.vocabulary import ConfidenceScale

pytestmark = pytest.mark.django_db
# A rating no page shows for anything else (not a case number, a count or a percentage here).
THEIRS = 87


@pytest.fixture
def rated_study(study, reader, other_reader):
    study.confidence_scale = ConfidenceScale.PERCENT
    study.save(update_fields=["confidence_scale"])
    items = list(study.items.order_by("position"))
    for n, item in enumerate(items):
        answer_submit(reader=reader, item=item, choice=item.question.correct, confidence=60 + n)
    answer_submit(reader=other_reader, item=items[0], choice="A", confidence=THEIRS)
    return study


def test_the_feedback_export_has_every_rating(client, rated_study, pi, reader):
    client.force_login(pi)
    csv = client.get(reverse("pi-feedback-csv", args=[rated_study.slug])).content.decode()
    frame = pd.read_csv(io.StringIO(csv))
    assert "confidence" in frame.columns
    mine = frame[frame["reader"] == reader.username].sort_values("confidence")
    assert mine["confidence"].tolist() == [60, 61, 62, 63]
    assert THEIRS in frame["confidence"].tolist()


def test_the_responses_table_carries_the_rating_as_csv_and_xlsx(client, rated_study, pi):
    frame = study_responses(rated_study)
    humans = frame[frame["rater_kind"] == "human"]
    assert sorted(humans["confidence"].dropna().astype(int)) == [60, 61, 62, 63, THEIRS]
    client.force_login(pi)
    url = reverse("analysis-table", args=[rated_study.slug, "responses", "csv"])
    csv = pd.read_csv(io.StringIO(client.get(url).content.decode()))
    assert sorted(csv["confidence"].dropna().astype(int)) == [60, 61, 62, 63, THEIRS]
    url = reverse("analysis-table", args=[rated_study.slug, "responses", "xlsx"])
    xlsx = pd.read_excel(io.BytesIO(client.get(url).content), sheet_name="responses")
    assert sorted(xlsx["confidence"].dropna().astype(int)) == [60, 61, 62, 63, THEIRS]


def test_a_study_without_a_scale_exports_an_empty_confidence_column(client, study, reader, pi):
    answer_submit(reader=reader, item=study.items.first(), choice="A")
    client.force_login(pi)
    csv = client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
    assert pd.read_csv(io.StringIO(csv))["confidence"].isna().all()


def test_a_changed_rating_is_in_the_answers_history_and_the_admin(
    admin_client, rated_study, reader
):
    item = rated_study.items.order_by("position").first()
    answer_submit(reader=reader, item=item, choice=item.question.correct, confidence=95)
    revision = AnswerRevision.objects.get()
    assert (revision.old["confidence"], revision.new["confidence"]) == (60, 95)
    listing = admin_client.get("/admin/annotation/answer/").content.decode()
    assert "column-confidence" in listing and ">95<" in listing
    page = admin_client.get(f"/admin/annotation/answer/{revision.answer_id}/change/")
    assert 'name="confidence" value="95"' in page.content.decode()


def test_a_reader_never_sees_another_readers_rating(client, rated_study, other_reader, reader):
    """The other reader rated the first question 87; the reader's own pages, API and review
    list hold only their own ratings."""
    item = rated_study.items.order_by("position").first()
    client.force_login(reader)
    pages = [
        client.get(reverse("reader-case", args=[rated_study.slug, n])).content.decode()
        for n in range(1, 5)
    ]
    pages.append(client.get(reverse("reader-review", args=[rated_study.slug])).content.decode())
    for html in pages:
        assert not re.search(rf'(value="|&quot;confidence&quot;: &quot;){THEIRS}\b', html)
    api = APIClient()
    api.force_authenticate(reader)
    cases = api.get(f"/api/v1/studies/{rated_study.slug}/cases/").json()["results"]
    assert sorted(c["answer"]["confidence"] for c in cases) == [60, 61, 62, 63]
    # The other reader's own case shows their rating: the page does hold ratings.
    client.force_login(other_reader)
    number = ordered_item_ids(rated_study, other_reader).index(item.id) + 1
    theirs = client.get(reverse("reader-case", args=[rated_study.slug, number])).content.decode()
    assert f'value="{THEIRS}"' in theirs


def test_only_a_pi_sets_the_scale(client, study, reader, expert, outsider):
    url = reverse("pi-design", args=[study.slug])
    form = {"arms": "unaided", "groups": "0", "anchor": "0", "confidence_scale": "1-5"}
    for user in (reader, expert, outsider):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.post(url, form).status_code == 404
    assert ReaderStudy.objects.get(pk=study.pk).confidence_scale == ConfidenceScale.NONE
