"""Intervals that respect the X-ray, few readers, not-estimable results.

Oracles are written here from the published formulas (loops over X-rays, the paper's own
variance terms), not from the code; the simulations are bounded (fixed seeds, a second or
two). The long versions are in benchmarks/bench_uncertainty.py (`make bench`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis import stats
from analysis.stats import mrmc
from analysis.stats.clustered import clustered_paired_difference, clustered_proportion_ci

Z = sps.norm.ppf(0.975)


def wilson(x: float, n: float, z: float = Z) -> tuple[float, float]:
    """Wilson (1927) score interval, written out."""
    centre = (x + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(x * (n - x) / n + z * z / 4)
    return centre - half, centre + half


def clopper_pearson(x: float, n: float, alpha: float = 0.05) -> tuple[float, float]:
    low = 0.0 if x == 0 else sps.beta.ppf(alpha / 2, x, n - x + 1)
    high = 1.0 if x == n else sps.beta.ppf(1 - alpha / 2, x + 1, n - x)
    return low, high


def frame_of(correct_by_xray: list[list[int]], rater: str = "r1") -> pd.DataFrame:
    rows = []
    for k, answers in enumerate(correct_by_xray):
        for j, ok in enumerate(answers):
            rows.append(
                {
                    "question_id": f"x{k}-q{j}",
                    "rater": rater,
                    "answer": "A" if ok else "B",
                    "correct_answer": "A",
                    "task": "T",
                    "case_id": f"x{k}",
                }
            )
    return pd.DataFrame(rows)


X_RAYS = [[1, 1, 1, 1], [0, 0, 0, 1], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1], [1, 1, 1, 1]]


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_accuracy_interval_oracle_from_the_design_effect_formulas(method):
    """Rao & Scott / Korn & Graubard by hand: ratio-estimator variance, deff, n* = N/deff
    times (z / t_{C-1})^2, then the binomial interval for p n* of n*."""
    y = [sum(x) for x in X_RAYS]
    m = [len(x) for x in X_RAYS]
    c, n = len(y), sum(m)
    p = sum(y) / n
    v = c / (c - 1) * sum((yk - p * mk) ** 2 for yk, mk in zip(y, m, strict=True)) / n**2
    deff = v / (p * (1 - p) / n)
    n_star = n / deff * (Z / sps.t.ppf(0.975, c - 1)) ** 2
    expected = (wilson if method == "wilson" else clopper_pearson)(p * n_star, n_star)
    row = stats.accuracy_table(frame_of(X_RAYS), method=method).iloc[-1]
    assert row["deff"] == pytest.approx(deff) and deff > 2  # strongly clustered on purpose
    assert row["n_eff"] == pytest.approx(n_star)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected)
    assert row["x_rays"] == 6 and row["n"] == 24
    # wider than the interval that treats the 24 questions as independent
    plain_low, plain_high = wilson(sum(y), n)
    if method == "wilson":
        assert row["ci_high"] - row["ci_low"] > 1.4 * (plain_high - plain_low)


def test_accuracy_interval_at_100_percent_is_not_degenerate():
    """p = 1: no variance to measure clustering, deff 1; Wilson still gives a real interval."""
    row = stats.accuracy_table(frame_of([[1, 1], [1, 1], [1, 1]])).iloc[-1]
    assert row["accuracy"] == 1.0 and row["deff"] == 1.0
    assert row["ci_low"] < 0.8 and row["ci_high"] == 1.0


def test_paired_difference_oracle_obuchowski_1998():
    """Obuchowski (1998) eqs: var(p1), var(p2), cov(p1, p2) with C/(C-1) over X-rays;
    X = (p1 - p2) / sqrt(var1 + var2 - 2 cov), here on t with C - 1 df."""
    rng = np.random.default_rng(3)
    c = 12
    m = rng.integers(1, 6, size=c)
    a = [rng.integers(0, 2, size=k) for k in m]
    b = [rng.integers(0, 2, size=k) for k in m]
    x1 = [int(v.sum()) for v in a]
    x2 = [int(v.sum()) for v in b]
    n = int(m.sum())
    p1, p2 = sum(x1) / n, sum(x2) / n
    f = c / ((c - 1) * n * n)
    var1 = f * sum((x - k * p1) ** 2 for x, k in zip(x1, m, strict=True))
    var2 = f * sum((x - k * p2) ** 2 for x, k in zip(x2, m, strict=True))
    cov = f * sum((u - k * p1) * (w - k * p2) for u, w, k in zip(x1, x2, m, strict=True))
    se = math.sqrt(var1 + var2 - 2 * cov)
    t = (p1 - p2) / se
    got = clustered_paired_difference(np.subtract(x1, x2), m)
    assert got.difference == pytest.approx(p1 - p2)
    assert got.se == pytest.approx(se)
    assert got.p_value == pytest.approx(2 * sps.t.sf(abs(t), c - 1))
    q = sps.t.ppf(0.975, c - 1)
    assert (got.ci_low, got.ci_high) == pytest.approx((p1 - p2 - q * se, p1 - p2 + q * se))

    # The same through the pairs table, from the long frame.
    frame = pd.concat(
        [
            frame_of([list(v) for v in a], "A"),
            frame_of([list(v) for v in b], "B"),
        ]
    )
    row = stats.mcnemar_pairs(frame).iloc[0]
    assert row["p_value"] == pytest.approx(got.p_value) and row["x_rays"] == c


def test_paired_difference_with_no_disagreement_is_not_estimable_and_says_why():
    got = clustered_paired_difference(np.zeros(5), np.full(5, 3))
    assert got.difference == 0 and math.isnan(got.p_value) and math.isnan(got.ci_low)
    assert "never differ" in got.note


def test_fixed_readers_oracle_is_the_jackknife_of_the_reader_mean():
    """FRRC: leave one X-ray out, recompute the mean over readers; jackknife variance
    (C-1)/C sum (theta_(k) - mean)^2; normal interval."""
    rng = np.random.default_rng(5)
    readers, c = 3, 15
    sizes = rng.integers(1, 5, size=c)
    sums = np.array([[rng.integers(0, s + 1) for s in sizes] for _ in range(readers)], float)
    n = sizes.sum()
    left_out = [
        np.mean([(sums[r].sum() - sums[r, k]) / (n - sizes[k]) for r in range(readers)])
        for k in range(c)
    ]
    centre = np.mean(left_out)
    var = (c - 1) / c * sum((v - centre) ** 2 for v in left_out)
    result = mrmc.or_single_treatment(sums, sizes=sizes)
    assert result.se_fixed == pytest.approx(math.sqrt(var))
    mean = sums.sum() / (readers * n)
    assert result.mean == pytest.approx(mean)
    assert result.ci_low_fixed == pytest.approx(mean - Z * math.sqrt(var))


def test_no_variance_is_not_estimable_never_zero_with_ci_0_0():
    """Mid-study: every reader and the model right on every question."""
    result = mrmc.ai_versus_readers(np.ones((3, 10)), np.ones(10))
    assert result.mean == 0.0 and math.isnan(result.ci_low) and math.isnan(result.p_value)
    assert result.note.startswith("not estimable")


def test_few_readers_warning_and_fixed_readers_beside_random():
    rng = np.random.default_rng(2)
    rows = []
    for q in range(30):
        for rater in ("r1", "r2", "r3", "AI"):
            rows.append(
                {
                    "question_id": q,
                    "rater": rater,
                    "answer": "A" if rng.random() < 0.7 else "B",
                    "correct_answer": "A",
                    "task": "T",
                    "case_id": q // 3,
                }
            )
    frame = pd.DataFrame(rows)
    table = stats.ai_vs_readers_table(frame, ["r1", "r2", "r3"], ["AI"], min_readers=4)
    row = table.iloc[0]
    assert "Only 3 readers" in row["warning"] and "fixed-readers" in row["warning"]
    assert row["ci_low_fixed"] < row["difference"] < row["ci_high_fixed"]
    assert row["df"] > 0 and row["ms_r"] >= 0
    assert (
        stats.ai_vs_readers_table(frame, ["r1", "r2", "r3"], ["AI"], min_readers=3).iloc[0][
            "warning"
        ]
        == ""
    )


def _clustered_accuracy_draws(rng, n_rep, c, m, p, rho):
    """n_rep studies of c X-rays x m questions: each X-ray's chance drawn from a beta with
    mean p and intra-X-ray correlation rho (beta-binomial)."""
    a, b = p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho
    chance = rng.beta(a, b, size=(c, n_rep))
    return rng.binomial(m, chance).astype(float), np.full((c, n_rep), float(m))


@pytest.mark.parametrize("p", [0.6, 0.75])
def test_accuracy_ci_coverage_with_40_xrays_of_4_questions(p):
    """Bounded simulation: strong correlation within the X-ray (rho = 0.5). Coverage of the
    clustered interval >= 0.93; the interval that ignores the X-ray falls well short."""
    rng = np.random.default_rng(20261125)
    correct, counted = _clustered_accuracy_draws(rng, 2000, 40, 4, p, 0.5)
    ci = clustered_proportion_ci(correct, counted)
    coverage = np.mean((ci.ci_low <= p) & (p <= ci.ci_high))
    assert coverage >= 0.93
    naive = [wilson(x, 160) for x in correct.sum(axis=0)]
    naive_coverage = np.mean([lo <= p <= hi for lo, hi in naive])
    assert naive_coverage < 0.88


def test_clustered_mcnemar_type_one_error_with_40_xrays_of_4_questions():
    """Two raters with equal accuracy, sharing X-ray difficulty and each with its own X-ray
    effect: the clustered test rejects a true null at most 6% of the time."""
    rng = np.random.default_rng(7)
    c, m, reps = 40, 4, 2000
    rejected = 0
    for _ in range(reps):
        shared = rng.normal(0, 1.5, c)
        correct = []
        for _rater in range(2):
            logit = 1.1 + shared + rng.normal(0, 1.0, c)
            correct.append(rng.binomial(m, 1 / (1 + np.exp(-logit))))
        result = clustered_paired_difference(correct[0] - correct[1], np.full(c, m))
        rejected += result.p_value < 0.05
    assert rejected / reps <= 0.06


def test_questions_all_on_one_xray_have_no_interval_and_say_why():
    """Mid-study: four questions answered, all on one X-ray."""
    row = stats.accuracy_table(frame_of([[1, 0, 1, 1]])).iloc[-1]
    assert row["accuracy"] == 0.75 and math.isnan(row["ci_low"])
    assert row["note"] == "not estimable: all 4 questions on one X-ray"
