"""A whole reader study, simulated through the platform's own services: a dataset imported
from a ReXVQA file, an AI model's predictions imported from a CSV, a study sampled and designed
(single arm, crossover with washout, second read, split-plot with or without anchor
questions), readers who answer and finish sessions, an expert who rejects questions and a PI
who excludes some, stopped at a chosen point of the reading.

Every reader has a known accuracy and a known reliance on the AI (how often they take the
AI's answer in the aided arm); every draw is seeded by (seed, reader, question, arm), so a
study is the same whenever it is made. What each simulated reader did is recorded in the
answers themselves: tests count from those, never from this module's plan.

Used by `manage.py simulate_study` (a demo-scale study for a PI or developer) and by the
simulated-study test (tests/analysis_tests/test_simulated_study.py).

With a confidence scale (`confidence`) every answer carries a confidence, and a share
(`binary`) of the questions are yes/no questions declared binary in the file (option A: the
finding is present): a reader reads a binary question by signal detection (a latent score
around ±d'/2 with d' from their accuracy; 'present' when it is above 0), their confidence
rising with the score's distance from 0, so their ratings carry an ROC curve; on a
multiple-choice question the confidence is higher, on average, when the answer is right.
These draws come from streams of their own: a study without a scale is drawn as before.

Rows written without a service (none exists): the user accounts (as `seed_demo` does) and a
finished session 1 moved back by the washout (time passing; as the demo's practice set does).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import ReaderCompletion
from annotation.reviews import review_submit
from annotation.selectors import ordered_item_ids
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.design.rules import Design, DesignError
from readerstudy.design.services import study_design_set
from readerstudy.models import Dataset, ReaderStudy, Role, Task
from readerstudy.predictions.services import predictions_import
from readerstudy.rexvqa_synthetic import record as synthetic_record
from readerstudy.rexvqa_synthetic import write_file, write_png
from readerstudy.services.importing import rexvqa_import
from readerstudy.services.studies import (
    membership_add,
    study_create,
    study_question_set_excluded,
)
from readerstudy.vocabulary import (
    LETTERS,
    RATING_FIELDS,
    AidMode,
    ConfidenceScale,
    Decision,
    Difficulty,
    Scale,
    confidence_scale,
)

# The designs a simulated study can have: name -> (arms, aid mode, split-plot, anchor).
DESIGNS: dict[str, tuple[str, str, bool, bool]] = {
    "single": ("unaided", "", False, False),
    "crossover": ("unaided,aided", AidMode.CONCURRENT, False, False),
    "second-read": ("aided", AidMode.SECOND_READ, False, False),
    "split-plot": ("unaided,aided", AidMode.CONCURRENT, True, False),
    "split-plot-anchor": ("unaided,aided", AidMode.CONCURRENT, True, True),
}

# Where the reading stops: nobody has read; every reader half-way through their first
# session (in a crossover, half the readers in each arm); the first reader finished every
# session and the others half-way through their first; everyone finished.
STOPS = ("before", "arm-half-read", "one-reader-finished", "all-finished")

MODEL = "SimAI"
TASKS = list(Task)
IMAGE_SIDE = 32  # pixels: a tiny radiograph, quick to derive


class SimulationError(ValueError):
    """The simulation's parameters were refused (before anything was written)."""


@dataclass(frozen=True)
class ReaderProfile:
    """A simulated reader: the chance of answering right alone, and the chance of taking the
    AI's answer (when it gives one) in the aided arm."""

    username: str
    accuracy: float
    reliance: float
    key: str = ""  # what the reader's draws are seeded by ("r1"...): not the slug


