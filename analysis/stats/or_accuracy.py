"""Two-modality Obuchowski-Rockette analysis with Hillis df, by X-ray, factorial or split-plot.

The figure of merit (FOM) of a reader in a modality is their accuracy over questions:
correct / counted, summed over X-rays. Its covariances over cases come from the jackknife
leaving out one X-ray (all of its questions) at a time, so questions that share an X-ray are
never treated as independent. References: Obuchowski & Rockette (1995); Hillis (2007) for the
denominator df; Hillis, Obuchowski, Schartz & Berbaum (2005) for the fixed-reader analysis;
MRMCaov (B. J. Smith) whose factorial results on the Van Dyke data the tests reproduce.

Split-plot (readers and X-rays split into G groups, each reader reading only their group's
X-rays in both modalities; Obuchowski 2009, Obuchowski, Gallas & Hillis 2012): readers in
different groups share no X-ray, so their jackknife covariances are zero by design. The
analysis keeps the OR model and (1) pools the treatment x reader mean square within groups,
MS_T×R(G) with (t-1) sum(r_g - 1) df, (2) averages Cov2 and Cov3 over reader pairs of the
same group, and (3) replaces r in the Cov2 - Cov3 term by r~ = sum(r_g^2) / r, because
Var(mean difference) = (2/r)[s2_TR + Var - Cov1 + (r~ - 1)(Cov2 - Cov3)]. With one group it
is exactly the factorial analysis. It is checked by simulation (type I error), not against a
published split-plot value: MRMCaov has no design of this kind and RJafroc withdrew its
split-plot analysis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.stats.distributions import norm_ppf, t_ppf
from analysis.stats.jackknife import jackknife_covariance
from analysis.stats.or_core import (
    fixed_readers_test,
    interval,
    mean_squares,
    or_covariances,
    or_single,
    random_readers_test,
)


@dataclass(frozen=True)
class Components:
    """OR variance components of the FOM (Var = error variance) and the mean squares."""

    var: float
    cov1: float  # same reader, different modalities
    cov2: float  # different readers (same group), same modality
    cov3: float  # different readers (same group), different modalities
    ms_t: float
    ms_r: float  # readers (within groups)
    ms_tr: float  # modality x reader (within groups)
    df_r: int
    df_tr: int
    var_r: float  # reader variance, (MS_R - MS_TR) / t - Cov1 + Cov3
    var_tr: float  # modality x reader variance, MS_TR - Var + Cov1 + Cov2 - Cov3
    readers: int
    cases: int
    r_tilde: float  # sum(r_g^2) / r: r in a factorial design


@dataclass(frozen=True)
class Comparison:
    """Test minus reference, reader-averaged, under one of the analyses."""

    analysis: str  # "random readers, random X-rays" | "fixed readers, random X-rays"
    estimate: float
    se: float
    df: float  # inf for the fixed-reader (normal) analysis
    statistic: float  # t (or z)
    p_value: float
    ci_low: float
    ci_high: float
    f: float
    df1: float
    df2: float
    alpha: float

    def quantile(self, level: float) -> float:
        return _quantile(level, self.df)


@dataclass(frozen=True)
class ModalityMean:
    """One modality's reader-averaged FOM with its OR/Hillis interval (not clipped)."""

    estimate: float
    se: float
    df: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class ORDesignResult:
    fom: np.ndarray  # modalities x readers
    covariance: np.ndarray  # (t*r) x (t*r) jackknife covariance of the FOMs
    components: Components
    random: Comparison
    fixed: Comparison
    means: tuple[ModalityMean, ModalityMean]


