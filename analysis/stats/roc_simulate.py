"""Simulated confidence-rating reader studies, for checking the ROC statistics against the
reference packages and their error rates and coverage.

A Roe & Metz (1997) latent model, with the X-ray as a cluster of binary questions: question q
on X-ray k, rated by reader j in modality i, has the latent score

    truth * (separation + effect_i + reader_j + modality x reader_ij)
        + X-ray_k + modality x X-ray_ik + reader x X-ray_jk + question_q + noise,

binned to a 1-5 scale (or kept continuous), so questions of one X-ray are correlated through
the X-ray terms. Designs: factorial (every reader reads every X-ray in both modalities),
split-plot (readers and X-rays in groups, each group's readers read only its X-rays) and cases
nested within readers (one reader per group). `model_probabilities` gives an AI model's
probabilities for the same questions (a logistic of its own latent score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

Design = Literal["factorial", "split-plot", "cases within readers"]
FIVE_POINT_CUTS = (-0.4, 0.4, 1.1, 1.9)  # latent cut points of a 1-5 scale


@dataclass(frozen=True)
class RoeMetz:
    separation: float = 1.4  # positive - negative latent mean (AUC about 0.8 with the rest)
    effect: float = 0.0  # added separation in the second modality
    reader: float = 0.25
    modality_reader: float = 0.1
    xray: float = 0.5
    modality_xray: float = 0.25
    reader_xray: float = 0.35
    question: float = 0.3
    noise: float = 0.5


def _groups(design: Design, readers: int, xrays: int, groups: int):
    """Each reader's and X-ray's group (readers read the X-rays of their group)."""
    if design == "factorial":
        return np.zeros(readers, int), np.zeros(xrays, int)
    n = readers if design == "cases within readers" else groups
    if readers < n or xrays < 2 * n:
        raise ValueError("too few readers or X-rays for the groups")
    return np.arange(readers) % n, np.arange(xrays) % n


def simulate_ratings(
    rng: np.random.Generator,
    model: RoeMetz = RoeMetz(),
    *,
    readers: int = 5,
    xrays: int = 60,
    questions_per_xray: int | tuple[int, int] = 1,
    prevalence: float = 0.4,
    design: Design = "factorial",
    groups: int = 2,
    scale: int | None = 5,
    modalities: tuple[str, str] = ("unaided", "aided"),
) -> pd.DataFrame:
    """The long ratings frame (reader, modality, case_id, question_id, truth, rating).

    `questions_per_xray` is a count or a (low, high) range drawn per X-ray; `scale` 5 bins
    ratings to 1-5 (None keeps the latent score). Truth is redrawn until every group of
    X-rays holds positives and negatives on at least two X-rays each.
    """
    reader_group, xray_group = _groups(design, readers, xrays, groups)
    low, high = (
        (questions_per_xray, questions_per_xray)
        if isinstance(questions_per_xray, int)
        else questions_per_xray
    )
    per_xray = rng.integers(low, high + 1, xrays)
    xray_of = np.repeat(np.arange(xrays), per_xray)
    n_q = len(xray_of)
    while True:
        truth = rng.random(n_q) < prevalence
        ok = all(
            len(np.unique(xray_of[(xray_group[xray_of] == g) & truth])) >= 2
            and len(np.unique(xray_of[(xray_group[xray_of] == g) & ~truth])) >= 2
            for g in np.unique(xray_group)
        )
        if ok:
            break
    n = rng.standard_normal
    t = len(modalities)
    signal = (
        model.separation
        + np.array([0.0, model.effect])[:t, None]
        + model.reader * n(readers)[None, :]
        + model.modality_reader * n((t, readers))
    )  # t x readers
    common = (
        model.xray * n(xrays)[None, None, :]
        + model.modality_xray * n((t, 1, xrays))
        + model.reader_xray * n((1, readers, xrays))
    )  # t x readers x xrays
    latent = (
        truth[None, None, :] * signal[:, :, None]
        + common[:, :, xray_of]
        + model.question * n(n_q)[None, None, :]
        + model.noise * n((t, readers, n_q))
    )
    rating = latent if scale is None else np.digitize(latent, FIVE_POINT_CUTS) + 1.0
    ti, ri, qi = np.meshgrid(np.arange(t), np.arange(readers), np.arange(n_q), indexing="ij")
    frame = pd.DataFrame(
        {
            "reader": [f"R{j + 1:02d}" for j in ri.ravel()],
            "modality": np.asarray(modalities)[ti.ravel()],
            "case_id": [f"X{k + 1:04d}" for k in xray_of[qi.ravel()]],
            "question_id": [f"Q{q + 1:05d}" for q in qi.ravel()],
            "truth": truth[qi.ravel()].astype(int),
            "rating": rating.ravel(),
        }
    )
    read = reader_group[ri.ravel()] == xray_group[xray_of[qi.ravel()]]
    return frame[read].reset_index(drop=True)


def model_probabilities(
    rng: np.random.Generator, ratings: pd.DataFrame, separation: float = 2.0, noise: float = 1.0
) -> pd.DataFrame:
    """An AI model's probability that the finding is present, per question of `ratings`
    (question_id, case_id, truth, rating), from a logistic of its own latent score."""
    questions = ratings.drop_duplicates("question_id")[["question_id", "case_id", "truth"]]
    latent = separation * (questions["truth"].to_numpy() - 0.5) + noise * rng.standard_normal(
        len(questions)
    )
    return questions.assign(rating=1.0 / (1.0 + np.exp(-latent))).reset_index(drop=True)
