"""Obuchowski-Rockette analysis with Hillis denominator degrees of freedom, on percent correct.

Random readers and random cases. The figure of merit (FOM) is each reader's accuracy; its
covariances over cases come from the jackknife. References: Obuchowski & Rockette (1995);
Hillis (2007) "A comparison of denominator degrees of freedom methods..."; the R package
MRMCaov, whose results on the Van Dyke data the tests reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps


@dataclass(frozen=True)
class ORCovariances:
    var: float
    cov1: float  # same reader, different treatments
    cov2: float  # different readers, same treatment
    cov3: float  # different readers, different treatments


@dataclass(frozen=True)
class ORResult:
    fom: np.ndarray  # treatments x readers
    covariances: ORCovariances
    f: float
    df1: float
    df2: float
    p_value: float
    difference: float  # treatment 1 minus treatment 2 (reader-averaged)
    ci_low: float
    ci_high: float


def jackknife_covariances(scores: np.ndarray) -> tuple[np.ndarray, ORCovariances]:
    """scores: treatments x readers x cases of 0/1 correctness. Returns FOMs and covariances."""
    t, r, c = scores.shape
    total = scores.sum(axis=2)
    fom = total / c
    jack = (total[:, :, None] - scores) / (c - 1)  # FOM with case k left out
    flat = jack.reshape(t * r, c)
    centred = flat - flat.mean(axis=1, keepdims=True)
    cov = (c - 1) / c * (centred @ centred.T)
    ti, ri = np.divmod(np.arange(t * r), r)
    same_t = ti[:, None] == ti[None, :]
    same_r = ri[:, None] == ri[None, :]

    def mean_of(mask):
        return float(cov[mask].mean()) if mask.any() else float("nan")

    return fom, ORCovariances(
        var=mean_of(same_t & same_r),
        cov1=mean_of(~same_t & same_r),
        cov2=mean_of(same_t & ~same_r),
        cov3=mean_of(~same_t & ~same_r),
    )


def or_two_treatments(scores: np.ndarray, alpha: float = 0.05) -> ORResult:
    """Test equal reader-averaged FOM across treatments (random readers, random cases)."""
    t, r, _ = scores.shape
    if t < 2 or r < 2:
        raise ValueError("needs at least two treatments and two readers")
    fom, covs = jackknife_covariances(scores)
    t_means, r_means, grand = fom.mean(axis=1), fom.mean(axis=0), fom.mean()
    ms_t = r * ((t_means - grand) ** 2).sum() / (t - 1)
    ms_tr = ((fom - t_means[:, None] - r_means[None, :] + grand) ** 2).sum() / ((t - 1) * (r - 1))
    denominator = ms_tr + r * max(covs.cov2 - covs.cov3, 0.0)
    f = ms_t / denominator
    df1 = t - 1
    df2 = denominator**2 / (ms_tr**2 / ((t - 1) * (r - 1)))
    p = float(sps.f.sf(f, df1, df2))
    difference = float(t_means[0] - t_means[1])
    se = np.sqrt(2 / r * denominator)
    half = sps.t.ppf(1 - alpha / 2, df2) * se
    return ORResult(
        fom,
        covs,
        float(f),
        float(df1),
        float(df2),
        p,
        difference,
        difference - half,
        difference + half,
    )


@dataclass(frozen=True)
class SingleResult:
    mean: float
    se: float
    df: float
    t: float
    p_value: float
    ci_low: float
    ci_high: float


def or_single_treatment(fom_scores: np.ndarray, null: float = 0.0, alpha: float = 0.05):
    """Reader-averaged FOM of one treatment against a fixed value (Hillis 2007).

    fom_scores: readers x cases. Used for "readers minus AI": pass per-case differences
    (reader correct - AI correct) so the AI's case variability is accounted for.
    """
    r, _ = fom_scores.shape
    if r < 2:
        raise ValueError("needs at least two readers")
    fom, covs = jackknife_covariances(fom_scores[None, :, :])
    theta = fom[0]
    mean = float(theta.mean())
    ms_r = float(((theta - mean) ** 2).sum() / (r - 1))
    denominator = ms_r + r * max(covs.cov2, 0.0)
    se = float(np.sqrt(denominator / r))
    df = denominator**2 / (ms_r**2 / (r - 1)) if ms_r > 0 else float("inf")
    t = (mean - null) / se if se > 0 else float("nan")
    p = float(2 * sps.t.sf(abs(t), df)) if se > 0 else float("nan")
    half = sps.t.ppf(1 - alpha / 2, df) * se
    return SingleResult(mean, se, float(df), float(t), p, mean - half, mean + half)


def ai_versus_readers(
    reader_correct: np.ndarray, ai_correct: np.ndarray, alpha: float = 0.05
) -> SingleResult:
    """Mean reader accuracy minus the AI's, on the same cases, with an OR/Hillis interval.

    reader_correct: readers x cases (0/1); ai_correct: cases (0/1).
    """
    differences = reader_correct.astype(float) - ai_correct.astype(float)[None, :]
    return or_single_treatment(differences, null=0.0, alpha=alpha)
