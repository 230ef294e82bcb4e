"""The one bridge from the database to the pure analysis: rows -> long DataFrame."""

from __future__ import annotations

import pandas as pd
from django.db.models import Count, Q

from analysis.models import AIModel, Prediction
from analysis.rater_names import Rater, display_names, model_key, reader_key, study_labels
from annotation.models import Answer, ExpertReview
from annotation.sessions import counted_answers
from readerstudy.models import Membership, ReaderAssignment, ReaderStudy, Role, StudyQuestion, Task
from readerstudy.vocabulary import Decision

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
    "rejected",
    "rejected_by",
]
TASK_LABELS = dict(Task.choices)


def study_questions(study: ReaderStudy) -> pd.DataFrame:
    """One row per study question; `rejected_by` counts the experts whose current review
    rejects it (`rejected`: at least one)."""
    rows = (
        StudyQuestion.objects.filter(study=study)
        .annotate(
            n_reject=Count("reviews", filter=Q(reviews__decision=Decision.REJECT), distinct=True)
        )
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
            "n_reject",
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
                "rejected": n_reject > 0,
                "rejected_by": n_reject,
            }
            for (
                item_id,
                pk,
                source_id,
                task,
                category,
                correct,
                case,
                excluded,
                reason,
                n_reject,
            ) in rows
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
            "rejected",
            "rejected_by",
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
    # A designed study: the arm that counts (`counted_arm`: unaided in a crossover, the
    # readers alone against the models); the arms are compared on the design frame
    # (analysis.design_frame).
    answers = (
        counted_answers(study)
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
                    q.rejected,
                    q.rejected_by,
                )
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def study_facts(study: ReaderStudy) -> dict:
    """What the Methods and participants section reports beyond the responses: readers'
    seniority, the models' provenance and extraction rules, reading conditions, the
    patients' age and sex, and the expert reviews. Plain data (no ORM objects)."""
    raters = {r.rater_id: r for r in study_raters(study)}
    members = Membership.objects.filter(study=study).values_list(
        "user_id", "user__username", "role", "seniority"
    )
    seniority = {reader_key(uid): sen for uid, _, role, sen in members if role == Role.READER}
    readers = [
        {"name": r.name, "username": r.source, "seniority": seniority.get(r.rater_id, "")}
        for r in raters.values()
        if r.kind == "human"
    ]
    models = []
    for model in AIModel.objects.filter(
        dataset=study.dataset, predictions__question__study_items__study=study
    ).distinct():
        rules = (
            Prediction.objects.filter(model=model, question__study_items__study=study)
            .values("rule")
            .annotate(n=Count("id"))
            .order_by("rule")
        )
        rater = raters.get(model_key(model.id))
        models.append(
            {
                "name": rater.name if rater else model.name,
                "source_file": model.source_file,
                "imported_at": model.imported_at.isoformat(timespec="minutes"),
                "rules": {row["rule"] or "(none: failed)": row["n"] for row in rules},
            }
        )
    cases = pd.DataFrame(
        StudyQuestion.objects.filter(study=study)
        .values_list(
            "question__case_id", "question__case__patient_age", "question__case__patient_sex"
        )
        .distinct(),
        columns=["case", "age", "sex"],
    ).drop_duplicates("case")
    reviews = ExpertReview.objects.filter(item__study=study)
    return {
        "readers": readers,
        "roles": {role: sum(1 for _, _, r, _ in members if r == role) for role in Role.values},
        "models": models,
        "conditions": {
            "random_order": study.random_order,
            "allow_revision": study.allow_revision,
            "show_indication": study.show_indication,
            "lock_on_finish": study.lock_on_finish,
        },
        "ages": [int(a) for a in cases["age"].dropna()],
        "sexes": {
            str(k or "unknown"): int(v) for k, v in cases["sex"].fillna("").value_counts().items()
        },
        "reviews": {
            "reviews": reviews.count(),
            "experts": reviews.values("expert").distinct().count(),
            "questions_reviewed": reviews.values("item").distinct().count(),
            "decisions": {
                row["decision"]: row["n"]
                for row in reviews.values("decision").annotate(n=Count("id")).order_by("decision")
            },
        },
    }