@dataclass(frozen=True)
class Simulation:
    """What to simulate. The defaults are a small crossover with a 14-day washout."""

    slug: str
    design: str = "crossover"
    readers: int = 6
    xrays: int = 20
    questions_per_xray: tuple[int, int] = (3, 4)  # each X-ray has between these many
    seed: int = 0
    stop: str = "all-finished"
    ai_accuracy: float = 0.8
    ai_failed: int = 1  # predictions that give no letter (failed extractions)
    washout_days: int = 14
    groups: int = 2  # split-plot designs only
    anchor_xrays: int = 2  # split-plot-anchor: whole X-rays every group reads
    missing: float = 0.05  # chance a reader leaves a question unanswered
    fast: float = 0.03  # chance an answer is given faster than FAST_ANSWER_MS
    rejected: int = 2  # questions an expert rejects
    excluded: int = 1  # questions a PI excludes
    accuracy_range: tuple[float, float] = (0.55, 0.85)
    reliance_range: tuple[float, float] = (0.3, 0.8)
    confidence: str = ConfidenceScale.NONE  # the study's confidence scale
    binary: float = 0.0  # the share of questions that are yes/no questions declared binary

    def problems(self) -> list[str]:
        out = []
        if self.design not in DESIGNS:
            out.append(f"design must be one of: {', '.join(DESIGNS)}")
        if self.stop not in STOPS:
            out.append(f"stop must be one of: {', '.join(STOPS)}")
        if self.readers < 1 or self.xrays < 1:
            out.append("a study needs at least one reader and one X-ray")
        low, high = self.questions_per_xray
        if not 1 <= low <= high:
            out.append("questions per X-ray: 1 <= low <= high")
        if DESIGNS.get(self.design, (0, 0, False))[2] and self.readers < self.groups:
            out.append(f"{self.groups} split-plot groups need at least {self.groups} readers")
        if self.confidence not in ConfidenceScale.values:
            out.append(f"confidence must be one of: {', '.join(ConfidenceScale.values)}")
        for name in ("ai_accuracy", "missing", "fast", "binary"):
            if not 0 <= getattr(self, name) <= 1:
                out.append(f"{name} must be between 0 and 1")
        return out

    def profiles(self) -> list[ReaderProfile]:
        """The readers, each with an accuracy and a reliance drawn from the seed."""
        rng = random.Random(f"{self.seed}:profiles")
        return [
            ReaderProfile(
                username=f"{self.slug}-r{i + 1}",
                accuracy=round(rng.uniform(*self.accuracy_range), 3),
                reliance=round(rng.uniform(*self.reliance_range), 3),
                key=f"r{i + 1}",
            )
            for i in range(self.readers)
        ]


@dataclass
class Simulated:
    """The study made, its people and what was done (counts for the command's report)."""

    study: ReaderStudy
    readers: list[ReaderProfile]
    pi: object
    expert: object
    answers: int = 0
    finished_sessions: int = 0
    rejected: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


def _draw(seed: int, *parts) -> random.Random:
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def _wrong(rng: random.Random, key: str) -> str:
    return rng.choice([x for x in LETTERS if x != key])


def write_dataset_file(sim: Simulation, root: Path) -> Path:
    """A ReXVQA JSON file of the simulated X-rays (one tiny PNG each) under `root`."""
    rng = _draw(sim.seed, "dataset")
    records = {}
    for x in range(sim.xrays):
        case = f"{sim.slug}-x{x + 1:03d}"
        rel = f"images/{case}.png"
        write_png(root / rel, side=IMAGE_SIDE, shade=40 + (x * 37) % 180)
        for q in range(rng.randint(*sim.questions_per_xray)):
            task = TASKS[(x + q) % len(TASKS)]
            options = [f"Option {letter}" for letter in LETTERS]
            correct = rng.choice(LETTERS)
            declared = {}
            binary = _draw(sim.seed, "binary", x, q)
            if binary.random() < sim.binary:  # a yes/no question: A says present
                options = ["Yes", "No", "Cannot be assessed", "Not applicable"]
                correct = "A" if binary.random() < 0.5 else "B"
                declared = {"present_option": "A"}
            records[f"{case}-q{q + 1}"] = synthetic_record(
                question=f"Simulated question {q + 1} on X-ray {x + 1}?",
                options=options,
                correct=correct,
                task=task.label,
                study_id=case,
                images=[rel],
                views=["PA"],
                category=["Lung", "Pleura", "Cardiac"][(x + q) % 3],
                PatientAge=f"{40 + x % 40:03d}Y",
                PatientSex="MF"[x % 2],
                **declared,
            )
    return write_file(root, records, name=sim.slug, indent=1)


