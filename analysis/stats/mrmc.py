"""One set of readers' accuracy (the panel's mean, or the readers' mean difference from an AI
model on the same questions) with the Obuchowski-Rockette single-modality interval: random
readers with Hillis' df, and fixed readers beside it. The figure of merit (FOM) is each
reader's accuracy; its covariances over cases come from the accuracy jackknife
(`jackknife.py`) and the interval from the OR/Hillis core (`or_core.or_single`).
References: Obuchowski & Rockette (1995); Hillis (2007) "A comparison of denominator degrees
of freedom methods...".

The case is the X-ray. When several questions are asked about one X-ray, pass per-X-ray sums
of the 0/1 scores and the number of questions per X-ray (`sizes`): the FOM is then total
correct / total questions, and the jackknife leaves out one X-ray (all of its questions) at a
time. With `sizes` omitted every column is one question (the classic single-question case).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.stats.jackknife import jackknife_covariance
from analysis.stats.or_core import interval, or_single


@dataclass(frozen=True)
class SingleResult:
    """Random readers (OR/Hillis) and, beside it, fixed readers (FRRC) for one FOM.

    Never clipped: an interval past the FOM's range says how little the data pin it down.
    `note` is "" when estimable, otherwise why not (and the interval and p are NaN).
    """

    mean: float
    se: float
    df: float
    t: float
    p_value: float
    ci_low: float
    ci_high: float
    ms_r: float = float("nan")  # reader mean square
    var: float = float("nan")  # OR error variance (jackknife, mean over readers)
    cov2: float = float("nan")  # OR covariance between readers (jackknife)
    se_fixed: float = float("nan")
    p_fixed: float = float("nan")
    ci_low_fixed: float = float("nan")
    ci_high_fixed: float = float("nan")
    note: str = ""


def or_single_treatment(
    fom_scores: np.ndarray,
    null: float = 0.0,
    alpha: float = 0.05,
    *,
    sizes: np.ndarray | None = None,
) -> SingleResult:
    """Reader-averaged FOM of one treatment against a fixed value (Hillis 2007).
    fom_scores: readers x cases (per-case sums when `sizes` gives questions per case). Used
    for "readers minus AI": pass per-case differences (reader correct - AI correct) so the
    AI's case variability is accounted for.

    Random readers (generalises to readers and cases): with the MS(R) and Cov2 of
    Obuchowski-Rockette, SE = sqrt((MS_R + r max(Cov2, 0)) / r), Student's t with Hillis'
    df = (MS_R + r max(Cov2, 0))^2 / (MS_R^2 / (r - 1)). With 2-3 readers df is near 1 and
    the test is anti-conservative (10% type I error with 2 readers in an audit).

    Fixed readers (FRRC, generalises to cases for these readers only): the jackknife
    variance of the reader mean, (Var + (r - 1) max(Cov2, 0)) / r, with a normal reference
    (Obuchowski & Rockette 1995; MRMCaov's `summary.mrmc_tests_frrc`, whose Cov2 is floored
    at 0 as the random-readers SE's is).
    """
    r, c = fom_scores.shape
    if r < 2:
        raise ValueError("needs at least two readers")
    if c < 2:
        raise ValueError("needs at least two cases")
    sizes = np.ones(c) if sizes is None else np.asarray(sizes, dtype=float)
    fom, cov = jackknife_covariance(
        fom_scores[None, :, :],
        np.broadcast_to(sizes, (1, r, c)),
        np.zeros(c, dtype=int),
        np.zeros(r, dtype=int),
    )
    single = or_single(fom[0], cov, alpha=alpha, null=null)
    random = single.random
    mean = single.estimate
    fixed_var = (single.var + (r - 1) * max(single.cov2, 0.0)) / r
    se_fixed = float(np.sqrt(fixed_var)) if fixed_var > 0 else 0.0
    extra = {"ms_r": single.ms_r, "var": single.var, "cov2": single.cov2, "se_fixed": se_fixed}
    if se_fixed > 0:
        _, p_fixed, _, _ = interval(mean - null, se_fixed, float("inf"), alpha)
        _, _, low, high = interval(mean, se_fixed, float("inf"), alpha)
        extra |= {"p_fixed": p_fixed, "ci_low_fixed": low, "ci_high_fixed": high}
    else:
        extra["note"] = "fixed-readers interval not estimable: no variance between X-rays"
    if not random.se > 0:
        extra.pop("note", None)
        why = "not estimable: every reader and every X-ray give the same result (no variance)"
        nan = float("nan")
        return SingleResult(mean, random.se, random.df, nan, nan, nan, nan, **extra, note=why)
    return SingleResult(
        mean,
        random.se,
        random.df,
        random.statistic,
        random.p_value,
        random.ci_low,
        random.ci_high,
        **extra,
    )


def case_sums(values: np.ndarray, cases: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """readers x questions -> readers x cases sums, and questions per case.

    `cases` gives each question's case index (0..C-1); None makes every question a case.
    """
    if cases is None:
        return values, np.ones(values.shape[1])
    labels, codes = np.unique(cases, return_inverse=True)
    n_cases = len(labels)
    sums = np.zeros((n_cases, values.shape[0]))
    np.add.at(sums, codes, values.T)
    return sums.T, np.bincount(codes, minlength=n_cases).astype(float)


def ai_versus_readers(
    reader_correct: np.ndarray,
    ai_correct: np.ndarray,
    alpha: float = 0.05,
    cases: np.ndarray | None = None,
) -> SingleResult:
    """Mean reader accuracy minus the AI's, on the same questions, with an OR/Hillis interval.
    reader_correct: readers x questions (0/1); ai_correct: questions (0/1); cases: the X-ray
    of each question, so the jackknife leaves out whole X-rays (None: each question alone).
    """
    differences = reader_correct.astype(float) - ai_correct.astype(float)[None, :]
    sums, sizes = case_sums(differences, cases)
    return or_single_treatment(sums, null=0.0, alpha=alpha, sizes=sizes)


def panel_accuracy(
    reader_correct: np.ndarray, alpha: float = 0.05, cases: np.ndarray | None = None
) -> SingleResult:
    """Mean reader accuracy with an OR/Hillis interval (random readers and X-rays), unclipped."""
    sums, sizes = case_sums(reader_correct.astype(float), cases)
    return or_single_treatment(sums, null=0.0, alpha=alpha, sizes=sizes)
