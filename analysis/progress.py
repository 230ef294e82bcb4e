"""Progress over time: a person's sittings (practice sets, their own practice,
research studies whose results are open to them), each with their accuracy per task and its
interval beside the panel's median (no other person named), counted as analysis.learning
counts; and a programme director's (PI's) view of their residents, with its CSV.

A PI's residents are the readers of the studies they are PI of; what the PI sees of each is
their sittings of those studies, and of the person's own practice made from them ("practise my
misses" of one of those studies). A study whose X-rays the PI reads blind is left out of it,
and named (readerstudy.blinding), as every PI page of it is closed to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import Max, Q

from analysis.learning import (
    TaskAccuracy,
    counting,
    counting_words,
    study_accuracy,
    study_key_words,
)
from analysis.rater_names import reader_key
from annotation.models import Answer, ReaderCompletion
from annotation.sessions import counted_arm
from readerstudy.blinding import BlindingConflict, check_access
from readerstudy.models import ReaderStudy, Role, Task
from readerstudy.platform.spreadsheets import csv_text
from readerstudy.results import results_refusal


@dataclass(frozen=True)
class Sitting:
    """One sitting of a person: a practice set, a sitting of their own practice, or a
    research study; when they sat it and how they did per task (then "All")."""

    study: ReaderStudy
    kind: str
    when: datetime
    finished: bool
    rows: list[TaskAccuracy]
    arm: str = ""  # a two-arm study: the session its numbers count ("unaided"); "" otherwise

    def row(self, task: str) -> TaskAccuracy | None:
        return next((r for r in self.rows if r.task == task), None)


def sitting_kind(study: ReaderStudy) -> str:
    if study.plan_id:
        return f"my practice, sitting {study.sitting}"
    return "practice set" if study.practice else "research study"


def sitting_time(study: ReaderStudy, reader) -> tuple[datetime | None, bool]:
    """When the person sat `study`: their (last) final submit, else their last answer."""
    done = (
        ReaderCompletion.objects.filter(study=study, reader=reader)
        .order_by("-finished_at")
        .values_list("finished_at", flat=True)
        .first()
    )
    if done is not None:
        return done, True
    last = Answer.objects.filter(item__study=study, reader=reader).aggregate(at=Max("updated_at"))
    return last["at"], False


def sittings(reader, studies, cache: dict | None = None) -> list[Sitting]:
    """`reader`'s sittings of `studies` (those they answered in), oldest first. `cache`
    (study id -> StudyAccuracy) spares a programme's page computing a study twice."""
    cache = {} if cache is None else cache
    out = []
    for study in studies:
        when, finished = sitting_time(study, reader)
        if when is None:
            continue
        if study.pk not in cache:
            cache[study.pk] = study_accuracy(study, include_models=False)
        rows = cache[study.pk].rows_for(reader_key(reader.pk), show_models=False)
        if rows:
            arm = counted_arm(study) if study.crossover else ""
            out.append(Sitting(study, sitting_kind(study), when, finished, rows, arm))
    return sorted(out, key=lambda s: s.when)


def own_sittings(user) -> list[Sitting]:
    """The person's own page: every practice study they read, and the research studies whose
    results are open to them now (readerstudy.results)."""
    studies = (
        ReaderStudy.objects.filter(memberships__user=user, memberships__role=Role.READER)
        .distinct()
        .order_by("created_at")
    )
    return sittings(user, [s for s in studies if not results_refusal(user, s)])


TASK_SHORT = {label: value.title() for value, label in Task.choices}


def tasks_of(items: list[Sitting]) -> list[tuple[str, str]]:
    """The tasks the sittings have rows for, (label, short name), in the vocabulary's order,
    "All" last: the columns of the sittings table."""
    present = {row.task for sitting in items for row in sitting.rows}
    out = [(label, TASK_SHORT[label]) for label in TASK_SHORT if label in present]
    return out + ([("All", "All")] if "All" in present else [])


@dataclass(frozen=True)
class SittingRow:
    """A sitting as the table shows it: one cell per task column (None: no question of it)."""

    sitting: Sitting
    cells: list[TaskAccuracy | None]


def table_rows(items: list[Sitting], tasks: list[tuple[str, str]]) -> list[SittingRow]:
    return [SittingRow(s, [s.row(label) for label, _ in tasks]) for s in items]


# A small chart per task: accuracy (with its interval) per sitting, the panel's median beside.
CHART_W, CHART_H = 560, 170
LEFT, RIGHT, TOP, BOTTOM = 40, 16, 10, 26  # room for the axis labels and the dates


@dataclass(frozen=True)
class Point:
    sitting: Sitting
    row: TaskAccuracy
    x: float
    y: float | None
    y_low: float | None
    y_high: float | None
    y_panel: float | None


