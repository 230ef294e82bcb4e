"""The one bridge from the database to the pure analysis: rows -> long DataFrame."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db.models import Count, Q

from analysis.key_scoring import ROW_COLUMNS as KEY_COLUMNS
from analysis.key_scoring import KeyColumns, study_key_facts
from analysis.rater_names import (
    Rater,
    display_names,
    joined_readers,
    model_key,
    reader_key,
    study_labels,
)
from annotation.models import Answer, ExpertReview
from annotation.sessions import counted_answers, counted_arm
from readerstudy.models import (
    ItemAid,
    Membership,
    ReaderAssignment,
    ReaderStudy,
    Role,
    StudyQuestion,
    Task,
)
from readerstudy.prediction_probabilities import Probabilities
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.selectors import design_sentence
from readerstudy.vocabulary import DEFAULT_KEY_POLICY, AidMode, Decision

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
    "confidence",
    "time_ms",
    "excluded",
    "excluded_reason",
    "rejected",
    "rejected_by",
    # What each answer is scored against (analysis.key_scoring): no table reads another key.
    *KEY_COLUMNS,
]
# The columns a rater's answer fills (the rest: the rater's, or the question's).
# The reader's ratings given with an answer (the answer fields beyond the letter): every
# frame that carries them (the design frame, the responses export) names them from here.
# `confidence`: a point of the study's confidence scale (ReaderStudy.confidence_scale), None
# when it has none or the answer gave none.
RATING_COLUMNS = ("difficulty", "alignment", "confidence")
# A second read's first answer (before the AI was shown) and the rating given with it: every
# frame and export that carries the first answer carries its rating beside it from here.
FIRST_ANSWER_COLUMNS = ("first_answer", "first_confidence")
ANSWER_COLUMNS = ("answer", *RATING_COLUMNS, "time_ms")
QUESTION_COLUMNS = (
    "question_id",
    "correct_answer",
    "task",
    "category",
    "case_id",
    "excluded",
    "excluded_reason",
    "rejected",
    "rejected_by",
)
TASK_LABELS = dict(Task.choices)


def study_questions(study: ReaderStudy, *, key: str = DEFAULT_KEY_POLICY) -> pd.DataFrame:
    """One row per study question; `rejected_by` counts the experts whose current review
    rejects it (`rejected`: at least one); `correct_answer` is its key under the key policy
    `key` (analysis.key_scoring)."""
    return _questions_and_keys(study, key)[0]


def _questions_and_keys(study: ReaderStudy, key: str) -> tuple[pd.DataFrame, KeyColumns]:
    """`study_questions`, and the versions of its questions read for it (to score answers)."""
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
            "question__case__study_id",
            "excluded",
            "excluded_reason",
            "n_reject",
        )
    )
    rows = list(rows.iterator(2000))
    keys = KeyColumns((row[1] for row in rows), key)
    words: dict[str, str] = {}  # one object per distinct text (category, reason)
    frame = pd.DataFrame(
        [
            (
                item_id,
                pk,
                source_id,
                TASK_LABELS.get(task, task),
                words.setdefault(category, category),
                keys.question_key(pk),
                case,
                excluded,
                words.setdefault(reason, reason),
                n_reject > 0,
                n_reject,
            )
            for (
                item_id,
                pk,
                source_id,
                task,
                category,
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
    return frame, keys


def readers_not_started(study: ReaderStudy) -> list[str]:
    """Reader members without a single answer: not in the analysis until they start."""
    return list(
        Membership.objects.filter(study=study, role=Role.READER)
        .exclude(user__answers__item__study=study)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )


def readers_not_in_counted_arm(study: ReaderStudy) -> list[str]:
    """Display names of the readers of a two-arm study with answers, but none yet in the arm
    the single-arm tables read (`counted_arm`): they are left out of those tables."""
    if len(study.arm_list) < 2:
        return []
    counted = {
        reader_key(reader_id)
        for reader_id in counted_answers(study)
        .filter(practice=study.practice)
        .exclude(choice="")
        .values_list("reader_id", flat=True)
    }
    return [r.name for r in study_raters(study) if r.kind == "human" and r.rater_id not in counted]


def study_raters(study: ReaderStudy) -> list[Rater]:
    """Readers who answered at least one question, then models with a prediction for at least
    one of the study's questions; each with its unique display name."""
    readers = (
        Answer.objects.filter(item__study=study, practice=study.practice)
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
    return display_names(set(readers), set(models), study_labels(study), joined_readers(study))


def study_responses(
    study: ReaderStudy, *, include_models: bool = True, key: str = DEFAULT_KEY_POLICY
) -> pd.DataFrame:
    """Long format: every reader and every AI model x every study question.

    `rater` is the display name (unique in the study), `rater_id` the internal key (kind +
    id). A reader with no answer to a question has a row with answer None (a missing answer);
    a model's failed extraction is also None; a question the model has no prediction for has
    presented=False ("not predicted"). Readers are everyone who has answered at least one
    question, members or not (a reader removed later keeps their answers in the analysis); a
    reader who has not started would only show as 0% under "missing = wrong", so they are
    left out and listed by `readers_not_started`. Every row is scored by the versioned keys
    under the key policy `key` (analysis.key_scoring: `accepted`, ...).
    """
    questions, keys = _questions_and_keys(study, key)
    raters = study_raters(study)
    # A designed study: the arm that counts (`counted_arm`: unaided in a crossover, the
    # readers alone against the models); the arms are compared on the design frame
    # (analysis.design_frame).
    # A research study's analysis never counts a practice answer (annotation.Answer.practice:
    # the key was shown after it); a practice set's own analysis has nothing else.
    answers = (
        counted_answers(study)
        .filter(practice=study.practice)
        .exclude(choice="")
        .values_list(
            "item_id",
            "reader_id",
            "choice",
            "difficulty",
            "alignment",
            "confidence",
            "time_ms",
            "question_version_id",
        )
    )
    n = len(questions)
    item_ids = questions["item_id"].tolist()
    row_of_item = {item_id: row for row, item_id in enumerate(item_ids)}
    # Per reader, their answers' fields in question order (None: no answer).
    given: dict[str, list[np.ndarray]] = {}
    shown: dict[str, list[int | None]] = {}  # per reader: the version id each answer saw
    words: dict[str, str] = {}  # one object per distinct text ("easy", ""), not one per answer
    for (
        item_id,
        user_id,
        choice,
        difficulty,
        alignment,
        confidence,
        time_ms,
        version_id,
    ) in answers.iterator(2000):
        row = row_of_item.get(item_id)
        if row is None:
            continue
        fields = given.get(reader_key(user_id))
        if fields is None:
            fields = given.setdefault(reader_key(user_id), [_nones(n) for _ in ANSWER_COLUMNS])
        fields[0][row] = choice
        fields[1][row] = words.setdefault(difficulty, difficulty)
        fields[2][row] = words.setdefault(alignment, alignment)
        fields[3][row] = confidence
        fields[4][row] = time_ms
        shown.setdefault(reader_key(user_id), [None] * n)[row] = version_id
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
    # Per model, its letter for each question ("" a failed extraction, None not predicted).
    pk_rows, pks = pd.factorize(questions["pk"])
    row_of_pk = {pk: row for row, pk in enumerate(pks.tolist())}
    by_model: dict[str, np.ndarray] = {}
    imported: dict[str, object] = {}  # per model: when its predictions were imported
    if include_models:
        predictions = Prediction.objects.filter(
            model__dataset=study.dataset, question__study_items__study=study
        ).values_list("model_id", "question_id", "letter", "model__imported_at")
        for model_id, question_pk, letter, imported_at in predictions.iterator(2000):
            imported[model_key(model_id)] = imported_at
            letters = by_model.get(model_key(model_id))
            if letters is None:
                letters = by_model.setdefault(model_key(model_id), _nones(len(pks)))
            letters[row_of_pk[question_pk]] = letter
    # Column by column, each inferred as pandas infers it from rows of Python values (what
    # this frame was once built from): ReXVQA's test split (40,826 questions, 11 raters) as
    # 449,000 tuples took 130 MB more at its peak than the frame itself (52 MB).
    # A two-arm study: a reader without an answer in the counted arm yet (their first session
    # was the other arm) has not read it; as rows of missing answers they would count as all
    # wrong, so they are left out (named by `readers_not_in_counted_arm`).
    two_arms = len(study.arm_list) > 1
    raters = [
        r
        for r in raters
        if (r.kind == "human" and (not two_arms or r.rater_id in given)) or r.rater_id in by_model
    ]
    # Per rater: its answer columns and whether each question was presented.
    rows: list[tuple[Rater, list[np.ndarray], list[bool]]] = []
    for rater in raters:
        if rater.kind == "human":
            answered = given.get(rater.rater_id) or [_nones(n) for _ in ANSWER_COLUMNS]
            # Split-plot: a question of another group was never presented to the reader.
            group = groups.get(rater.rater_id)
            presented = [
                group is None or item_id in anchor or item_group[item_id] == group
                for item_id in item_ids
            ]
        else:
            letters = by_model[rater.rater_id][pk_rows]
            answered = [_objects([v or None for v in letters])] + [_nones(n)] * (
                len(ANSWER_COLUMNS) - 1
            )
            presented = [v is not None for v in letters]
        rows.append((rater, answered, presented))
    # Column by column, each inferred as pandas infers it from rows of Python values (what
    # this frame was once built from): ReXVQA's test split (40,826 questions, 11 raters) as
    # 449,000 tuples took 130 MB more at its peak than the frame itself (52 MB).
    scored = _key_columns(questions, rows, shown, imported, keys)
    frame = {}
    for column in COLUMNS:
        values = np.empty(n * len(rows), dtype=object)
        same = questions[column].to_numpy(dtype=object) if column in QUESTION_COLUMNS else None
        for k, (rater, answered, presented) in enumerate(rows):
            part = slice(k * n, (k + 1) * n)
            if same is not None:
                values[part] = same
            elif column in KEY_COLUMNS:
                values[part] = scored[k][column]
            elif column in ANSWER_COLUMNS:
                values[part] = answered[ANSWER_COLUMNS.index(column)]
            elif column == "presented":
                values[part] = presented
            else:  # the rater's: one object for all its rows
                values[part] = {
                    "rater": rater.name,
                    "rater_id": rater.rater_id,
                    "rater_kind": rater.kind,
                }[column]
        frame[column] = pd.Series(values, copy=False).infer_objects()
    return pd.DataFrame(frame, columns=COLUMNS, copy=False)


def _key_columns(
    questions: pd.DataFrame,
    rows: list[tuple[Rater, list[np.ndarray], list[bool]]],
    shown: dict[str, list[int | None]],
    imported: dict[str, object],
    keys: KeyColumns,
) -> list[dict[str, np.ndarray]]:
    """Per rater (in `rows`' order), its key columns: a reader's answers by the version each
    recorded, a model's predictions by the version current when they were imported."""
    pks = questions["pk"].tolist()
    out = []
    for rater, answered, _ in rows:
        letters = answered[0]
        if rater.kind == "human":
            ids = shown.get(rater.rater_id) or [None] * len(pks)
            versions = [keys.shown_by_version_id(v) if v else None for v in ids]
        else:
            when = imported.get(rater.rater_id)
            versions = [keys.shown_at(pk, when) for pk in pks]
        versions = [
            v if letter is not None else None for v, letter in zip(versions, letters, strict=True)
        ]
        out.append(keys.rows(pks, versions))
    return out


def _nones(n: int) -> np.ndarray:
    return np.full(n, None, dtype=object)


def _objects(values: list) -> np.ndarray:
    """`values` as a numpy object array (the Python objects themselves)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


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
        "keys": study_key_facts(study),
        "readers": readers,
        "roles": {role: sum(1 for _, _, r, _ in members if r == role) for role in Role.values},
        "models": models,
        # The design (Methods; the responses export's arm of the counted answers).
        "design": {
            "arms": list(study.arm_list),
            "counted_arm": counted_arm(study),
            "aid_model": study.aid_model,
            "aid_mode": study.aid_mode,
            "washout_days": study.washout_days,
            "reader_groups": study.reader_groups,
            "anchor_size": study.anchor_size,
            "shuffle_options": study.shuffle_options,
            "aid_mode_label": AidMode(study.aid_mode).label if study.aid_mode else "",
            "aid_usable": ItemAid.objects.filter(item__study=study, usable=True).count(),
            "aid_missing": ItemAid.objects.filter(item__study=study, usable=False).count(),
            "sentence": design_sentence(study),
            "not_in_counted_arm": readers_not_in_counted_arm(study),
        },
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


def present_options(study: ReaderStudy) -> dict[str, str]:
    """The study's binary questions: question id (`question_id` of the frames) -> the option
    saying the finding is present (Question.present_option; multiple-choice ones are not in
    it)."""
    return dict(
        StudyQuestion.objects.filter(study=study)
        .exclude(question__present_option="")
        .values_list("question__source_id", "question__present_option")
    )


def model_probabilities(study: ReaderStudy) -> pd.DataFrame | None:
    """Per model (its display name) and study question, the probabilities its predictions
    file gave: `probability` that its answer is right, and on a binary question
    `present_probability` that the finding is present (readerstudy.prediction_probabilities);
    None when no model gave any."""
    names = {r.rater_id: r.name for r in study_raters(study) if r.kind == "model"}
    rows = []
    for model_id, question_id, letter, chosen, options, present in (
        Prediction.objects.filter(model__dataset=study.dataset, question__study_items__study=study)
        .values_list(
            "model_id",
            "question__source_id",
            "letter",
            "probability",
            "option_probabilities",
            "question__present_option",
        )
        .distinct()
        .iterator(2000)
    ):
        given = Probabilities(chosen, options or {})
        if not given or model_key(model_id) not in names:
            continue
        rows.append(
            (
                names[model_key(model_id)],
                question_id,
                given.of_answer(letter) if letter else np.nan,
                given.present(letter, present) if present else np.nan,
            )
        )
    if not rows:
        return None
    frame = pd.DataFrame(
        rows, columns=["model", "question_id", "probability", "present_probability"]
    )
    return frame.astype({"probability": float, "present_probability": float})
