"""Simulated readers for the demo, so the PI's analysis and the expert queue have data.

reader1 is left for a person to try; reader2 finishes the study, reader3 leaves a few
cases open (missing answers). Both flag the extremity radiograph as not fitting.
"""

from __future__ import annotations

import random

from annotation.models import Answer
from annotation.services import answer_submit, reader_finish
from readerstudy.models import ReaderStudy

MISMATCH_COMMENT = (
    "This is a lower-leg radiograph, not a chest X-ray: the question cannot be answered."
)


def simulate_readers(study: ReaderStudy, readers: dict) -> int:
    """Answer the demo study as reader2 (finishes) and reader3 (leaves 4 open). Idempotent."""
    created = 0
    plans = [(readers["reader2"], 0.85, 0, True), (readers["reader3"], 0.7, 4, False)]
    items = list(study.items.select_related("question__case").order_by("position"))
    for user, skill, leave_open, finish in plans:
        if Answer.objects.filter(item__study=study, reader=user).exists():
            continue
        rng = random.Random(f"demo:{user.username}")
        for item in items[: len(items) - leave_open]:
            question = item.question
            mismatch = question.case.study_id == "demo-mismatch"
            right = rng.random() < skill and not mismatch
            choice = question.correct if right else rng.choice("ABCD")
            answer_submit(
                reader=user,
                item=item,
                choice=choice,
                difficulty="hard" if mismatch else rng.choice(["easy", "easy", "medium", "hard"]),
                alignment="no" if mismatch else rng.choice(["yes", "yes", "yes", "partly"]),
                comment=MISMATCH_COMMENT if mismatch else "",
                time_ms=rng.randint(8_000, 60_000),
            )
            created += 1
        if finish:
            reader_finish(reader=user, study=study)
    return created
