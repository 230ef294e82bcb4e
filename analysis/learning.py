"""What a reader gets back: a study's debrief (every case with their answer, the
key, the explanation, the panel's share per option and, if the PI allows, the AI's answer;
their accuracy per task beside the panel's median and the AI's), and their progress over time.

The numbers are counted as the analysis counts them (its default policy, `counting()`: a
missing answer is wrong, questions a PI excluded or an expert rejected are left out, too-fast
answers are kept and flagged) on the analysis's own responses frame
(analysis.selectors.study_responses) with the statistics library's `accuracy_table`
(Wilson intervals on the effective sample size, questions clustered by X-ray). It lives in
the analysis layer because it needs those three; the reading pages below link it through
`settings.SITE_LINKS`. Who may see it is asked of readerstudy.results (the study's setting,
then blinding by person), never decided here.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import pandas as pd

from analysis import stats
from analysis.key_scoring import study_key_facts
from analysis.key_version import key_statement
from analysis.pipeline import AnalysisSettings, fast_mask
from analysis.rater_names import reader_key
from analysis.selectors import study_responses
from analysis.stats import analysed_rows, drop_fast
from annotation.fast_answers import too_fast
from annotation.models import Answer
from annotation.selectors import ordered_item_ids
from annotation.sessions import counted_answers, counted_arm
from readerstudy.keys import KeyBook, answer_key, key_words
from readerstudy.models import ReaderStudy, StudyQuestion, Task
from readerstudy.predictions.models import Prediction
from readerstudy.vocabulary import LETTERS

# A panel figure (median accuracy, share per option) of fewer readers gives one colleague's
# numbers away: with two, yours and the median tell the other's accuracy and answers exactly.
PANEL_MIN_READERS = 3
PANEL_TOO_SMALL = f"shown with {PANEL_MIN_READERS} or more readers"
TASK_LABELS = dict(Task.choices)
ALL = stats.ALL


def counting() -> AnalysisSettings:
    """The analysis's default policy (the settings' too-fast time and time cap included): the
    learning pages' rules."""
    return AnalysisSettings()


def counting_words(settings: AnalysisSettings | None = None) -> str:
    """The counting rules in one sentence, beside every number the learning pages show."""
    settings = settings or counting()
    missing = (
        "a question left unanswered counts as wrong"
        if settings.missing == "wrong"
        else "questions left unanswered are left out"
    )
    return (
        f"Counted as the study's analysis counts by default: {missing}; questions a PI "
        "excluded or an expert rejected are left out; answers faster than "
        f"{settings.fast_answer_ms / 1000:g} s are "
        f"{'left out' if settings.exclude_fast else 'counted (and marked)'}. Intervals: "
        f"{settings.level} Wilson on the effective sample size, questions clustered by X-ray. "
        f"Key: {settings.means('key_policy')}."
    )


def study_key_words(study: ReaderStudy) -> str:
    """The key version a study's debrief rests on, as its analysis states it by default."""
    return key_statement(counting().key_policy, study_key_facts(study))


@dataclass(frozen=True)
class TaskAccuracy:
    """One task's row (or "All"): your accuracy with its interval, the panel's median, the
    AI models' accuracies (when shown)."""

    task: str
    n: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    note: str
    panel_median: float | None
    panel_n: int  # readers in the median (you included)
    models: list[tuple[str, float | None]] = field(default_factory=list)

    @property
    def panel_note(self) -> str:
        """Why no median is shown ("" : it is)."""
        if self.panel_median is not None:
            return ""
        return "you alone" if self.panel_n <= 1 else f"{self.panel_n} readers: {PANEL_TOO_SMALL}"


