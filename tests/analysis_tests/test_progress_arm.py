"""A two-arm study's sitting on the progress pages and in the programme CSV says which
session its numbers count (the house rule: every output says the arm a number rests on). The
programme CSV of the demo gave reader5's crossover sitting with no arm, though its numbers are
the unaided session's only."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from analysis.demo import AIDED_SLUG
from annotation.models import Answer

pytestmark = pytest.mark.django_db


def test_the_programme_csv_and_page_say_the_arm_of_a_crossover_sitting(client, demo):
    client.force_login(get_user_model().objects.get(username="pi1"))
    body = client.get(reverse("programme-csv")).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    aided = [r for r in rows if r["study_slug"] == AIDED_SLUG and r["task"] == "All"]
    assert aided and {r["arm"] for r in aided} == {"unaided"}
    for row in aided:  # the numbers are the unaided session's, counted from the Answer rows
        unaided = Answer.objects.filter(
            item__study__slug=AIDED_SLUG, reader__username=row["resident"], arm="unaided"
        ).select_related("item__question")
        right = sum(a.choice == a.item.question.correct for a in unaided)
        assert (int(row["correct"]), int(row["n"])) == (right, unaided.count())
    one_arm = {r["arm"] for r in rows if r["study_slug"] != AIDED_SLUG}
    assert one_arm == {""}
    page = client.get(reverse("programme")).content.decode()
    assert "research study, unaided session" in page