def or_design(
    correct: np.ndarray,
    counted: np.ndarray,
    *,
    reader_groups: np.ndarray | None = None,
    case_groups: np.ndarray | None = None,
    alpha: float = 0.05,
) -> ORDesignResult:
    """Test modality 2 minus modality 1 (OR/Hillis; random and fixed readers).

    correct, counted: 2 x readers x X-rays sums of correct answers and questions counted.
    reader_groups / case_groups: split-plot group of each reader / X-ray (None: factorial).
    The mean squares, covariance averages, tests and intervals are the OR/Hillis core's
    (`or_hillis`), fed this accuracy jackknife by X-ray.
    """
    t, r, c = correct.shape
    if t != 2:
        raise ValueError("needs exactly two modalities")
    if r < 2:
        raise ValueError("needs at least two readers")
    rg = np.zeros(r, dtype=int) if reader_groups is None else np.asarray(reader_groups)
    cg = np.zeros(c, dtype=int) if case_groups is None else np.asarray(case_groups)
    fom, cov = jackknife_covariance(correct, counted, cg, rg)
    var, cov1, cov2, cov3 = or_covariances(cov, t, rg, design=1)
    ms_t, ms_r, ms_tr, df_r, df_tr = mean_squares(fom, rg)
    sizes = np.array([(rg == g).sum() for g in np.unique(rg)])
    r_tilde = float((sizes**2).sum() / r)
    components = Components(
        var,
        cov1,
        cov2,
        cov3,
        ms_t,
        ms_r,
        ms_tr,
        df_r,
        df_tr,
        float((ms_r - ms_tr) / t - cov1 + cov3),
        float(ms_tr - var + cov1 + cov2 - cov3),
        r,
        c,
        r_tilde,
    )
    t_means = fom.mean(axis=1)
    difference = float(t_means[1] - t_means[0])

    random_test = random_readers_test(ms_t, ms_tr, t - 1, df_tr, cov2, cov3, r_tilde)
    random = _comparison(
        "random readers, random X-rays (OR/Hillis)",
        difference,
        float(np.sqrt(2 / r * random_test.denominator)),
        random_test.df2,
        alpha,
        f=random_test.statistic,
    )
    fixed_test = fixed_readers_test(ms_t, t - 1, var, cov1, cov2, cov3, r_tilde)
    fixed_den = fixed_test.denominator
    fixed = _comparison(
        "fixed readers, random X-rays (OR, normal reference)",
        difference,
        float(np.sqrt(2 / r * fixed_den)) if fixed_den > 0 else float("nan"),
        float("inf"),
        alpha,
        f=fixed_test.statistic,
    )
    means = []
    for i in range(t):
        block = cov[i * r : (i + 1) * r, i * r : (i + 1) * r]
        one = or_single(fom[i], block, alpha=alpha, groups=rg).random
        means.append(ModalityMean(one.estimate, one.se, one.df, one.ci_low, one.ci_high))
    return ORDesignResult(fom, cov, components, random, fixed, tuple(means))


def _comparison(
    name: str, estimate: float, se: float, df: float, alpha: float, f: float
) -> Comparison:
    statistic, p, low, high = interval(estimate, se, df, alpha)
    if not se > 0:
        nan = float("nan")
        return Comparison(name, estimate, nan, df, nan, nan, nan, nan, nan, 1.0, df, alpha)
    return Comparison(name, estimate, se, df, statistic, p, low, high, f, 1.0, df, alpha)


def _quantile(level: float, df: float) -> float:
    """t (normal when df is infinite) quantile."""
    return float(norm_ppf(level) if np.isinf(df) else t_ppf(level, df))


def reader_differences(result: ORDesignResult, alpha: float = 0.05) -> np.ndarray:
    """Per reader (columns): [reference FOM, test FOM, test − reference, SE, CI low, CI high],
    from the analysis's own FOMs and jackknife covariance: the fixed-readers, reader-specific
    comparison MRMCaov reports (Var(d_j) = 2 (Var_j − Cov1_j), the reader's two modalities'
    mean variance less their covariance; normal reference), as `or_hillis` computes it."""
    fom, cov = result.fom, result.covariance
    r = fom.shape[1]
    own = np.arange(r)
    variance = (cov[own, own] + cov[r + own, r + own]) / 2
    cov1 = cov[own, r + own]
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.where(variance - cov1 >= 0, 2 * (variance - cov1), np.nan))
    difference = fom[1] - fom[0]
    half = _quantile(1 - alpha / 2, float("inf")) * se
    half = np.where(se > 0, half, np.nan)
    return np.vstack([fom[0], fom[1], difference, se, difference - half, difference + half])
