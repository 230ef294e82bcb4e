"""Practice: practice sets a PI builds from a dataset, and a person's own
"practise my misses" plans, offered again after an interval, one practice study per sitting.

A practice set is a study of kind practice (readerstudy.vocabulary.StudyKind): one unaided
arm, answers final once given, the key and the explanation shown after each answer
(annotation.selectors.Feedback), every answer marked `practice` so that no research analysis
counts it. Blinding by person holds as everywhere: a practice set's reader role is refused
while the person reads one of its X-rays blind (readerstudy.blinding.membership_conflict), and
so is a sitting of a plan.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Answer, ExpertReview, ReaderCompletion
from annotation.sessions import moment_words
from readerstudy.blinding import hidden_xrays, reading_done
from readerstudy.models import (
    Case,
    Dataset,
    PracticePlan,
    Question,
    ReaderStudy,
    StudyQuestion,
)
from readerstudy.results import results_refusal
from readerstudy.services.studies import StudyCreated, StudyError, study_create
from readerstudy.vocabulary import PRACTICE_INTERVALS, Difficulty, StudyKind

UNRATED = "unrated"
DIFFICULTY_CHOICES = [("", "Any"), *Difficulty.choices, (UNRATED, "Not rated yet")]
PRACTICE_INSTRUCTIONS = (
    "A practice set: after each answer you see whether it was right, the key and the "
    "explanation; Enter goes on. Your answers here are practice: they are in no research "
    "study's analysis."
)
PRACTICE_CLOSING = "Practice done. Your results and your misses are on your results page."


def question_difficulty(question_ids) -> dict[int, str]:
    """How hard each question is judged: the experts' reviews when it has any, else the
    research readers' difficulty votes; the median of easy < medium < hard (a tie between two
    goes to the harder). A question nobody rated is missing from the result."""
    order = list(Difficulty.values)
    experts: dict[int, list[int]] = defaultdict(list)
    for qid, value in ExpertReview.objects.filter(item__question_id__in=question_ids).values_list(
        "item__question_id", "difficulty"
    ):
        experts[qid].append(order.index(value))
    votes: dict[int, list[int]] = defaultdict(list)
    for qid, value in (
        Answer.objects.filter(item__question_id__in=question_ids, practice=False)
        .exclude(difficulty="")
        .values_list("item__question_id", "difficulty")
    ):
        votes[qid].append(order.index(value))
    out = {}
    for qid in set(experts) | set(votes):
        ranks = sorted(experts.get(qid) or votes[qid])
        out[qid] = order[ranks[len(ranks) // 2]]  # upper median: a tie goes to the harder
    return out


def open_research_questions() -> Q:
    """A filter on Question: used in a research study still being read (not every reader
    finished, no PI closed it). A practice set leaves them out: its keys would reach people
    still reading them."""
    open_studies = ReaderStudy.objects.filter(kind=StudyKind.RESEARCH).exclude(reading_done())
    return Q(id__in=StudyQuestion.objects.filter(study__in=open_studies).values("question_id"))


@dataclass(frozen=True)
class Pool:
    """The questions a practice set may draw, and what the filters left out, in numbers."""

    question_ids: list[int]
    matching: int  # questions of the dataset matching task, category and difficulty
    in_open_research: int  # of those, left out: in research studies still being read

    def words(self) -> str:
        left = (
            f"; {self.in_open_research} left out: used in research studies still being read"
            if self.in_open_research
            else ""
        )
        return (
            f"{len(self.question_ids)} question{'s' if len(self.question_ids) != 1 else ''} "
            f"available ({self.matching} match{'' if self.matching != 1 else 'es'}{left})"
        )


def practice_pool(
    *, dataset: Dataset, tasks: list[str] = (), category: str = "", difficulty: str = ""
) -> Pool:
    """The questions of `dataset` of the tasks (all when empty), category (any when empty)
    and difficulty (`question_difficulty`; any when empty, UNRATED: not rated yet), less those
    used in research studies still being read."""
    questions = Question.objects.filter(dataset=dataset)
    if tasks:
        questions = questions.filter(task__in=list(tasks))
    if category:
        questions = questions.filter(category=category)
    ids = list(questions.values_list("id", flat=True))
    if difficulty:
        judged = question_difficulty(ids)
        ids = [qid for qid in ids if judged.get(qid, UNRATED) == difficulty]
    busy = set(
        Question.objects.filter(id__in=ids)
        .filter(open_research_questions())
        .values_list("id", flat=True)
    )
    return Pool(sorted(set(ids) - busy), len(ids), len(busy))


def practice_set_create(
    *,
    slug: str,
    title: str,
    dataset: Dataset,
    n: int,
    creator,
    tasks: list[str] = (),
    category: str = "",
    difficulty: str = "",
    seed: int = 0,
    readers: list[str] = (),
    misses_unseen: int = 0,
) -> StudyCreated:
    """A PI's practice set of `n` questions drawn from `practice_pool` (stratified by task),
    the creator its PI and `readers` its readers; all or nothing. A reader who reads one of its
    X-rays blind elsewhere is refused in words (the practice set shows keys at once)."""
    pool = practice_pool(dataset=dataset, tasks=tasks, category=category, difficulty=difficulty)
    if not pool.question_ids:
        raise StudyError(f"No question to practise: {pool.words()}.")
    return study_create(
        slug=slug,
        dataset=dataset,
        n=n,
        seed=seed,
        stratify="task",
        title=title,
        readers=list(readers),
        pis=[creator.get_username()],
        created_by=creator,
        pool=pool.question_ids,
        kind=StudyKind.PRACTICE,
        allow_revision=False,
        lock_on_finish=True,
        misses_unseen=misses_unseen,
        instructions=PRACTICE_INSTRUCTIONS,
        closing_text=PRACTICE_CLOSING,
    )


# "Practise my misses": a person's own plan, a practice study per sitting.


def unseen_questions(owner, source: ReaderStudy, misses: list[Question], per_miss: int) -> list:
    """Up to `per_miss` questions per missed one, of its dataset, task and category, that
    `owner` has never been shown (no study of theirs holds them), none in a research study
    still being read, none on an X-ray they read blind; drawn at random, reproducibly."""
    if per_miss <= 0 or not misses:
        return []
    theirs = StudyQuestion.objects.filter(study__memberships__user=owner).values("question_id")
    blind = Case.objects.filter(hidden_xrays(owner)).values("pk")
    candidates = (
        Question.objects.filter(dataset=source.dataset)
        .exclude(id__in=theirs)
        .exclude(open_research_questions())
        .exclude(case__in=blind)
        .exclude(id__in=[q.id for q in misses])
        .order_by("id")
    )
    by_stratum: dict[tuple[str, str], list[Question]] = defaultdict(list)
    for question in candidates:
        by_stratum[(question.task, question.category)].append(question)
    wanted = Counter((q.task, q.category) for q in misses)
    rng = random.Random(f"misses:{owner.pk}:{source.pk}")
    chosen = []
    for stratum in sorted(wanted):
        pool = by_stratum.get(stratum, [])
        chosen += rng.sample(pool, min(len(pool), wanted[stratum] * per_miss))
    return chosen


@transaction.atomic
def practice_plan_create(
    *, owner, source: ReaderStudy, misses: list[Question], interval_days: int
) -> PracticePlan:
    """`owner`'s plan to practise `misses` (questions of `source` they missed, as the debrief
    counted them) and, as `source`'s PI allows (`misses_unseen`), unseen questions of the same
    task and category; offered `interval_days` after now, then after each sitting. Refused in
    words when the person may not see `source`'s results now, or has no misses."""
    if interval_days not in PRACTICE_INTERVALS:
        raise StudyError(
            "Choose when the set comes back: " + ", ".join(PRACTICE_INTERVALS.values()) + "."
        )
    refusal = results_refusal(owner, source)
    if refusal:
        raise StudyError(refusal)
    existing = PracticePlan.objects.select_for_update().filter(owner=owner, source=source).first()
    if existing is not None:
        raise StudyError(
            f"You already practise this study's misses: “{existing.title}”, every "
            f"{PRACTICE_INTERVALS[existing.interval_days]} (on your studies page)."
        )
    held = set(source.items.values_list("question_id", flat=True))
    if not misses:
        raise StudyError("You have no misses in this study to practise.")
    if any(q.id not in held for q in misses):
        raise StudyError("Those questions are not all of this study.")
    added = unseen_questions(owner, source, misses, source.misses_unseen)
    plan = PracticePlan.objects.create(
        owner=owner,
        source=source,
        dataset=source.dataset,
        title=f"My misses: {source.title}",
        interval_days=interval_days,
    )
    plan.questions.set([*misses, *added])
    return plan


