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

from analysis.stats.jackknife import jackknife_covariance


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


def _average(cov: np.ndarray, mask: np.ndarray) -> float:
    return float(cov[mask].mean()) if mask.any() else 0.0


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
    """
    t, r, c = correct.shape
    if t != 2:
        raise ValueError("needs exactly two modalities")
    if r < 2:
        raise ValueError("needs at least two readers")
    rg = np.zeros(r, dtype=int) if reader_groups is None else np.asarray(reader_groups)
    cg = np.zeros(c, dtype=int) if case_groups is None else np.asarray(case_groups)
    fom, cov = jackknife_covariance(correct, counted, cg, rg)
    ti, ri = np.divmod(np.arange(t * r), r)
    same_t = ti[:, None] == ti[None, :]
    same_r = ri[:, None] == ri[None, :]
    same_g = rg[ri][:, None] == rg[ri][None, :]
    var = _average(cov, same_t & same_r)
    cov1 = _average(cov, ~same_t & same_r)
    cov2 = _average(cov, same_t & ~same_r & same_g)
    cov3 = _average(cov, ~same_t & ~same_r & same_g)

    groups = np.unique(rg)
    sizes = np.array([(rg == g).sum() for g in groups])
    r_tilde = float((sizes**2).sum() / r)
    t_means = fom.mean(axis=1)
    grand = fom.mean()
    group_t = np.stack([fom[:, rg == g].mean(axis=1) for g in groups], axis=1)  # t x G
    group_all = group_t.mean(axis=0)  # G
    own_t = group_t[:, np.searchsorted(groups, rg)]  # t x r
    own_all = group_all[np.searchsorted(groups, rg)]  # r
    r_means = fom.mean(axis=0)
    df_r = int((sizes - 1).sum())
    df_tr = (t - 1) * df_r
    ms_t = r * ((t_means - grand) ** 2).sum() / (t - 1)
    ms_r = t * ((r_means - own_all) ** 2).sum() / df_r if df_r else float("nan")
    resid = fom - own_t - r_means[None, :] + own_all[None, :]
    ms_tr = (resid**2).sum() / df_tr if df_tr else float("nan")
    components = Components(
        var,
        cov1,
        cov2,
        cov3,
        float(ms_t),
        float(ms_r),
        float(ms_tr),
        df_r,
        df_tr,
        float((ms_r - ms_tr) / t - cov1 + cov3),
        float(ms_tr - var + cov1 + cov2 - cov3),
        r,
        c,
        r_tilde,
    )
    difference = float(t_means[1] - t_means[0])

    # Random readers, random X-rays (Hillis df).
    denominator = ms_tr + r_tilde * max(cov2 - cov3, 0.0)
    se = float(np.sqrt(2 / r * denominator))
    df2 = denominator**2 / (ms_tr**2 / df_tr) if ms_tr > 0 else float("inf")
    random = _comparison(
        "random readers, random X-rays (OR/Hillis)",
        difference,
        se,
        float(df2),
        alpha,
        f=float(ms_t / denominator) if denominator > 0 else float("nan"),
    )
    # Fixed readers, random X-rays: normal reference (as MRMCaov and RJafroc).
    fixed_den = var - cov1 + (r_tilde - 1) * (cov2 - cov3)
    fixed_se = float(np.sqrt(2 / r * fixed_den)) if fixed_den > 0 else float("nan")
    fixed = _comparison(
        "fixed readers, random X-rays (OR, normal reference)",
        difference,
        fixed_se,
        float("inf"),
        alpha,
        f=float((t - 1) * ms_t / fixed_den) if fixed_den > 0 else float("nan"),
    )
    means = tuple(modality_mean(fom[i], cov, ti == i, ri, rg, r_tilde, alpha) for i in range(t))
    return ORDesignResult(fom, cov, components, random, fixed, means)


def _comparison(
    name: str, estimate: float, se: float, df: float, alpha: float, f: float
) -> Comparison:
    if not se > 0:
        nan = float("nan")
        return Comparison(name, estimate, nan, df, nan, nan, nan, nan, nan, 1.0, df, alpha)
    statistic = estimate / se
    p = 2 * _upper_tail(abs(statistic), df)
    half = _quantile(1 - alpha / 2, df) * se
    return Comparison(
        name, estimate, se, df, statistic, p, estimate - half, estimate + half, f, 1.0, df, alpha
    )


def modality_mean(
    theta: np.ndarray,
    cov: np.ndarray,
    in_t: np.ndarray,
    ri: np.ndarray,
    rg: np.ndarray,
    r_tilde: float,
    alpha: float,
) -> ModalityMean:
    """Var(mean FOM) = (MS_R + r~ max(Cov2, 0)) / r; df (Hillis) with MS_R's df (MRMCaov's
    single-test summary with r~ for split-plot)."""
    r = len(theta)
    groups = np.unique(rg)
    own = np.array([theta[rg == g].mean() for g in groups])[np.searchsorted(groups, rg)]
    df_r = int(sum((rg == g).sum() - 1 for g in groups))
    ms_r = float(((theta - own) ** 2).sum() / df_r)
    block = cov[np.ix_(in_t, in_t)]
    rr = ri[in_t]
    pairs = (rr[:, None] != rr[None, :]) & (rg[rr][:, None] == rg[rr][None, :])
    cov2 = _average(block, pairs)
    denominator = ms_r + r_tilde * max(cov2, 0.0)
    mean = float(theta.mean())
    se = float(np.sqrt(denominator / r))
    df = denominator**2 / (ms_r**2 / df_r) if ms_r > 0 else float("inf")
    if not se > 0:
        return ModalityMean(mean, se, df, float("nan"), float("nan"))
    q = _quantile(1 - alpha / 2, df)
    return ModalityMean(mean, se, float(df), mean - q * se, mean + q * se)


def _quantile(level: float, df: float) -> float:
    """t (normal when df is infinite) quantile; scipy.special, as scipy.stats' per-call
    overhead dominates the simulations that run this thousands of times."""
    from scipy import special

    return float(special.ndtri(level) if np.isinf(df) else special.stdtrit(df, level))


def _upper_tail(x: float, df: float) -> float:
    from scipy import special

    return float(special.ndtr(-x) if np.isinf(df) else special.stdtr(df, -x))


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
