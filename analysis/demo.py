"""Demo AI predictions in the CSV shape import_predictions reads, imported the normal way."""

from __future__ import annotations

import csv
import io
import random

from analysis.services import predictions_import
from readerstudy.models import Dataset

MODELS = {"MedGemma-demo": 0.8, "Qwen-VL-demo": 0.65, "LLaVA-Med-demo": 0.5}


def seed_predictions(dataset: Dataset) -> int:
    """Three models with letters, free-text answers and a few failed extractions."""
    total = 0
    for name, skill in MODELS.items():
        rng = random.Random(f"demo-model:{name}")
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["question_id", "prediction", "raw_response"])
        for question in dataset.questions.order_by("source_id"):
            letter = question.correct if rng.random() < skill else rng.choice("ABCD")
            style = rng.random()
            if style < 0.5:
                text = letter
            elif style < 0.8:
                text = f"Looking at the film... <answer>{letter}</answer>"
            elif style < 0.93:
                text = f"Final answer: ({letter})"
            else:
                text = "The image quality does not allow a confident answer."
            writer.writerow([question.source_id, text, text])
        summary = predictions_import(
            dataset=dataset,
            model_name=name,
            content=buffer.getvalue().encode(),
            source="demo",
            replace=True,
        )
        total += summary.predictions
    return total