@dataclass(frozen=True)
class StudyAccuracy:
    """A study's accuracy table under `counting()`, by rater id ("reader:12", "model:3")."""

    table: pd.DataFrame  # accuracy_table's rows with rater_id and kind
    names: dict[str, str]  # rater id -> display name (models' names; readers unnamed here)

    def of(self, rater_id: str) -> pd.DataFrame:
        return self.table[self.table["rater_id"] == rater_id]

    def rows_for(self, rater_id: str, show_models: bool) -> list[TaskAccuracy]:
        """The person's rows per task (then All), each beside the panel and the models."""
        mine = self.of(rater_id).set_index("task")
        humans = self.table[self.table["kind"] == "human"]
        models = self.table[self.table["kind"] == "model"] if show_models else self.table[:0]
        tasks = [t for t in mine.index if t != ALL] + ([ALL] if ALL in mine.index else [])
        out = []
        for task in tasks:
            row = mine.loc[task]
            if row["n"] == 0:
                continue
            panel = humans[(humans["task"] == task) & (humans["n"] > 0)]["accuracy"].dropna()
            out.append(
                TaskAccuracy(
                    task=task,
                    n=int(row["n"]),
                    correct=int(row["correct"]),
                    accuracy=_num(row["accuracy"]),
                    ci_low=_num(row["ci_low"]),
                    ci_high=_num(row["ci_high"]),
                    note=str(row["note"] or ""),
                    panel_median=(
                        float(statistics.median(panel)) if len(panel) >= PANEL_MIN_READERS else None
                    ),
                    panel_n=len(panel),
                    models=[
                        (self.names.get(m["rater_id"], m["rater"]), _num(m["accuracy"]))
                        for _, m in models[models["task"] == task].iterrows()
                        if m["n"] > 0
                    ],
                )
            )
        return out


