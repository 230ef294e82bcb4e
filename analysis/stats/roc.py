"""Empirical ROC curves and areas from confidence ratings of binary questions.

The empirical (trapezoidal) AUC is the Mann-Whitney statistic: over every pair of a positive
and a negative question, 1 when the positive is rated higher, 1/2 when the two ratings tie, 0
otherwise, averaged (MRMCaov's `empirical_auc`, RJafroc's "Wilcoxon"). It equals the area
under the empirical ROC curve joined by straight lines, ties included.

The curve's operating points are one per distinct rating t, "positive when rating >= t"
(MRMCaov's empirical curve): from (1, 1) at the lowest rating down to (0, 0) beyond the
highest. On a 5-point scale a reader has at most four points inside the square; a figure
draws them as markers on the reader's curve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.frame import AnalysisInputError
from analysis.stats.roc_frame import RatingsCube, ratings_cube

ROC_COLUMNS = ["modality", "reader", "positives", "negatives", "auc"]
POINT_COLUMNS = ["modality", "reader", "threshold", "fpr", "tpr"]


def psi(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """positives x negatives kernel: 1 if the positive is rated higher, 1/2 if tied, else 0."""
    return (np.sign(positive[:, None] - negative[None, :]) + 1.0) / 2.0


def _split(truth: np.ndarray, rating: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    truth = np.asarray(truth, dtype=bool)
    rating = np.asarray(rating, dtype=float)
    if truth.shape != rating.shape:
        raise AnalysisInputError("truth and rating must have the same length")
    if not np.isfinite(rating).all():
        raise AnalysisInputError("every rating must be a finite number")
    positive, negative = rating[truth], rating[~truth]
    if not len(positive) or not len(negative):
        raise AnalysisInputError(
            "an AUC needs at least one positive and one negative question "
            f"(got {len(positive)} positive, {len(negative)} negative)"
        )
    return positive, negative


def empirical_auc(truth, rating) -> float:
    """Area under the empirical ROC curve (ties count 1/2); see the module docstring."""
    positive, negative = _split(truth, rating)
    return float(psi(positive, negative).mean())


def roc_points(truth, rating) -> pd.DataFrame:
    """The empirical curve's operating points, FPR ascending: (0, 0) first (threshold +inf:
    nothing called positive), then one point per distinct rating, "positive when rating >=
    threshold", ending at (1, 1)."""
    positive, negative = _split(truth, rating)
    thresholds = np.unique(np.concatenate([positive, negative]))[::-1]
    # counts of ratings >= each threshold, highest threshold first
    tpr = np.searchsorted(np.sort(-positive), -thresholds, side="right") / len(positive)
    fpr = np.searchsorted(np.sort(-negative), -thresholds, side="right") / len(negative)
    return pd.DataFrame(
        {
            "threshold": np.concatenate([[np.inf], thresholds]),
            "fpr": np.concatenate([[0.0], fpr]),
            "tpr": np.concatenate([[0.0], tpr]),
        }
    )


def _cube(ratings: pd.DataFrame | RatingsCube) -> RatingsCube:
    return ratings if isinstance(ratings, RatingsCube) else ratings_cube(ratings)


def _groups(cube: RatingsCube):
    for t, modality in enumerate(cube.modalities):
        for r, reader in enumerate(cube.readers):
            rated = cube.rated[t, r]
            yield modality, reader, cube.truth[rated], cube.ratings[t, r, rated]


def auc_table(ratings: pd.DataFrame | RatingsCube) -> pd.DataFrame:
    """Per modality and reader: positives and negatives rated, empirical AUC."""
    rows = [
        (modality, reader, int(truth.sum()), int((~truth).sum()), empirical_auc(truth, rating))
        for modality, reader, truth, rating in _groups(_cube(ratings))
    ]
    return pd.DataFrame(rows, columns=ROC_COLUMNS)


def roc_curves(ratings: pd.DataFrame | RatingsCube) -> pd.DataFrame:
    """Every reader's empirical ROC operating points per modality, long (for figures)."""
    parts = []
    for modality, reader, truth, rating in _groups(_cube(ratings)):
        points = roc_points(truth, rating)
        points.insert(0, "reader", reader)
        points.insert(0, "modality", modality)
        parts.append(points)
    return pd.concat(parts, ignore_index=True)[POINT_COLUMNS]