@dataclass(frozen=True)
class PlanState:
    """Where a plan is: its sittings so far (with when each was finished), the sitting open
    now (started, not finished), and when the next one is offered."""

    plan: PracticePlan
    sittings: list[tuple[ReaderStudy, datetime | None]]
    open_sitting: ReaderStudy | None
    due_at: datetime | None  # None while a sitting is open

    def due(self, now: datetime | None = None) -> bool:
        return self.due_at is not None and (now or timezone.now()) >= self.due_at

    @property
    def interval_words(self) -> str:
        return PRACTICE_INTERVALS[self.plan.interval_days]


def plan_state(plan: PracticePlan) -> PlanState:
    """The plan's sittings and its next offer: `interval_days` after the plan was made (you
    have just seen the answers), then after each finished sitting."""
    sittings = list(plan.sittings.order_by("sitting"))
    finished = dict(
        ReaderCompletion.objects.filter(study__in=sittings, reader=plan.owner).values_list(
            "study_id", "finished_at"
        )
    )
    rows = [(s, finished.get(s.pk)) for s in sittings]
    interval = timedelta(days=plan.interval_days)
    if rows and rows[-1][1] is None:
        return PlanState(plan, rows, rows[-1][0], None)
    since = rows[-1][1] if rows else plan.created_at
    return PlanState(plan, rows, None, since + interval)


