"""Demo AI predictions in the CSV shape import_predictions reads, imported the normal way."""

from __future__ import annotations

import csv
import io
import random

from annotation.demo import simulate_crossover, simulate_ratings
from readerstudy.demo import AIDED_READERS, MISKEYED, MISKEYED_RIGHT
from readerstudy.demo_roc import RATED_READERS, RATED_SLUG
from readerstudy.design.rules import Design
from readerstudy.design.services import designed_study_create
from readerstudy.models import Dataset, ItemAid, ReaderStudy
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import study_create
from readerstudy.vocabulary import LETTERS, AidMode, ConfidenceScale

MODELS = {"MedGemma-demo": 0.8, "Qwen-VL-demo": 0.65, "LLaVA-Med-demo": 0.5}


def option_probabilities(rng: random.Random, letter: str, right: bool) -> list[str]:
    """A model's probability per option (A-D), most on its answer: surer, on average, when it
    is right; the rest spread over the other options. Summing to 1 as written."""
    chosen = rng.uniform(0.6, 0.97) if right else rng.uniform(0.3, 0.75)
    weights = [rng.random() + 0.1 for _ in range(3)]
    rest = iter(w / sum(weights) * (1 - chosen) for w in weights)
    values = [chosen if option == letter else next(rest) for option in "ABCD"]
    cells = [f"{v:.4f}" for v in values[:3]]
    return [*cells, f"{1 - sum(float(c) for c in cells):.4f}"]


def seed_predictions(dataset: Dataset, probabilities: bool = False) -> int:
    """Three models with letters, free-text answers and a few failed extractions; on the
    mis-keyed question (readerstudy.demo.MISKEYED) each answers the right option. With
    `probabilities`, each gives a probability per option too (its own draws: the letters
    are the same either way)."""
    total = 0
    for name, skill in MODELS.items():
        rng = random.Random(f"demo-model:{name}")
        sure = random.Random(f"demo-model-probabilities:{name}")
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        columns = [f"probability_{letter}" for letter in "ABCD"] if probabilities else []
        writer.writerow(["question_id", "prediction", "raw_response", *columns])
        for question in dataset.questions.order_by("source_id"):
            letter = question.correct if rng.random() < skill else rng.choice(LETTERS)
            style = rng.random()
            if question.source_id == MISKEYED:  # every model gives the right option, B
                letter, style = MISKEYED_RIGHT, min(style, 0.9)
            if style < 0.5:
                text = letter
            elif style < 0.8:
                text = f"Looking at the film... <answer>{letter}</answer>"
            elif style < 0.93:
                text = f"Final answer: ({letter})"
            else:
                text = "The image quality does not allow a confident answer."
            given = (
                option_probabilities(sure, letter, letter == question.correct)
                if probabilities
                else []
            )
            writer.writerow([question.source_id, text, text, *given])
        summary = predictions_import(
            dataset=dataset,
            model_name=name,
            content=buffer.getvalue().encode(),
            source="demo",
            replace=True,
        )
        total += summary.predictions
    return total


AIDED_SLUG = "demo-aided"
AIDED_MODEL = "MedGemma-demo"


def seed_aided_study(dataset: Dataset, users: dict) -> tuple[ReaderStudy, int]:
    """The demo's AI-assisted study: a crossover (unaided / aided by the demo MedGemma,
    concurrent), washout 0, read by its own readers (readerstudy.demo.AIDED_READERS: the
    demo's readers read the same X-rays unaided), the last two simulated through both
    sessions and the first left for a person. Idempotent."""
    study = ReaderStudy.objects.filter(slug=AIDED_SLUG).first()
    if study is None:
        created, _ = designed_study_create(
            design=Design(arms="unaided,aided", aid_model=AIDED_MODEL, aid_mode=AidMode.CONCURRENT),
            create=lambda: study_create(
                slug=AIDED_SLUG,
                dataset=dataset,
                n=dataset.questions.count(),
                seed=11,
                title="Demo AI-assisted study: unaided vs aided (crossover)",
                readers=list(AIDED_READERS),
                pis=["pi1"],
                instructions="Read each case twice: once alone, once with the AI's answer.",
            ),
        )
        study = created.study
    letters = dict(
        ItemAid.objects.filter(item__study=study, usable=True).values_list("item_id", "letter")
    )
    simulated = [users[name] for name in AIDED_READERS[1:]]
    answered = simulate_crossover(study, simulated, letters)
    return study, answered


def seed_rated_study(dataset: Dataset, users: dict) -> tuple[ReaderStudy, int]:
    """The demo's rated study (readerstudy.demo_roc): its own dataset's questions read with a
    5-point confidence scale by RATED_READERS, all but the first simulated and finished; pi1
    its PI. Idempotent."""
    study = ReaderStudy.objects.filter(slug=RATED_SLUG).first()
    if study is None:
        created, _ = designed_study_create(
            design=Design(confidence_scale=ConfidenceScale.FIVE),
            create=lambda: study_create(
                slug=RATED_SLUG,
                dataset=dataset,
                n=dataset.questions.count(),
                seed=5,
                title="Demo rated study: confidence with every answer",
                readers=list(RATED_READERS),
                pis=["pi1"],
                instructions=(
                    "Answer each question and say how sure you are, 1 (guessing) to 5 "
                    "(certain): the digits rate, the letters A-D choose, Enter submits."
                ),
            ),
        )
        study = created.study
    answered = simulate_ratings(study, [users[name] for name in RATED_READERS[1:]])
    return study, answered