@dataclass(frozen=True)
class Trend:
    task: str
    points: list[Point]
    width: int = CHART_W
    height: int = CHART_H

    @property
    def path(self) -> str:
        return " ".join(
            f"{'M' if i == 0 else 'L'}{p.x:.1f},{p.y:.1f}"
            for i, p in enumerate(q for q in self.points if q.y is not None)
        )

    @property
    def gridlines(self) -> list[tuple[str, float]]:
        return [(f"{v:.0%}", _y(v)) for v in (0.0, 0.5, 1.0)]

    @property
    def date_y(self) -> int:
        return CHART_H - 6

    @property
    def left(self) -> int:
        return LEFT


def _y(value: float | None) -> float | None:
    return None if value is None else TOP + (1 - value) * (CHART_H - TOP - BOTTOM)


def by_task(items: list[Sitting]) -> list[Trend]:
    """The sittings per task ("All" first), each a point of the task's chart."""
    tasks: list[str] = []
    for sitting in items:
        for row in sitting.rows:
            if row.task not in tasks:
                tasks.append(row.task)
    tasks.sort(key=lambda t: (t != "All", t))
    out = []
    for task in tasks:
        present = [(s, s.row(task)) for s in items if s.row(task) is not None]
        step = (CHART_W - LEFT - RIGHT - 20) / max(len(present) - 1, 1)
        points = [
            Point(
                s,
                row,
                LEFT + 10 + step * i if len(present) > 1 else (CHART_W + LEFT) / 2,
                _y(row.accuracy),
                _y(row.ci_low),
                _y(row.ci_high),
                _y(row.panel_median),
            )
            for i, (s, row) in enumerate(present)
        ]
        out.append(Trend(task, points))
    return out


# A programme director's view.


@dataclass(frozen=True)
class Resident:
    user: object
    sittings: list[Sitting]
    trends: list[Trend]

    @property
    def tasks(self) -> list[tuple[str, str]]:
        return tasks_of(self.sittings)

    @property
    def rows(self) -> list[SittingRow]:
        return table_rows(self.sittings, self.tasks)


@dataclass(frozen=True)
class Programme:
    residents: list[Resident]
    closed: list[ReaderStudy]  # the PI's studies closed to them by blinding (left out)


def programme(pi) -> Programme | None:
    """The PI's residents and their sittings; None when `pi` is PI of no study."""
    mine = list(
        ReaderStudy.objects.filter(memberships__user=pi, memberships__role=Role.PI)
        .filter(plan__isnull=True)
        .distinct()
        .order_by("created_at")
    )
    if not mine:
        return None
    shown, closed = [], []
    for study in mine:
        try:
            check_access(pi, study)
        except BlindingConflict:
            closed.append(study)
        else:
            shown.append(study)
    own_practice = list(ReaderStudy.objects.filter(plan__source__in=shown).select_related("plan"))
    readers = (
        get_user_model()
        .objects.filter(
            Q(memberships__study__in=shown, memberships__role=Role.READER)
            | Q(practice_plans__source__in=shown)
        )
        .distinct()
        .order_by("username")
    )
    cache: dict = {}
    residents = []
    for user in readers:
        theirs = [
            s for s in shown if s.memberships.filter(user=user, role=Role.READER).exists()
        ] + [s for s in own_practice if s.plan.owner_id == user.pk]
        found = sittings(user, theirs, cache)
        residents.append(Resident(user, found, by_task(found)))
    return Programme(residents, closed)


CSV_COLUMNS = [
    "resident",
    "study",
    "study_slug",
    "kind",
    "arm",
    "sat_at",
    "finished",
    "task",
    "n",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "panel_median",
    "panel_readers",
    "unit",
    "method",
    "key_version",
    "policy",
]


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def programme_csv(view: Programme) -> str:
    """Every resident's accuracy per task per sitting as one plain table (one header row),
    each row saying what it rests on."""
    unit = "question (answers of one resident), clustered by X-ray"
    method = f"{counting().level} Wilson interval on the effective sample size by X-ray"
    policy = counting_words()
    keys: dict[int, str] = {}  # per study: its key version, asked once
    rows = [CSV_COLUMNS]
    for resident in view.residents:
        for sitting in resident.sittings:
            if sitting.study.pk not in keys:
                keys[sitting.study.pk] = study_key_words(sitting.study)
            for row in sitting.rows:
                rows.append(
                    [
                        resident.user.get_username(),
                        sitting.study.title,
                        sitting.study.slug,
                        sitting.kind,
                        sitting.arm,
                        sitting.when.isoformat(timespec="seconds"),
                        sitting.finished,
                        row.task,
                        row.n,
                        row.correct,
                        _cell(row.accuracy),
                        _cell(row.ci_low),
                        _cell(row.ci_high),
                        _cell(row.panel_median),
                        row.panel_n,
                        unit,
                        method,
                        keys[sitting.study.pk],
                        policy,
                    ]
                )
    return csv_text(rows)
