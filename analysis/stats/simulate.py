"""Simulated two-arm reader studies, for checking the design-aware statistics' error rates.

A latent (probit) model with the random effects the OR model assumes and the clustering the
X-ray brings: a question is answered correctly when

    mu + arm effect + reader + arm x reader + X-ray + arm x X-ray + reader x X-ray
       + question + noise > 0,

so the questions of one X-ray are correlated (they share the X-ray terms). `simulate_cube`
gives the arrays `or_design` reads (fast, for thousands of replicates); `simulate_frame` gives
the long design frame the pages read, with AI answers and (optionally) first answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import LETTERS


@dataclass(frozen=True)
class LatentModel:
    mu: float = 0.8  # about 79% correct
    effect: float = 0.0  # aided - unaided on the latent scale
    reader: float = 0.3
    arm_reader: float = 0.15
    xray: float = 0.7
    arm_xray: float = 0.2
    reader_xray: float = 0.3
    question: float = 0.5


def _latent(rng, model: LatentModel, readers: int, xrays: int, questions: int, groups=None):
    """2 x readers x xrays x questions latent scores."""
    n = rng.standard_normal
    arm = np.array([0.0, model.effect])[:, None, None, None]
    reader = model.reader * n((1, readers, 1, 1))
    arm_reader = model.arm_reader * n((2, readers, 1, 1))
    xray = model.xray * n((1, 1, xrays, 1))
    arm_xray = model.arm_xray * n((2, 1, xrays, 1))
    reader_xray = model.reader_xray * n((1, readers, xrays, 1))
    question = model.question * n((1, 1, xrays, questions))
    noise = n((2, readers, xrays, questions))
    return model.mu + arm + reader + arm_reader + xray + arm_xray + reader_xray + question + noise


def simulate_cube(
    rng: np.random.Generator,
    model: LatentModel,
    readers: int,
    xrays: int,
    questions: int,
    groups: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(correct, counted, reader_groups, case_groups): 2 x readers x xrays sums, every
    question counted. With groups > 1, reader j and X-ray k belong to groups j % G and k % G
    and a reader's cells outside their group are empty (split-plot)."""
    correct = (_latent(rng, model, readers, xrays, questions) > 0).sum(axis=3).astype(float)
    counted = np.full(correct.shape, float(questions))
    reader_groups = np.arange(readers) % groups
    case_groups = np.arange(xrays) % groups
    outside = reader_groups[:, None] != case_groups[None, :]
    correct[:, outside] = 0.0
    counted[:, outside] = 0.0
    return correct, counted, reader_groups, case_groups


def simulate_frame(
    rng: np.random.Generator,
    model: LatentModel,
    readers: int,
    xrays: int,
    questions: int,
    *,
    second_read: bool = False,
    ai_accuracy: float = 0.8,
    follow_ai: float = 0.3,
) -> pd.DataFrame:
    """The long design frame (one row per reader, arm, question) of a crossover study, or of a
    second-read study (aided rows only, with first answers; the final answer follows the AI
    with probability `follow_ai`). Wrong answers pick a wrong letter at random."""
    latent = _latent(rng, model, readers, xrays, questions)
    right = latent > 0
    truth = rng.integers(0, 4, size=(xrays, questions))
    ai_right = rng.random((xrays, questions)) < ai_accuracy
    ai = np.where(ai_right, truth, (truth + rng.integers(1, 4, size=truth.shape)) % 4)

    def letters(correct_mask):
        wrong = (truth[None, :, :] + rng.integers(1, 4, size=correct_mask.shape)) % 4
        return np.where(correct_mask, truth[None, :, :], wrong)

    rows = []
    arms = ["aided"] if second_read else ["unaided", "aided"]
    for a, arm in enumerate(arms):
        if second_read:
            first = letters(right[0])
            follow = rng.random(first.shape) < follow_ai
            answer = np.where(follow, ai[None, :, :], first)
        else:
            first = None
            answer = letters(right[a])
        for j in range(readers):
            for k in range(xrays):
                for q in range(questions):
                    rows.append(
                        {
                            "reader": f"r{j + 1}",
                            "arm": arm,
                            "case_id": f"x{k + 1:03d}",
                            "question_id": f"x{k + 1:03d}-q{q + 1}",
                            "task": f"task{q % 2 + 1}",
                            "answer": LETTERS[answer[j, k, q]],
                            "first_answer": None if first is None else LETTERS[first[j, k, q]],
                            "ai_answer": LETTERS[ai[k, q]],
                            "correct_answer": LETTERS[truth[k, q]],
                            "session": 1 + (a + j) % 2,
                            "reader_group": None,
                            "case_group": None,
                            "time_ms": 10_000,
                        }
                    )
    return pd.DataFrame(rows)