def prediction_csv(sim: Simulation, questions) -> bytes:
    """The AI model's answers (question_id, prediction): right with probability ai_accuracy,
    `ai_failed` of them free text with no letter in it."""
    rng = _draw(sim.seed, "ai")
    lines = ["question_id,prediction"]
    ordered = sorted(questions, key=lambda q: q.source_id)
    failed = {q.source_id for q in rng.sample(ordered, min(sim.ai_failed, len(ordered)))}
    # Sorted by id, and every id starts with the slug: the same draws under any slug.
    for question in ordered:
        if question.source_id in failed:
            text = "The image does not allow a confident answer"
        elif rng.random() < sim.ai_accuracy:
            text = question.correct
        else:
            text = _wrong(rng, question.correct)
        lines.append(f"{question.source_id},{text}")
    return ("\n".join(lines) + "\n").encode()


def _users(names: list[str]) -> dict:
    User = get_user_model()
    return {name: User.objects.get_or_create(username=name)[0] for name in names}


def _design(sim: Simulation) -> Design:
    arms, mode, split, _anchored = DESIGNS[sim.design]
    aided = "aided" in arms.split(",")
    return Design(
        arms=arms,
        aid_model=MODEL if aided else "",
        aid_mode=mode,
        washout_days=sim.washout_days if "," in arms else 0,
        groups=sim.groups if split else 0,
        confidence_scale=sim.confidence,
    )


def _set_design(sim: Simulation, study: ReaderStudy) -> None:
    """The design as a PI sets it on the Design page. An anchor is whole X-rays, so the
    anchor sizes the split accepts depend on the sample: the smallest accepted size of at
    least `anchor_xrays` X-rays' worth of questions is taken, as a PI would try sizes."""
    design = _design(sim)
    if not DESIGNS[sim.design][3]:
        study_design_set(study=study, design=design)
        return
    low = sim.anchor_xrays * sim.questions_per_xray[0]
    last = None
    for size in range(low, study.items.count()):
        try:
            with transaction.atomic():
                study_design_set(study=study, design=replace(design, anchor=size))
            return
        except DesignError as exc:
            last = exc
    raise SimulationError(f"no anchor size from {low} questions was accepted: {last}")


def create_study(sim: Simulation, source_root: Path) -> Simulated:
    """Import the dataset and the AI's predictions, create and design the study with its
    readers, an expert and a PI. Nothing is read yet."""
    problems = sim.problems()
    if problems:
        raise SimulationError("; ".join(problems) + ".")
    if ReaderStudy.objects.filter(slug=sim.slug).exists():
        raise SimulationError(f"a study with slug {sim.slug!r} already exists")
    path = write_dataset_file(sim, source_root)
    dataset_name = f"Simulated {sim.slug}"
    rexvqa_import(path=path, dataset_name=dataset_name, images_root=source_root)
    dataset = Dataset.objects.get(name=dataset_name)
    profiles = sim.profiles()
    people = _users([p.username for p in profiles] + [f"{sim.slug}-pi", f"{sim.slug}-expert"])
    design = _design(sim)
    if design.aided:
        predictions_import(
            dataset=dataset,
            model_name=MODEL,
            content=prediction_csv(sim, dataset.questions.all()),
            source=f"simulated (seed {sim.seed})",
        )
    created = study_create(
        slug=sim.slug,
        dataset=dataset,
        n=dataset.questions.count(),
        seed=sim.seed,
        title=f"Simulated {sim.design} study ({sim.readers} readers, {sim.xrays} X-rays)",
        readers=[p.username for p in profiles],
        experts=[f"{sim.slug}-expert"],
        pis=[f"{sim.slug}-pi"],
    )
    _set_design(sim, created.study)
    return Simulated(
        study=created.study,
        readers=profiles,
        pi=people[f"{sim.slug}-pi"],
        expert=people[f"{sim.slug}-expert"],
    )


