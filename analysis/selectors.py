"""The one bridge from the database to the pure analysis: rows -> long DataFrame."""

from __future__ import annotations

import pandas as pd

from analysis.models import Prediction
from annotation.models import Answer
from readerstudy.models import Dataset, Membership, ReaderStudy, Role, StudyQuestion, Task

COLUMNS = [
    "question_id",
    "rater",
    "rater_kind",
    "answer",
    "correct_answer",
    "task",
    "category",
    "case_id",
    "difficulty",
    "alignment",
    "time_ms",
    "excluded",
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


def study_responses(study: ReaderStudy, *, include_models: bool = True) -> pd.DataFrame:
    """Long format: every reader and every AI model x every study question.

    A reader with no answer to a question has a row with answer None (a missing answer);
    a model's failed extraction is also None. Readers are everyone who has answered at least
    one question, members or not (a reader removed later keeps their answers in the
    analysis); a reader who has not started would only show as 0% under "missing = wrong",
    so they are left out and listed by `readers_not_started`.
    """
    questions = study_questions(study)
    answers = Answer.objects.filter(item__study=study).values_list(
        "item_id", "reader__username", "choice", "difficulty", "alignment", "time_ms"
    )
    given: dict[tuple[int, str], tuple] = {}
    for item_id, username, choice, difficulty, alignment, time_ms in answers:
        given[(item_id, username)] = (choice, difficulty, alignment, time_ms)
    readers = sorted({username for _, username in given})
    rows = []
    for q in questions.itertuples(index=False):
        for reader in readers:
            choice, difficulty, alignment, time_ms = given.get((q.item_id, reader), (None,) * 4)
            rows.append(
                (
                    q.question_id,
                    reader,
                    "human",
                    choice,
                    q.correct_answer,
                    q.task,
                    q.category,
                    q.case_id,
                    difficulty,
                    alignment,
                    time_ms,
                    q.excluded,
                )
            )
    if include_models:
        predictions = Prediction.objects.filter(
            model__dataset=study.dataset, question_id__in=list(questions["pk"])
        ).values_list("model__name", "question_id", "letter")
        by_model: dict[str, dict[int, str]] = {}
        for model, question_pk, letter in predictions:
            by_model.setdefault(model, {})[question_pk] = letter or None
        for model in sorted(by_model):
            name = model if model not in readers else f"{model} (model)"
            for q in questions.itertuples(index=False):
                rows.append(
                    (
                        q.question_id,
                        name,
                        "model",
                        by_model[model].get(q.pk),
                        q.correct_answer,
                        q.task,
                        q.category,
                        q.case_id,
                        None,
                        None,
                        None,
                        q.excluded,
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def dataset_predictions(dataset: Dataset) -> pd.DataFrame:
    """Benchmark mode (the paper's Table 2): every model on every question of the dataset."""
    rows = Prediction.objects.filter(model__dataset=dataset).values_list(
        "question__source_id",
        "model__name",
        "letter",
        "question__correct",
        "question__task",
        "question__category",
        "question__case__study_id",
    )
    frame = pd.DataFrame(
        rows,
        columns=["question_id", "rater", "answer", "correct_answer", "task", "category", "case_id"],
    )
    frame["answer"] = frame["answer"].where(frame["answer"] != "", None)
    frame["task"] = frame["task"].map(TASK_LABELS)
    return frame