def plan_from(owner, source: ReaderStudy) -> PlanState | None:
    """`owner`'s plan of `source`'s misses, if they made one."""
    plan = PracticePlan.objects.filter(owner=owner, source=source).first()
    return plan_state(plan) if plan is not None else None


def plans_of(owner) -> list[PlanState]:
    return [plan_state(plan) for plan in PracticePlan.objects.filter(owner=owner)]


def plan_sitting_start(*, plan: PracticePlan, now: datetime | None = None) -> ReaderStudy:
    """Open the plan's next sitting (a practice study of its questions, in a new order, its
    owner the one reader) once it is due; the open sitting when there is one. Refused in words
    before it is due, or when the owner now reads one of its X-rays blind."""
    with transaction.atomic():
        plan = PracticePlan.objects.select_for_update().get(pk=plan.pk)  # one start at a time
        state = plan_state(plan)
        if state.open_sitting is not None:
            return state.open_sitting
        if not state.due(now):
            since = "your last sitting" if state.sittings else "you made it"
            raise StudyError(
                f"This set comes back on {moment_words(state.due_at)} "
                f"({state.interval_words} after {since})."
            )
        number = len(state.sittings) + 1
        questions = list(plan.questions.values_list("id", flat=True))
        created = study_create(
            slug=f"practice-{plan.owner_id}-{plan.pk}-{number}",
            dataset=plan.dataset,
            n=len(questions),
            seed=plan.pk * 1000 + number,
            stratify="none",
            title=f"{plan.title} (sitting {number})",
            readers=[plan.owner.get_username()],
            pool=questions,
            kind=StudyKind.PRACTICE,
            allow_revision=False,
            lock_on_finish=True,
            plan=plan,
            sitting=number,
            instructions=PRACTICE_INSTRUCTIONS,
            closing_text=PRACTICE_CLOSING,
        )
        return created.study