def _choice(sim: Simulation, reader: ReaderProfile, item, arm: str, ai: str) -> tuple[str, str]:
    """(the reader's own read, the answer they give) of one question in one arm."""
    rng = _draw(sim.seed, reader.key, _question_key(sim, item), arm)
    key = item.question.correct
    own = key if rng.random() < reader.accuracy else _wrong(rng, key)
    given = ai if arm == "aided" and ai and rng.random() < reader.reliance else own
    return own, given


def _binary_choice(
    sim: Simulation, reader: ReaderProfile, item, arm: str, ai: str
) -> tuple[str, str, float, float]:
    """A binary question read by signal detection: (own answer, given answer, the own read's
    latent distance from 0, the given answer's). 'present' (A) when the latent score is above
    0; d' from the reader's accuracy (Φ(d'/2) = accuracy). Taking the AI's answer when it
    disagrees leaves the reader unsure; when it agrees, surer."""
    from scipy.special import ndtri

    rng = _draw(sim.seed, reader.key, _question_key(sim, item), arm, "binary")
    truth = item.question.correct == item.question.present_option
    d = 2 * float(ndtri(min(max(reader.accuracy, 0.51), 0.99)))
    latent = (d / 2 if truth else -d / 2) + rng.gauss(0, 1)
    own = "A" if latent > 0 else "B"
    distance = abs(latent)
    if arm == "aided" and ai and rng.random() < reader.reliance:
        if ai == own:
            return own, ai, distance, distance + 0.5
        return own, ai, distance, 0.2 * rng.random()
    return own, own, distance, distance


LEVEL_CUTS = (0.3, 0.7, 1.2, 1.8)  # latent distance from 0 -> a point of a 1-5 scale


def _confidence(scale: Scale, distance: float) -> int:
    """A point of `scale` from how far the reader's read is from a toss-up."""
    from scipy.special import ndtr

    if scale.ordinal:
        level = sum(distance > cut for cut in LEVEL_CUTS)
        points = list(scale.points)
        return points[round(level * (len(points) - 1) / len(LEVEL_CUTS))]
    # the probability of being right as the reader sees it: Φ of the distance
    return round(100 * float(ndtr(distance)))


def _choice_distance(sim: Simulation, reader: ReaderProfile, item, arm: str, right: bool) -> float:
    """How sure a reader is of a multiple-choice answer: further from a toss-up, on average,
    when it is right."""
    rng = _draw(sim.seed, reader.key, _question_key(sim, item), arm, "sure")
    return abs(rng.gauss(1.0 if right else 0.3, 0.6))


def _question_key(sim: Simulation, item) -> str:
    """The question's id without the study's slug: the same seed makes the same study under
    any slug."""
    return item.question.source_id.removeprefix(f"{sim.slug}-")


def _time_ms(sim: Simulation, rng: random.Random) -> int:
    if rng.random() < sim.fast:
        return rng.randint(200, max(201, settings.FAST_ANSWER_MS - 1))
    return rng.randint(5_000, 60_000)


