"""The one bridge from the database to the pure analysis: rows -> long DataFrame."""

from __future__ import annotations

import pandas as pd

from analysis.models import AIModel, Prediction
from analysis.rater_names import Rater, display_names, model_key, reader_key, study_labels
from annotation.models import Answer
from readerstudy.models import Membership, ReaderAssignment, ReaderStudy, Role, StudyQuestion, Task

COLUMNS = [
    "question_id",
    "rater",
    "rater_id",
    "rater_kind",
    "answer",
    "presented",
    "correct_answer",
    "task",
    "category",
    "case_id",
    "difficulty",
    "alignment",
    "time_ms",
    "excluded",
    "excluded_reason",
]
TASK_LABELS = dict(Task.choices)


def study_questions(study: ReaderStudy) -> pd.DataFrame:
    rows = (
        StudyQuestion.objects.filter(study=study)
        .order_by("position")
        .values_list(
            "id",
            "question_id",
            "question__source_id",
            "question__task",
            "question__category",
            "question__correct",
            "question__case__study_id",
            "excluded",
            "excluded_reason",
        )
    )
    return pd.DataFrame(
        [
            {
                "item_id": item_id,
                "pk": pk,
                "question_id": source_id,
                "task": TASK_LABELS.get(task, task),
                "category": category,
                "correct_answer": correct,
                "case_id": case,
                "excluded": excluded,
                "excluded_reason": reason,
            }
            for item_id, pk, source_id, task, category, correct, case, excluded, reason in rows
        ],
        columns=[
            "item_id",
            "pk",
            "question_id",
            "task",
            "category",
            "correct_answer",
            "case_id",
            "excluded",
            "excluded_reason",
        ],
    )


def readers_not_started(study: ReaderStudy) -> list[str]:
    """Reader members without a single answer: not in the analysis until they start."""
    return list(
        Membership.objects.filter(study=study, role=Role.READER)
        .exclude(user__answers__item__study=study)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )


def study_raters(study: ReaderStudy) -> list[Rater]:
    """Readers who answered at least one question, then models with a prediction for at least
    one of the study's questions; each with its unique display name."""
    readers = (
        Answer.objects.filter(item__study=study)
        .values_list("reader_id", "reader__username")
        .distinct()
    )
    models = (
        AIModel.objects.filter(
            dataset=study.dataset, predictions__question__study_items__study=study
        )
        .values_list("id", "name")
        .distinct()
    )
    return display_names(set(readers), set(models), study_labels(study))


def study_responses(study: ReaderStudy, *, include_models: bool = True) -> pd.DataFrame:
    """Long format: every reader and every AI model x every study question.

    `rater` is the display name (unique in the study), `rater_id` the internal key (kind +
    id). A reader with no answer to a question has a row with answer None (a missing answer);
    a model's failed extraction is also None; a question the model has no prediction for has
    presented=False ("not predicted"). Readers are everyone who has answered at least one
    question, members or not (a reader removed later keeps their answers in the analysis); a
    reader who has not started would only show as 0% under "missing = wrong", so they are
    left out and listed by `readers_not_started`.
    """
    questions = study_questions(study)
    raters = study_raters(study)
    # A designed study: its first arm (unaided in a crossover: the readers alone against the
    # models); the arms are compared on the design frame (analysis.design_frame).
    answers = (
        Answer.objects.filter(item__study=study, arm=study.arm_list[0])
        .exclude(choice="")
        .values_list("item_id", "reader_id", "choice", "difficulty", "alignment", "time_ms")
    )
    given: dict[tuple[int, str], tuple] = {}
    for item_id, user_id, choice, difficulty, alignment, time_ms in answers:
        given[(item_id, reader_key(user_id))] = (choice, difficulty, alignment, time_ms)
    groups: dict[str, int] = {}
    item_group: dict[int, int | None] = {}
    anchor: set[int] = set()
    if study.reader_groups:
        groups = {
            reader_key(reader_id): group
            for reader_id, group in ReaderAssignment.objects.filter(study=study).values_list(
                "reader_id", "reader_group"
            )
        }
        for item_id, group, is_anchor in study.items.values_list("id", "case_group", "anchor"):
            item_group[item_id] = group
            if is_anchor:
                anchor.add(item_id)
    by_model: dict[str, dict[int, str]] = {}
    if include_models:
        predictions = Prediction.objects.filter(
            model__dataset=study.dataset, question_id__in=list(questions["pk"])
        ).values_list("model_id", "question_id", "letter")
        for model_id, question_pk, letter in predictions:
            by_model.setdefault(model_key(model_id), {})[question_pk] = letter
    rows = []
    for rater in raters:
        if rater.kind == "model" and rater.rater_id not in by_model:
            continue
        for q in questions.itertuples(index=False):
            if rater.kind == "human":
                choice, difficulty, alignment, time_ms = given.get(
                    (q.item_id, rater.rater_id), (None,) * 4
                )
                # Split-plot: a question of another group was never presented to the reader.
                group = groups.get(rater.rater_id)
                presented = group is None or q.item_id in anchor or item_group[q.item_id] == group
            else:
                letter = by_model[rater.rater_id].get(q.pk)
                choice, difficulty, alignment, time_ms = letter or None, None, None, None
                presented = letter is not None
            rows.append(
                (
                    q.question_id,
                    rater.name,
                    rater.rater_id,
                    rater.kind,
                    choice,
                    presented,
                    q.correct_answer,
                    q.task,
                    q.category,
                    q.case_id,
                    difficulty,
                    alignment,
                    time_ms,
                    q.excluded,
                    q.excluded_reason,
                )
            )
    return pd.DataFrame(rows, columns=COLUMNS)
