"""Covariance of the readers' AUCs over cases: jackknife, DeLong and unbiased, as MRMCaov.

Each method returns the AUCs (modalities x readers) and their covariance matrix ((t*r) x
(t*r), modality-major: row i*r + j is modality i, reader j), which the Obuchowski-Rockette /
Hillis core (`or_hillis`) reads whatever method made it (MRMCaov's `mrmc(..., cov =)`).

- **jackknife** (MRMCaov `jackknife`, the default): each X-ray left out in turn (all of its
  questions), every AUC recomputed; Cov = (K - 1)/K * sum (pseudo - mean)(pseudo - mean)' over
  the K X-rays of the whole study. A reader who did not read an X-ray keeps their AUC when it is
  left out, as in MRMCaov, so nested and partially paired designs use the same K.
  Computed in closed form from the positive x negative kernel rather than by K recomputations.
- **DeLong** (DeLong, DeLong & Clarke-Pearson 1988; MRMCaov `DeLong`): from the structural
  components V10 (per positive) and V01 (per negative), S10/n1 + S01/n0. Factorial designs
  with one question per X-ray only: it treats every question as an independent case.
- **unbiased** (Gallas, Pennello & Myers 2007; MRMCaov `unbiased`): the U-statistic estimate,
  for any design with one question per X-ray.

With several questions per X-ray only the jackknife respects the X-ray as the case; DeLong and
unbiased are refused there rather than run as if the questions were independent.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from analysis.stats.frame import AnalysisInputError
from analysis.stats.jackknife import leave_one_out_covariance
from analysis.stats.roc import psi
from analysis.stats.roc_frame import RatingsCube

CovarianceMethod = Literal["jackknife", "DeLong", "unbiased"]
COVARIANCE_METHODS: tuple[CovarianceMethod, ...] = ("jackknife", "DeLong", "unbiased")
METHOD_WORDS = {
    "jackknife": "jackknife leaving out one X-ray (all of its questions) at a time",
    "DeLong": "DeLong's structural components (one question per X-ray)",
    "unbiased": "Gallas' unbiased U-statistic estimate (one question per X-ray)",
}


def _group_kernel(cube: RatingsCube, t: int, r: int):
    """The rated positives' and negatives' indices and their psi kernel for one group."""
    rated = cube.rated[t, r]
    pos = np.flatnonzero(rated & cube.truth)
    neg = np.flatnonzero(rated & ~cube.truth)
    if len(pos) < 1 or len(neg) < 1:
        raise AnalysisInputError(
            f"reader {cube.readers[r]} in {cube.modalities[t]} rated {len(pos)} positive and "
            f"{len(neg)} negative questions: an AUC needs both"
        )
    return pos, neg, psi(cube.ratings[t, r, pos], cube.ratings[t, r, neg])


def jackknife(cube: RatingsCube) -> tuple[np.ndarray, np.ndarray]:
    """AUCs and their leave-one-X-ray-out jackknife covariance (module docstring)."""
    t, r, _ = cube.ratings.shape
    k = len(cube.case_ids)
    if k < 2:
        raise AnalysisInputError("the jackknife needs at least two X-rays")
    fom = np.empty((t, r))
    pseudo = np.empty((k, t * r))
    for i in range(t):
        for j in range(r):
            pos, neg, kernel = _group_kernel(cube, i, j)
            total = kernel.sum()
            fom[i, j] = total / kernel.size
            pos_case, neg_case = cube.question_case[pos], cube.question_case[neg]
            rows = np.bincount(pos_case, kernel.sum(axis=1), k)
            cols = np.bincount(neg_case, kernel.sum(axis=0), k)
            by_case = np.zeros((k, len(neg)))
            np.add.at(by_case, pos_case, kernel)
            both = np.bincount(neg_case, by_case[neg_case, np.arange(len(neg))], k)
            n_pos = len(pos) - np.bincount(pos_case, minlength=k)
            n_neg = len(neg) - np.bincount(neg_case, minlength=k)
            if (n_pos == 0).any() or (n_neg == 0).any():
                case = cube.case_ids[np.flatnonzero((n_pos == 0) | (n_neg == 0))[0]]
                raise AnalysisInputError(
                    f"leaving out X-ray {case} leaves reader {cube.readers[j]} in "
                    f"{cube.modalities[i]} without a positive or a negative question: the "
                    "jackknife needs at least two X-rays with positives and two with negatives"
                )
            pseudo[:, i * r + j] = (total - rows - cols + both) / (n_pos * n_neg)
    return fom, leave_one_out_covariance(pseudo.T)


def _one_question_per_case(cube: RatingsCube, method: str) -> None:
    if not cube.one_question_per_case:
        raise AnalysisInputError(
            f"the {method} covariance treats every question as an independent case; with "
            "several questions on one X-ray use the jackknife, which leaves out whole X-rays"
        )


def delong(cube: RatingsCube) -> tuple[np.ndarray, np.ndarray]:
    """AUCs and DeLong's covariance (factorial designs, one question per X-ray)."""
    _one_question_per_case(cube, "DeLong")
    if not cube.fully_paired:
        raise AnalysisInputError(
            "the DeLong covariance needs every reader to rate every question in every "
            "modality (a balanced factorial design); use the jackknife or unbiased"
        )
    t, r, _ = cube.ratings.shape
    n_pos, n_neg = int(cube.truth.sum()), int((~cube.truth).sum())
    if n_pos < 2 or n_neg < 2:
        raise AnalysisInputError("DeLong's covariance needs at least two positives and negatives")
    fom = np.empty((t, r))
    v10 = np.empty((n_pos, t * r))
    v01 = np.empty((n_neg, t * r))
    for i in range(t):
        for j in range(r):
            _, _, kernel = _group_kernel(cube, i, j)
            fom[i, j] = kernel.mean()
            v10[:, i * r + j] = kernel.mean(axis=1) - fom[i, j]
            v01[:, i * r + j] = kernel.mean(axis=0) - fom[i, j]
    s10 = v10.T @ v10 / (n_pos - 1)
    s01 = v01.T @ v01 / (n_neg - 1)
    return fom, s10 / n_pos + s01 / n_neg


