"""The issue's acceptance on the demo: expert1 proposes "wrong key, B" on the mis-keyed
question, pi1 accepts, and every rater's accuracy changes exactly as a count of the answers
to that question says (+1 for a B, −1 for the old key A, 0 otherwise), readers and models."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from annotation.corrections import correction_decide
from annotation.sessions import counted_answers
from readerstudy.demo import MISKEYED, MISKEYED_RIGHT
from readerstudy.predictions.models import Prediction
from tests.corrections_tests.conftest import propose, review

pytestmark = pytest.mark.django_db


def test_the_demo_mis_keyed_question_rescores_every_rater_as_the_answers_say(demo):
    users = get_user_model().objects.in_bulk(["expert1", "pi1"], field_name="username")
    item = demo.items.get(question__source_id=MISKEYED)
    before = StudyAnalysis(demo, AnalysisSettings()).result
    old_key = item.question.correct
    assert old_key != MISKEYED_RIGHT
    correction = propose(users["expert1"], item, correct=MISKEYED_RIGHT)
    review(users["pi1"], item)  # pi1 is an expert of the demo too: proposals follow a review
    correction_decide(pi=users["pi1"], correction=correction, accept=True)
    after = StudyAnalysis(demo, AnalysisSettings()).result
    # The count, from the rows: each reader's answer and each model's prediction on it.
    change: dict[str, int] = {}
    for username, choice in (
        counted_answers(demo)
        .filter(item=item, practice=False)
        .values_list("reader__username", "choice")
    ):
        change[username] = (choice == MISKEYED_RIGHT) - (choice == old_key)
    for model, letter in Prediction.objects.filter(question=item.question).values_list(
        "model__name", "letter"
    ):
        change[model] = (letter == MISKEYED_RIGHT) - (letter == old_key)
    assert sum(1 for v in change.values() if v == 1) >= 5  # the readers and models choosing B

    def counts(result) -> dict[str, tuple[int, int]]:
        names = dict(zip(result.raters["rater"], result.raters["username"], strict=True))
        every = result.accuracy[result.accuracy["task"] == "All"]
        return {
            names[r] or r: (int(c), int(n))
            for r, c, n in zip(every["rater"], every["correct"], every["n"], strict=True)
        }

    old, new = counts(before), counts(after)
    assert set(old) == set(new) and set(change) <= set(new)
    for rater, (correct, n) in new.items():
        assert n == old[rater][1], rater
        assert correct - old[rater][0] == change.get(rater, 0), rater
    assert after.key_version.startswith("keys as adjudicated on")
    assert "1 question re-keyed" in after.key_version
