"""The reader panel's interval stays inside 0-100% on the page, in reader_panel.csv and in the
API (a logit-transformed OR/Hillis interval, said so), with the untransformed figures kept
beside it; an interval of a difference that passes -1 or 1 is said to be uninformative."""

from __future__ import annotations

import io
import math
import re
from html import unescape

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from django.urls import reverse

from analysis.stats import difference_note, logit_interval, panel_accuracy
from annotation.services import answer_submit
from tests.analysis_tests.conftest import readers
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


def _wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4]


@pytest.fixture
def two_close_readers(db):
    """Two readers of 12 questions (each on its own X-ray): one right on all, one on 8, so
    with 1 df the random-readers interval of the mean, 83.3%, runs past 100%."""
    study = build_study(12)
    first, second = readers(study, 2)
    for item in study.items.select_related("question").order_by("position"):
        right = item.question.correct
        answer_submit(reader=first, item=item, choice=right)
        answer_submit(
            reader=second, item=item, choice=right if item.position % 3 else _wrong(right)
        )
    pi = UserFactory(username="the-pi")
    MembershipFactory(study=study, user=pi, role="pi")
    return study, pi


def test_the_panel_interval_cannot_leave_0_to_100_percent(client, two_close_readers):
    study, pi = two_close_readers
    # Independently: reader accuracies 12/12 and 8/12, each question its own X-ray.
    scores = np.array([[1] * 12, [0 if i % 3 == 0 else 1 for i in range(12)]], dtype=float)
    plain = panel_accuracy(scores)
    mean = (12 / 12 + 8 / 12) / 2
    assert plain.mean == pytest.approx(mean)
    assert plain.ci_high > 1  # the defect: the untransformed interval reaches past 100%
    # The logit interval from the same SE and df (published delta-method formula).
    t = sps.t.ppf(0.975, plain.df)
    half = t * plain.se / (mean * (1 - mean))
    logit = math.log(mean / (1 - mean))
    low, high = (1 / (1 + math.exp(-(logit + s * half))) for s in (-1, 1))

    client.force_login(pi)
    panel = client.get(reverse("api-analysis", args=[study.slug])).json()["reader_panel"]
    assert panel["mean"] == pytest.approx(mean)
    assert (panel["ci_low"], panel["ci_high"]) == pytest.approx((low, high))
    assert 0 < panel["ci_low"] < panel["mean"] < panel["ci_high"] < 1
    assert 0 < panel["ci_low_fixed"] < panel["ci_high_fixed"] < 1
    assert panel["ci_high_untransformed"] == pytest.approx(plain.ci_high)
    assert "logit" in panel["ci_method"]

    csv = client.get(reverse("analysis-table", args=[study.slug, "reader_panel", "csv"]))
    row = pd.read_csv(io.BytesIO(csv.content)).iloc[0]
    assert row["ci_low"] >= 0 and row["ci_high"] <= 1
    assert row["ci_high_untransformed"] == pytest.approx(plain.ci_high)

    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    shown = html[html.index("data-reader-panel") :].split("</p>")[0]
    assert f"{low * 100:.1f}% – {high * 100:.1f}%" in shown
    assert "logit" in shown and "passes 0–100%" in shown and "not be informative" not in shown
    for number in (float(n) for n in re.findall(r"(\d+\.\d)%", shown)):
        assert number <= 100.0, shown


def test_logit_interval_is_inside_zero_and_one_and_undefined_at_the_edges():
    low, high = logit_interval(0.97, 0.05, 3.0)
    assert 0 < low < 0.97 < high < 1
    low, high = logit_interval(0.97, 0.2, 1.0)  # 1 df: as wide as it gets, still in range
    assert 0 <= low < 0.97 < high <= 1
    assert all(math.isnan(v) for v in logit_interval(1.0, 0.1, 3.0))
    assert all(math.isnan(v) for v in logit_interval(0.5, 0.0, 3.0))
    z = sps.norm.ppf(0.975)
    low, high = logit_interval(0.3, 0.05, float("inf"))
    centre, half = math.log(0.3 / 0.7), z * 0.05 / (0.3 * 0.7)
    assert low == pytest.approx(1 / (1 + math.exp(-(centre - half))))
    assert high == pytest.approx(1 / (1 + math.exp(-(centre + half))))


def test_a_difference_interval_past_one_is_said_to_be_uninformative():
    assert difference_note(-0.2, 0.4) == ""
    assert "uninformative" in difference_note(-1.3, 0.2)
    assert "uninformative" in difference_note(0.1, 1.01)


def test_a_paired_difference_past_one_says_so_in_its_note():
    """Two X-rays (t on 1 df): rater a right on all 4 questions, b wrong on the 3 of the
    first X-ray. The clustered interval of a - b = 0.75 passes 1, and the row says why."""
    from analysis import stats

    rows = [
        {"question_id": f"q{i}", "case_id": "x1" if i < 3 else "x2", "correct_answer": "A"}
        for i in range(4)
    ]
    frame = pd.DataFrame(
        [{**r, "rater": "a", "answer": "A", "task": "T"} for r in rows]
        + [
            {**r, "rater": "b", "answer": "B" if r["case_id"] == "x1" else "A", "task": "T"}
            for r in rows
        ]
    )
    (row,) = stats.mcnemar_pairs(frame, ["a", "b"]).to_dict("records")
    assert row["difference"] == pytest.approx(3 / 4)
    assert row["ci_high"] > 1 and "uninformative" in row["note"]