def unbiased(cube: RatingsCube) -> tuple[np.ndarray, np.ndarray]:
    """AUCs and the unbiased (U-statistic) covariance of Gallas et al. 2007, MRMCaov's
    `unbiased_default` (any design; pairs of readers share only the questions both rated).
    The kernels are kept as small integers (2 psi) so that 40 groups of 2,500 x 2,500
    questions hold 250 MB, not 2 GB."""
    _one_question_per_case(cube, "unbiased")
    t, r, _ = cube.ratings.shape
    all_pos = np.flatnonzero(cube.truth)
    all_neg = np.flatnonzero(~cube.truth)
    g = t * r
    kernels = np.zeros((g, len(all_pos), len(all_neg)), dtype=np.int8)  # 2 psi: 0, 1, 2
    pos_mask = np.zeros((g, len(all_pos)))
    neg_mask = np.zeros((g, len(all_neg)))
    fom = np.empty((t, r))
    rows = np.zeros((g, len(all_pos)))  # each positive's sum over the group's negatives
    cols = np.zeros((g, len(all_neg)))
    for i in range(t):
        for j in range(r):
            k = i * r + j
            pos, neg, kernel = _group_kernel(cube, i, j)
            pi, ni = np.searchsorted(all_pos, pos), np.searchsorted(all_neg, neg)
            kernels[k][np.ix_(pi, ni)] = (2 * kernel).astype(np.int8)
            pos_mask[k, pi] = 1.0
            neg_mask[k, ni] = 1.0
            rows[k, pi] = kernel.sum(axis=1)
            cols[k, ni] = kernel.sum(axis=0)
            fom[i, j] = kernel.mean()
    products = np.empty((g, g))  # sum over positive x negative pairs of psi_g psi_h
    for a in range(g):
        first = kernels[a].astype(float)
        for b in range(a + 1):
            products[a, b] = products[b, a] = float((first * kernels[b]).sum()) / 4
    totals = rows.sum(axis=1)
    n1, n0 = pos_mask.sum(axis=1), neg_mask.sum(axis=1)
    common_pos = pos_mask @ pos_mask.T
    common_neg = neg_mask @ neg_mask.T
    size = n1 * n0
    nxny = np.outer(size, size)
    delta = nxny / (
        nxny
        - np.outer(n1, n1) * common_neg
        - np.outer(n0, n0) * common_pos
        + common_pos * common_neg
    )
    cov = (
        (1 - delta) * np.outer(totals, totals) + delta * (rows @ rows.T + cols @ cols.T - products)
    ) / nxny
    return fom, cov


def auc_covariance(cube: RatingsCube, method: CovarianceMethod) -> tuple[np.ndarray, np.ndarray]:
    """AUCs and their covariance by `method` ("jackknife", "DeLong" or "unbiased")."""
    functions = {"jackknife": jackknife, "DeLong": delong, "unbiased": unbiased}
    if method not in functions:
        raise AnalysisInputError(f"covariance method must be one of {list(functions)}")
    return functions[method](cube)
