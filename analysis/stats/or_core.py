"""Obuchowski-Rockette analysis with Hillis' degrees of freedom, for any figure of merit.

The shared core of the MRMC analyses, after MRMCaov's design (`mrmc` with the covariance
method plugged in): it reads a modalities x readers table of figures of merit (FOM: AUC,
accuracy, ...) and the covariance matrix of those FOMs over cases, however it was estimated
(`auc_covariance`: jackknife, DeLong, unbiased; a jackknife of accuracy by X-ray), and gives
everything MRMCaov's `summary()` prints, for all three ways of generalising:

- **random readers, random cases** (RRRC; Obuchowski & Rockette 1995, Hillis 2007 df):
  F = MS(T) / [MS(T×R) + r max(Cov2 - Cov3, 0)], df2 = [that denominator]^2 /
  [MS(T×R)^2 / ((t - 1)(r - 1))]; each modality's mean with its own single-modality interval;
- **fixed readers, random cases** (FRRC; Hillis et al. 2005): chi-square (t - 1) MS(T) /
  [Var - Cov1 + (r - 1)(Cov2 - Cov3)], normal intervals, and each reader's own differences
  and AUCs;
- **random readers, fixed cases** (RRFC): the reader x modality ANOVA, F on (t - 1)(r - 1) df.

The designs are MRMCaov's: factorial (1; also partially paired, -1), cases nested within
readers (2: Cov2 = Cov3 = 0) and cases nested within modalities (3: Cov1 = Cov3 = 0).
Differences are first minus second in the order of `modalities`, every pair. Intervals are not
clipped to the FOM's range (MRMCaov truncates the modality and reader means' intervals to [0,
1]); an interval past 1 says how little the data pin the AUC down.

The accuracy analyses (`or_design`, `mrmc`, `reliance`) use this core's mean squares,
covariance averages, tests and intervals on the accuracy jackknife by X-ray
(`jackknife.jackknife_covariance`): one more covariance estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from analysis.stats.distributions import f_sf, norm_ppf, norm_sf, t_ppf, t_sf
from analysis.stats.frame import AnalysisInputError

RANDOM = "random readers, random cases"
FIXED_READERS = "fixed readers, random cases"
FIXED_CASES = "random readers, fixed cases"


@dataclass(frozen=True)
class Components:
    """OR variance components (MRMCaov's "variance component and covariance estimates").

    `var_r` and `var_tr` are MRMCaov's: (MS(R) - MS(T×R))/t - Cov1 + Cov3 and MS(T×R) - Var +
    Cov1 + Cov2 - Cov3 (no max): either may be negative, and is shown as it is.
    """

    var_r: float
    var_tr: float
    var: float  # error variance: the mean variance of one reader's FOM over cases
    cov1: float  # same reader, different modalities
    cov2: float  # different readers, same modality
    cov3: float  # different readers, different modalities
    ms_t: float
    ms_r: float
    ms_tr: float
    df_t: int
    df_r: int
    df_tr: int
    r_tilde: float  # sum(r_g^2)/r over split-plot groups: r in a design without groups

    def correlation(self, name: str) -> float:
        return getattr(self, name) / self.var if self.var else float("nan")


@dataclass(frozen=True)
class GlobalTest:
    """The test of equal FOMs across modalities (F, or chi-square for fixed readers)."""

    statistic_name: str  # "F" or "X2"
    statistic: float
    df1: float
    df2: float  # inf for the chi-square
    p_value: float
    denominator: float


@dataclass(frozen=True)
class Difference:
    """First minus second modality, reader-averaged (or one reader's, `reader` set)."""

    first: str
    second: str
    estimate: float
    se: float
    df: float  # inf: normal reference
    statistic: float  # t, or z when df is inf
    p_value: float
    ci_low: float
    ci_high: float
    reader: str | None = None

    @property
    def comparison(self) -> str:
        return f"{self.first} − {self.second}"


@dataclass(frozen=True)
class Estimate:
    """A modality's reader-averaged FOM (or one reader's), with its interval (not clipped)."""

    modality: str
    estimate: float
    se: float
    df: float
    ci_low: float
    ci_high: float
    ms_r: float = float("nan")
    var: float = float("nan")
    cov2: float = float("nan")
    reader: str | None = None
    statistic: float = float("nan")  # against `null` when one was given (or_single)
    p_value: float = float("nan")


@dataclass(frozen=True)
class Analysis:
    name: str  # RANDOM, FIXED_READERS or FIXED_CASES
    global_test: GlobalTest | None
    differences: tuple[Difference, ...]
    means: tuple[Estimate, ...]
    reader_differences: tuple[Difference, ...] = ()
    reader_means: tuple[Estimate, ...] = ()


@dataclass(frozen=True)
class ORHillisResult:
    modalities: tuple[str, ...]
    readers: tuple[str, ...]
    fom: np.ndarray  # modalities x readers
    cov: np.ndarray  # (t*r) x (t*r), modality-major
    design: int
    groups: np.ndarray  # each reader's split-plot group (all 0 without groups)
    alpha: float
    components: Components
    random: Analysis
    fixed_readers: Analysis
    fixed_cases: Analysis
    notes: tuple[str, ...] = field(default=())

    @property
    def analyses(self) -> tuple[Analysis, Analysis, Analysis]:
        return (self.random, self.fixed_readers, self.fixed_cases)


def random_readers_test(
    ms_t: float,
    ms_tr: float,
    df_t: int,
    df_tr: int,
    cov2: float,
    cov3: float,
    r_tilde: float,
) -> GlobalTest:
    """Random readers, random cases: F = MS(T) / [MS(T×R) + r~ max(Cov2 - Cov3, 0)] on df_t
    and Hillis' df2 = denominator^2 / [MS(T×R)^2 / df_tr] (r~ = r without split-plot groups).
    The difference of two modalities' means has SE sqrt(2/r * denominator) on df2."""
    den = ms_tr + r_tilde * max(cov2 - cov3, 0.0)
    df2 = den**2 / (ms_tr**2 / df_tr) if ms_tr > 0 else float("inf")
    f = ms_t / den if den > 0 else float("nan")
    p = float(f_sf(f, df_t, df2)) if den > 0 else float("nan")
    return GlobalTest("F", f, df_t, df2, p, den)


def fixed_readers_test(
    ms_t: float,
    df_t: int,
    var: float,
    cov1: float,
    cov2: float,
    cov3: float,
    r_tilde: float,
) -> GlobalTest:
    """Fixed readers, random cases (Hillis et al. 2005): chi-square df_t MS(T) / [Var - Cov1 +
    (r~ - 1)(Cov2 - Cov3)] on df_t; the difference of two modalities' means has SE
    sqrt(2/r * denominator), normal reference."""
    den = var - cov1 + (r_tilde - 1) * (cov2 - cov3)
    x2 = df_t * ms_t / den if den > 0 else float("nan")
    p = _chi2_sf(x2, df_t) if den > 0 else float("nan")
    return GlobalTest("X2", x2, df_t, float("inf"), p, den)


def interval(
    estimate: float, se: float, df: float, alpha: float
) -> tuple[float, float, float, float]:
    """(statistic, two-sided p, CI low, CI high); t on df, normal when df is inf."""
    nan = float("nan")
    if not (np.isfinite(se) and se > 0):
        return nan, nan, nan, nan
    statistic = estimate / se
    if np.isinf(df):
        p = 2 * float(norm_sf(abs(statistic)))
        half = float(norm_ppf(1 - alpha / 2)) * se
    else:
        p = 2 * float(t_sf(abs(statistic), df))
        half = float(t_ppf(1 - alpha / 2, df)) * se
    return statistic, p, estimate - half, estimate + half


def _difference(first, second, estimate, se, df, alpha, reader=None) -> Difference:
    statistic, p, low, high = interval(estimate, se, df, alpha)
    return Difference(first, second, estimate, se, df, statistic, p, low, high, reader)


def _mean_differences(modalities, t_means, pairs, se, df, alpha) -> tuple[Difference, ...]:
    """Every pair's difference of the modalities' reader-averaged FOMs: one SE and df for all
    (the analysis's: random readers, fixed readers or fixed cases)."""
    return tuple(
        _difference(modalities[i], modalities[j], t_means[i] - t_means[j], se, df, alpha)
        for i, j in pairs
    )


def _sqrt(value: float) -> float:
    return float(np.sqrt(value)) if value >= 0 else float("nan")


def _mean_of(cov: np.ndarray, mask: np.ndarray) -> float:
    return float(cov[mask].mean()) if mask.any() else float("nan")


def or_covariances(
    cov: np.ndarray,
    t: int,
    groups: np.ndarray,
    design: int,
    keep: np.ndarray | None = None,
):
    """(Var, Cov1, Cov2, Cov3) averaged over the cells in `keep` (default all); Cov2 and Cov3
    over pairs of readers in the same group only (readers in different split-plot groups
    share no case), and the covariances a design makes zero by construction set to 0
    (MRMCaov's vcov_comps)."""
    r = len(groups)
    ti, ri = np.divmod(np.arange(t * r), r)
    same_t = ti[:, None] == ti[None, :]
    same_r = ri[:, None] == ri[None, :]
    same_g = groups[ri][:, None] == groups[ri][None, :]
    keep = np.ones(t * r, dtype=bool) if keep is None else keep
    inside = keep[:, None] & keep[None, :]
    var = float(np.diag(cov)[keep].mean())
    cov1 = _mean_of(cov, ~same_t & same_r & inside)
    cov2 = _mean_of(cov, same_t & ~same_r & same_g & inside)
    cov3 = _mean_of(cov, ~same_t & ~same_r & same_g & inside)
    if design == 2 or r == 1:
        cov2 = cov3 = 0.0
    elif design == 3:
        cov1 = cov3 = 0.0
    return var, cov1, cov2, cov3


def _own(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each reader's group mean of `values` (last axis: readers)."""
    out = np.empty_like(values)
    for g in np.unique(groups):
        out[..., groups == g] = values[..., groups == g].mean(axis=-1, keepdims=True)
    return out


def mean_squares(fom: np.ndarray, groups: np.ndarray | None = None) -> tuple[float, ...]:
    """MS(T), MS(R), MS(T×R) of the modalities x readers table (two-way ANOVA without
    replicates), readers within groups when `groups` splits them (split-plot): MS(R) and
    MS(T×R) pooled within groups on sum(r_g - 1) and (t - 1) sum(r_g - 1) df. Returns the
    three mean squares and the two df."""
    t, r = fom.shape
    groups = np.zeros(r, int) if groups is None else groups
    df_r = int(sum((groups == g).sum() - 1 for g in np.unique(groups)))
    df_tr = (t - 1) * df_r
    grand = fom.mean()
    t_means, r_means = fom.mean(axis=1), fom.mean(axis=0)
    ms_t = r * ((t_means - grand) ** 2).sum() / (t - 1) if t > 1 else float("nan")
    own_t = _own(fom, groups)  # each modality's mean over the reader's group
    own_all = own_t.mean(axis=0)
    ms_r = t * ((r_means - own_all) ** 2).sum() / df_r if df_r else float("nan")
    resid = fom - own_t - r_means[None, :] + own_all[None, :]
    ms_tr = (resid**2).sum() / df_tr if df_tr else float("nan")
    return float(ms_t), float(ms_r), float(ms_tr), df_r, df_tr


@dataclass(frozen=True)
class SingleModality:
    """One set of reader FOMs (a modality, or readers' differences from a fixed comparator)
    under the three analyses (Hillis 2007 section 5.3; MRMCaov's single-test summaries)."""

    estimate: float
    ms_r: float
    var: float
    cov2: float
    random: Estimate  # random readers, random cases: Hillis df
    fixed_readers: Estimate  # normal reference
    fixed_cases: Estimate  # t on r - 1 df


def or_single(
    fom: np.ndarray,
    cov: np.ndarray,
    *,
    alpha: float = 0.05,
    design: int = 1,
    groups: np.ndarray | None = None,
    label: str = "",
    null: float | None = None,
) -> SingleModality:
    """Reader-averaged FOM of one modality: SE sqrt(MS(R)/r + max(Cov2, 0)) with Hillis df
    (MS(R) + r max(Cov2, 0))^2 / (MS(R)^2/(r - 1)) for random readers; sqrt((Var + (r - 1)
    max(Cov2, 0))/r) normal for fixed readers; sqrt(MS(R)/r) on r - 1 df for fixed cases.
    Cov2 is 0 when cases are nested within readers (design 2). With split-plot `groups`,
    MS(R) is within groups, Cov2 over same-group pairs and r * Cov2 becomes r~ Cov2 with r~ =
    sum(r_g^2)/r (so Var(mean) = (Var + (r~ - 1) Cov2)/r). With `null` (e.g. 0 for the
    readers' differences from a model) each estimate also carries its test against it; a
    modality's mean AUC has none (AUC = 0 is no hypothesis)."""
    fom = np.asarray(fom, dtype=float)
    r = len(fom)
    groups = np.zeros(r, int) if groups is None else np.asarray(groups)
    sizes = np.array([(groups == g).sum() for g in np.unique(groups)])
    r_tilde = float((sizes**2).sum() / r)
    df_r = int((sizes - 1).sum())
    mean = float(fom.mean())
    ms_r = float(((fom - _own(fom, groups)) ** 2).sum() / df_r) if df_r else float("nan")
    var = float(np.diag(cov).mean())
    pairs = ~np.eye(r, dtype=bool) & (groups[:, None] == groups[None, :])
    cov2 = 0.0 if design == 2 or not pairs.any() else float(cov[pairs].mean())
    between = max(cov2, 0.0)

    def estimate(se: float, df: float) -> Estimate:
        _, _, low, high = interval(mean, se, df, alpha)
        statistic = p = float("nan")
        if null is not None:
            statistic, p, _, _ = interval(mean - null, se, df, alpha)
        return Estimate(label, mean, se, df, low, high, ms_r, var, cov2, None, statistic, p)

    random_den = ms_r + r_tilde * between
    random_df = random_den**2 / (ms_r**2 / df_r) if ms_r > 0 else float("inf")
    return SingleModality(
        mean,
        ms_r,
        var,
        cov2,
        estimate(_sqrt(random_den / r), float(random_df)),
        estimate(_sqrt((var + (r_tilde - 1) * between) / r), float("inf")),
        estimate(_sqrt(ms_r / r), float(df_r)),
    )


def or_hillis(
    fom: np.ndarray,
    cov: np.ndarray,
    *,
    modalities: tuple[str, ...] | list[str],
    readers: tuple[str, ...] | list[str],
    design: int = 1,
    groups: np.ndarray | list[int] | None = None,
    alpha: float = 0.05,
) -> ORHillisResult:
    """The OR/Hillis analysis of a modalities x readers FOM table with the FOMs' covariance
    over cases ((t*r) x (t*r), modality-major). See the module docstring; `groups` gives each
    reader's split-plot group (None: one group)."""
    fom = np.asarray(fom, dtype=float)
    cov = np.asarray(cov, dtype=float)
    t, r = fom.shape
    if t < 2:
        raise AnalysisInputError("the comparison needs at least two modalities")
    if r < 2:
        raise AnalysisInputError("the MRMC analysis needs at least two readers")
    if cov.shape != (t * r, t * r):
        raise AnalysisInputError(f"covariance must be {t * r} x {t * r} (modality-major)")
    if design not in (1, -1, 2, 3):
        raise AnalysisInputError(f"design {design} is not supported")
    modalities, readers = tuple(map(str, modalities)), tuple(map(str, readers))
    groups = np.zeros(r, int) if groups is None else np.unique(groups, return_inverse=True)[1]
    if len(groups) != r:
        raise AnalysisInputError("one split-plot group per reader")
    sizes = np.bincount(groups)
    if (sizes < 2).any() and len(sizes) > 1:
        raise AnalysisInputError("every split-plot group needs at least two readers")
    r_tilde = float((sizes**2).sum() / r)
    ms_t, ms_r, ms_tr, df_r, df_tr = mean_squares(fom, groups)
    var, cov1, cov2, cov3 = or_covariances(cov, t, groups, design)
    components = Components(
        var_r=(ms_r - ms_tr) / t - cov1 + cov3,
        var_tr=ms_tr - var + cov1 + (cov2 - cov3),
        var=var,
        cov1=cov1,
        cov2=cov2,
        cov3=cov3,
        ms_t=ms_t,
        ms_r=ms_r,
        ms_tr=ms_tr,
        df_t=t - 1,
        df_r=df_r,
        df_tr=df_tr,
        r_tilde=r_tilde,
    )
    pairs = list(combinations(range(t), 2))
    t_means = fom.mean(axis=1)
    singles = [
        or_single(
            fom[i],
            cov[i * r : (i + 1) * r, i * r : (i + 1) * r],
            alpha=alpha,
            design=design,
            groups=groups,
            label=modalities[i],
        )
        for i in range(t)
    ]
    notes = []

    # Random readers, random cases.
    random_test = random_readers_test(ms_t, ms_tr, t - 1, df_tr, cov2, cov3, r_tilde)
    den, df2 = random_test.denominator, random_test.df2
    if not den > 0:
        notes.append("random readers: not estimable, the FOMs vary neither over readers nor cases")
    random = Analysis(
        RANDOM,
        random_test,
        _mean_differences(modalities, t_means, pairs, _sqrt(2 / r * den), df2, alpha),
        tuple(s.random for s in singles),
    )

    # Fixed readers, random cases.
    fixed_test = fixed_readers_test(ms_t, t - 1, var, cov1, cov2, cov3, r_tilde)
    fixed_den = fixed_test.denominator
    if not fixed_den > 0:
        notes.append("fixed readers: not estimable, the FOMs do not vary over cases")
    reader_differences = []
    for j, reader in enumerate(readers):
        own = np.zeros(t * r, dtype=bool)
        own[np.arange(t) * r + j] = True
        var_j, cov1_j, _, _ = or_covariances(cov, t, groups, design, keep=own)
        se_j = _sqrt(2 * (var_j - cov1_j))
        reader_differences += [
            _difference(
                modalities[a],
                modalities[b],
                fom[a, j] - fom[b, j],
                se_j,
                float("inf"),
                alpha,
                reader,
            )
            for a, b in pairs
        ]
    reader_means = []
    for i in range(t):
        for j in range(r):
            se = _sqrt(cov[i * r + j, i * r + j])
            _, _, low, high = interval(fom[i, j], se, float("inf"), alpha)
            reader_means.append(
                Estimate(modalities[i], fom[i, j], se, float("inf"), low, high, reader=readers[j])
            )
    fixed_readers = Analysis(
        FIXED_READERS,
        fixed_test,
        _mean_differences(
            modalities, t_means, pairs, _sqrt(2 / r * fixed_den), float("inf"), alpha
        ),
        tuple(s.fixed_readers for s in singles),
        tuple(reader_differences),
        tuple(reader_means),
    )

    # Random readers, fixed cases.
    df_tr = float(components.df_tr)
    fixed_cases = Analysis(
        FIXED_CASES,
        GlobalTest(
            "F",
            ms_t / ms_tr if ms_tr > 0 else float("nan"),
            t - 1,
            df_tr,
            float(f_sf(ms_t / ms_tr, t - 1, df_tr)) if ms_tr > 0 else float("nan"),
            ms_tr,
        ),
        _mean_differences(modalities, t_means, pairs, _sqrt(2 / r * ms_tr), df_tr, alpha),
        tuple(s.fixed_cases for s in singles),
    )
    return ORHillisResult(
        modalities,
        readers,
        fom,
        cov,
        design,
        groups,
        alpha,
        components,
        random,
        fixed_readers,
        fixed_cases,
        tuple(notes),
    )


def _chi2_sf(x: float, df: float) -> float:
    from scipy import special

    return float(special.chdtrc(df, x))


def components_frame(components: Components) -> pd.DataFrame:
    """The variance components as MRMCaov's summary prints them (with correlations)."""
    rows = [
        ("Var(R)", components.var_r, np.nan, "reader variance"),
        ("Var(T×R)", components.var_tr, np.nan, "modality × reader variance"),
        ("Var (error)", components.var, np.nan, "variance of one reader's FOM over cases"),
        (
            "Cov1",
            components.cov1,
            components.correlation("cov1"),
            "same reader, different modalities",
        ),
        (
            "Cov2",
            components.cov2,
            components.correlation("cov2"),
            "different readers, same modality",
        ),
        (
            "Cov3",
            components.cov3,
            components.correlation("cov3"),
            "different readers, different modalities",
        ),
        ("MS(T)", components.ms_t, np.nan, f"modality mean square ({components.df_t} df)"),
        ("MS(R)", components.ms_r, np.nan, f"reader mean square ({components.df_r} df)"),
        (
            "MS(T×R)",
            components.ms_tr,
            np.nan,
            f"modality × reader mean square ({components.df_tr} df)",
        ),
    ]
    return pd.DataFrame(rows, columns=["component", "estimate", "correlation", "meaning"])


def differences_frame(result: ORHillisResult) -> pd.DataFrame:
    """Every analysis' reader-averaged differences, each with the global test of equal FOMs
    (F for random readers or cases, chi-square for fixed readers), then the fixed-readers
    analysis' differences of each reader alone (`reader` set; no global test), one row each."""
    rows = []
    for analysis in result.analyses:
        test = analysis.global_test
        for d in (*analysis.differences, *analysis.reader_differences):
            alone = d.reader is not None
            rows.append(
                {
                    "analysis": analysis.name,
                    "reader": d.reader if alone else "mean of readers",
                    "comparison": d.comparison,
                    "estimate": d.estimate,
                    "se": d.se,
                    "df": d.df,
                    "statistic": "z" if np.isinf(d.df) else "t",
                    "value": d.statistic,
                    "p_value": d.p_value,
                    "ci_low": d.ci_low,
                    "ci_high": d.ci_high,
                    "test": "" if alone else test.statistic_name,
                    "test_value": np.nan if alone else test.statistic,
                    "test_df1": np.nan if alone else test.df1,
                    "test_df2": np.nan if alone else test.df2,
                    "test_p_value": np.nan if alone else test.p_value,
                }
            )
    return pd.DataFrame(rows)


def means_frame(result: ORHillisResult) -> pd.DataFrame:
    """Every analysis' per-modality means, then the fixed-readers per-reader FOMs."""
    rows = []
    for analysis in result.analyses:
        for e in (*analysis.means, *analysis.reader_means):
            rows.append(
                {
                    "analysis": analysis.name,
                    "modality": e.modality,
                    "reader": e.reader or "mean of readers",
                    "estimate": e.estimate,
                    "se": e.se,
                    "df": e.df,
                    "ci_low": e.ci_low,
                    "ci_high": e.ci_high,
                }
            )
    return pd.DataFrame(rows)
