"""Simulated readers for the demo, so the PI's analysis and the expert queue have data.

reader1 is left for a person to try; reader2 finishes the study, reader3 leaves a few
cases open (missing answers). Both flag the extremity radiograph as not fitting, and both
answer the mis-keyed question (readerstudy.demo.MISKEYED) right, against its key.
"""

from __future__ import annotations

import random

from annotation.models import Answer
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.demo import MISKEYED, MISKEYED_RIGHT
from readerstudy.models import ReaderStudy
from readerstudy.vocabulary import LETTERS

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
        # The cases left open are the last ones, never the mis-keyed question.
        open_cases = [i for i in items if i.question.source_id != MISKEYED][-leave_open:]
        for item in [i for i in items if not leave_open or i not in open_cases]:
            question = item.question
            mismatch = question.case.study_id == "demo-mismatch"
            right = rng.random() < skill and not mismatch
            choice = question.correct if right else rng.choice(LETTERS)
            if question.source_id == MISKEYED:  # everyone knows better than its key
                choice = MISKEYED_RIGHT
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


def simulate_crossover(study: ReaderStudy, readers: list, ai_letters: dict[int, str]) -> int:
    """Read a crossover demo study in both sessions (washout 0) as each of `readers`: alone
    they are right about 65% of the time; aided they follow a usable AI answer 70% of the
    time. Idempotent: a reader who has answered is left as they are."""
    created = 0
    items = list(study.items.select_related("question").order_by("position"))
    for user in readers:
        if Answer.objects.filter(item__study=study, reader=user).exists():
            continue
        rng = random.Random(f"demo-aided:{user.username}")
        for _session in (1, 2):
            aided = reading_of(study, user).aided
            for item in items:
                correct = item.question.correct
                choice = correct if rng.random() < 0.65 else rng.choice(LETTERS)
                ai = ai_letters.get(item.id, "")
                if aided and ai and rng.random() < 0.7:
                    choice = ai
                answer_submit(
                    reader=user, item=item, choice=choice, time_ms=rng.randint(6_000, 40_000)
                )
                created += 1
            reader_finish(reader=user, study=study)
    return created


# A rating reader's binary answers: a latent "finding present" signal, the truth shifted by
# their d' plus unit noise; "Yes" when positive, and the further from 0 the surer (1-5).
SURE_AT = (0.3, 0.7, 1.2, 1.8)
RATED_SKILLS = (1.4, 2.0, 2.6)  # d' of the simulated readers, in order


def simulate_ratings(study: ReaderStudy, readers: list) -> int:
    """Read a rated demo study (a 5-point confidence scale, readerstudy.demo_roc) as each of
    `readers`, and finish: binary questions by signal detection with the reader's d' (so
    their ROC curves differ), multiple-choice ones right about 75% of the time and surer when
    right. Idempotent: a reader who has answered is left as they are."""
    from readerstudy.demo_roc import ABSENT_LETTER, PRESENT_LETTER

    scale = study.scale
    assert scale is not None and scale.ordinal, "a rated study has an ordinal scale"
    created = 0
    items = list(study.items.select_related("question").order_by("position"))
    for user, skill in zip(readers, RATED_SKILLS, strict=False):
        if Answer.objects.filter(item__study=study, reader=user).exists():
            continue
        rng = random.Random(f"demo-rated:{user.username}")
        for item in items:
            question = item.question
            if question.binary:
                truth = question.correct == question.present_option
                signal = (skill / 2 if truth else -skill / 2) + rng.gauss(0, 1)
                choice = PRESENT_LETTER if signal > 0 else ABSENT_LETTER
                confidence = scale.lowest + sum(abs(signal) > at for at in SURE_AT)
            else:
                right = rng.random() < 0.75
                choice = question.correct if right else rng.choice("ABCD")
                confidence = rng.choice([3, 4, 4, 5, 5] if right else [1, 2, 2, 3, 4])
            answer_submit(
                reader=user,
                item=item,
                choice=choice,
                confidence=confidence,
                time_ms=rng.randint(5_000, 30_000),
            )
            created += 1
        reader_finish(reader=user, study=study)
    return created


PRACTICE_SLUG = "demo-practice"
# Who practises in the demo: reader2 (finished the demo study) fresh, for a person to try;
# reader5 (finished the AI-assisted study) sat it a week ago, and their misses are due now.
# The demo study's other readers read its X-rays blind: a practice set of them is refused.
PRACTICE_READERS = ("reader2", "reader5")


def seed_practice(dataset, users: dict) -> tuple[ReaderStudy, int]:
    """The demo's practice set of 10 questions from the teaching file (pi1 its PI), read by
    PRACTICE_READERS; reader5's sitting simulated eight days ago with "practise my misses"
    (every week) made then, so it is offered now. Idempotent."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import ReaderCompletion
    from annotation.practice import practice_plan_create, practice_set_create
    from readerstudy.models import PracticePlan

    study = ReaderStudy.objects.filter(slug=PRACTICE_SLUG).first()
    if study is None:
        study = practice_set_create(
            slug=PRACTICE_SLUG,
            title="Demo practice set: chest X-ray",
            dataset=dataset,
            n=10,
            seed=3,
            creator=users["pi1"],
            readers=list(PRACTICE_READERS),
            misses_unseen=1,
        ).study
    sitter = users["reader5"]
    if Answer.objects.filter(item__study=study, reader=sitter).exists():
        return study, 0
    rng = random.Random("demo-practice:reader5")
    items = list(study.items.select_related("question").order_by("position"))
    misses = []
    for item in items:
        key = item.question.correct
        right = rng.random() < 0.7
        choice = key if right else rng.choice([x for x in LETTERS if x != key])
        if not right:
            misses.append(item.question)
        answer_submit(reader=sitter, item=item, choice=choice, time_ms=rng.randint(9_000, 40_000))
    reader_finish(reader=sitter, study=study)
    week_ago = timezone.now() - timedelta(days=8)
    ReaderCompletion.objects.filter(study=study, reader=sitter).update(finished_at=week_ago)
    Answer.objects.filter(item__study=study, reader=sitter).update(updated_at=week_ago)
    if misses:
        plan = practice_plan_create(owner=sitter, source=study, misses=misses, interval_days=7)
        PracticePlan.objects.filter(pk=plan.pk).update(created_at=week_ago)
    return study, len(items)