def _num(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def counted_frame(study: ReaderStudy, *, include_models: bool) -> pd.DataFrame:
    """The analysis's responses frame of `study` with `counting()`'s selection applied: the rows
    the accuracy is computed on."""
    policy = counting()
    responses = study_responses(study, include_models=include_models, key=policy.key_policy)
    if responses.empty:
        return responses
    rows = analysed_rows(
        responses,
        include_excluded=policy.include_excluded,
        exclude_rejected=policy.exclude_rejected,
    )
    if not policy.exclude_fast:
        return rows
    return drop_fast(rows, fast_mask(rows, policy.fast_answer_ms))


def study_accuracy(study: ReaderStudy, *, include_models: bool) -> StudyAccuracy:
    frame = counted_frame(study, include_models=include_models)
    if frame.empty:
        return StudyAccuracy(pd.DataFrame(columns=["rater_id", "kind", "task", "n"]), {})
    prepared = stats.prepare(frame)
    policy = counting()
    table = stats.accuracy_table(prepared, policy.missing, policy.ci_method, policy.alpha)
    raters = frame.drop_duplicates("rater").set_index("rater")
    table["rater_id"] = table["rater"].map(raters["rater_id"])
    table["kind"] = table["rater"].map(raters["rater_kind"])
    names = {rid: name for name, rid in raters["rater_id"].items()}
    return StudyAccuracy(table, names)


# The debrief.


@dataclass(frozen=True)
class DebriefOption:
    letter: str
    text: str
    share: float | None  # of the panel's readers who answered (None: fewer than the minimum)
    chosen_by: int | None
    is_key: bool
    is_choice: bool


@dataclass(frozen=True)
class DebriefCase:
    number: int  # the case's number in this reader's order
    item_id: int
    question: str
    options: list[DebriefOption]
    choice: str  # "" : no answer
    key: str
    explanation: str
    right: bool
    key_words: str  # what this case's key rests on (readerstudy.keys.key_words)
    answered_by: int
    not_counted: str  # why the accuracy leaves this case out ("" : counted)
    too_fast: bool
    ai: list[tuple[str, str]]  # (model, letter or "no usable answer")
    case_id: int  # the X-ray (readerstudy.Case), for the viewer

    @property
    def panel_note(self) -> str:
        """Why no share per option is shown ("" : they are)."""
        return "" if self.answered_by >= PANEL_MIN_READERS else f"shares {PANEL_TOO_SMALL}"


@dataclass(frozen=True)
class Debrief:
    study: ReaderStudy
    cases: list[DebriefCase]
    accuracy: list[TaskAccuracy]
    show_ai: bool
    arm_words: str  # a two-arm study: which session's answers these are
    key_version: str = ""  # the study's key version (`study_key_words`)
    counting: str = field(default_factory=counting_words)

    @property
    def misses(self) -> list[DebriefCase]:
        """The cases you did not get right that the accuracy counts: what "my misses" lists
        and "practise my misses" practises."""
        return [c for c in self.cases if not c.right and not c.not_counted]


def debrief(study: ReaderStudy, reader, *, with_accuracy: bool = True) -> Debrief:
    """`reader`'s debrief of `study` (the caller has asked readerstudy.results); without the
    accuracy table when only the cases are wanted (a case in the viewer, the CSV)."""
    show_ai = study.results_show_ai
    items = list(
        StudyQuestion.objects.filter(study=study).select_related("question").order_by("position")
    )
    by_id = {item.id: item for item in items}
    order = ordered_item_ids(study, reader)
    number_of = {item_id: n for n, item_id in enumerate(order, start=1)}
    counted = counted_answers(study).filter(practice=study.practice).exclude(choice="")
    shares: dict[int, dict[str, int]] = {}
    mine: dict[int, Answer] = {}
    for answer in counted.only("item_id", "reader_id", "choice", "time_ms", "question_version_id"):
        shares.setdefault(answer.item_id, dict.fromkeys(LETTERS, 0))[answer.choice] += 1
        if answer.reader_id == reader.pk:
            mine[answer.item_id] = answer
    rejected = set(
        StudyQuestion.objects.filter(study=study, reviews__decision="reject").values_list(
            "id", flat=True
        )
    )
    ai: dict[int, list[tuple[str, str]]] = {}
    if show_ai:
        for qid, model, letter in (
            Prediction.objects.filter(
                model__dataset=study.dataset, question__study_items__study=study
            )
            .values_list("question_id", "model__name", "letter")
            .order_by("model__name")
        ):
            ai.setdefault(qid, []).append((model, letter or "no usable answer"))
    policy = counting()
    fast_ms = policy.fast_answer_ms
    # Scored as the analysis scores (readerstudy.keys under the policy's keys): each
    # answer against the version its reader was shown; shown those words.
    book = KeyBook.of([item.question for item in items])
    cases = []
    for item_id in order + [i.id for i in items if i.id not in number_of]:
        item = by_id[item_id]
        question = item.question
        answer = mine.get(item_id)
        choice = answer.choice if answer else ""
        if answer is not None:
            scoring = answer_key(answer, policy=policy.key_policy, book=book)
            shown = book.by_pk(answer.question_version_id)
        else:
            scoring = book.key(question.pk, policy=policy.key_policy)
            shown = book.current(question.pk)
        keyed = book.version(question.pk, scoring.version)
        key = " or ".join(sorted(scoring.accepted))
        counts = shares.get(item_id, dict.fromkeys(LETTERS, 0))
        total = sum(counts.values())
        panel_shown = total >= PANEL_MIN_READERS
        cases.append(
            DebriefCase(
                number=number_of.get(item_id, 0),
                item_id=item_id,
                question=shown.text,
                options=[
                    DebriefOption(
                        letter=letter,
                        text=text,
                        share=counts[letter] / total if panel_shown else None,
                        chosen_by=counts[letter] if panel_shown else None,
                        is_key=letter in scoring.accepted,
                        is_choice=letter == choice,
                    )
                    for letter, text in shown.labelled_options
                ],
                choice=choice,
                key=key,
                explanation=keyed.explanation,
                right=bool(scoring.correct(choice)),
                key_words=key_words(scoring),
                answered_by=total,
                not_counted=_not_counted(item, item_id in rejected),
                too_fast=bool(answer and too_fast(answer.time_ms, fast_ms)),
                ai=ai.get(question.id, []),
                case_id=question.case_id,
            )
        )
    accuracy = (
        study_accuracy(study, include_models=show_ai).rows_for(reader_key(reader.pk), show_ai)
        if with_accuracy
        else []
    )
    scope = ""
    if study.crossover:
        scope = f"Your answers of your {counted_arm(study)} session, as the analysis counts them."
    return Debrief(
        study=study,
        cases=[c for c in cases if c.number],
        accuracy=accuracy,
        show_ai=show_ai,
        arm_words=scope,
        key_version=study_key_words(study),
    )


def _not_counted(item: StudyQuestion, rejected: bool) -> str:
    policy = counting()
    if item.excluded and not policy.include_excluded:
        return f"excluded by a PI: {item.excluded_reason}"
    if rejected and policy.exclude_rejected:
        return "rejected by an expert"
    return ""