def read_session(sim: Simulation, made: Simulated, reader: ReaderProfile, share: float) -> None:
    """The reader answers the first `share` of their current session's questions, in their
    own order, and finishes the session when share is 1. A crossover's session 1, once
    finished, is moved back by the washout so that session 2 is open."""
    study = made.study
    user = get_user_model().objects.get(username=reader.username)
    reading = reading_of(study, user)
    if not reading.is_open:
        raise SimulationError(f"{reader.username}'s session {reading.session} is not open")
    order = ordered_item_ids(study, user, reading)
    scale = confidence_scale(study.confidence_scale)
    items = {i.id: i for i in study.items.select_related("question", "aid").filter(id__in=order)}
    for item_id in order[: round(len(order) * share)]:
        item = items[item_id]
        rng = _draw(sim.seed, reader.key, _question_key(sim, item), reading.arm, "how")
        if rng.random() < sim.missing:
            continue
        aid = getattr(item, "aid", None)
        ai = aid.letter if reading.aided and aid is not None else ""
        if item.question.present_option:
            own, given, own_sure, given_sure = _binary_choice(sim, reader, item, reading.arm, ai)
        else:
            own, given = _choice(sim, reader, item, reading.arm, ai)
            key = item.question.correct
            own_sure = _choice_distance(sim, reader, item, reading.arm, own == key)
            given_sure = _choice_distance(sim, reader, item, f"{reading.arm}-given", given == key)
        first, final = {}, {}
        if scale is not None:
            first = {"confidence": _confidence(scale, own_sure)}
            final = {"confidence": _confidence(scale, given_sure)}
        time_ms = _time_ms(sim, rng)
        if reading.aid_mode == AidMode.SECOND_READ:
            answer_submit(
                reader=user, item=item, choice=own, time_ms=time_ms, stage="first", **first
            )
            answer_submit(reader=user, item=item, choice=given, time_ms=time_ms // 3, **final)
        else:
            answer_submit(reader=user, item=item, choice=given, time_ms=time_ms, **final)
        made.answers += 1
    if share >= 1:
        reader_finish(reader=user, study=study)
        made.finished_sessions += 1
        if reading.session == 1 and reading.sessions > 1 and study.washout_days:
            # Time passing (no service moves it): the washout is over.
            back = dt.timedelta(days=study.washout_days, minutes=1)
            completion = ReaderCompletion.objects.get(study=study, reader=user, session=1)
            completion.finished_at -= back
            completion.save(update_fields=["finished_at"])


def read_to(sim: Simulation, made: Simulated) -> None:
    """Read the study up to `sim.stop`."""
    sessions = len(made.study.arm_list)
    for index, reader in enumerate(made.readers):
        if sim.stop == "before":
            return
        if sim.stop == "all-finished" or (sim.stop == "one-reader-finished" and index == 0):
            for _ in range(sessions):
                read_session(sim, made, reader, 1.0)
        else:
            read_session(sim, made, reader, 0.5)


def review_and_exclude(sim: Simulation, made: Simulated) -> None:
    """The expert rejects `rejected` questions and the PI excludes `excluded` others (the
    first by position after the anchor, so every design keeps its anchor whole)."""
    items = list(
        made.study.items.select_related("question").filter(anchor=False).order_by("position")
    )
    chosen = items[: sim.rejected + sim.excluded]
    for item in chosen[: sim.rejected]:
        review_submit(
            expert=made.expert,
            item=item,
            flags=[],
            ratings={name: None for name in RATING_FIELDS},
            difficulty=Difficulty.MEDIUM,
            decision=Decision.REJECT,
            comment="Simulated rejection.",
        )
        made.rejected.append(item.question.source_id)
    for item in chosen[sim.rejected :]:
        study_question_set_excluded(
            item=item, excluded=True, reason="Simulated exclusion.", actor=made.pi
        )
        made.excluded.append(item.question.source_id)


def simulate(sim: Simulation, source_root: Path, extra_pi: str = "") -> Simulated:
    """The whole simulation, all or nothing: create, review and exclude, read up to the stop
    point. `extra_pi`: an existing user made a PI of the study too (to look at it in the
    browser)."""
    with transaction.atomic():
        made = create_study(sim, source_root)
        if extra_pi:
            user = get_user_model().objects.filter(username=extra_pi).first()
            if user is None:
                raise SimulationError(f"no user named {extra_pi!r}")
            membership_add(study=made.study, user=user, role=Role.PI)
        review_and_exclude(sim, made)
        read_to(sim, made)
    return made
