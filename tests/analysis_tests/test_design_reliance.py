"""Reliance on the AI: agreement when the AI was right vs wrong, second-read switches, and the
X-ray-clustered interval (oracle from the formulas and coverage by simulation)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from analysis.stats.design import design_results
from analysis.stats.reliance import (
    POOLED,
    agreement_with_ai,
    clustered_proportion,
    second_read_switches,
)


def row(reader, xray, q, answer, ai, truth, first=None, arm="aided"):
    return {
        "reader": reader,
        "arm": arm,
        "case_id": xray,
        "question_id": f"{xray}-{q}",
        "task": "t",
        "answer": answer,
        "first_answer": first,
        "ai_answer": ai,
        "correct_answer": truth,
    }


def second_read_frame():
    # (reader, xray, q, final, ai, truth, first)
    reads = [
        ("r1", "x1", 1, "A", "A", "A", "B"),  # wrong -> right, to the (right) AI
        ("r1", "x1", 2, "C", "C", "D", "D"),  # right -> wrong, to the (wrong) AI
        ("r1", "x2", 1, "B", "C", "B", "B"),  # kept, disagrees with a wrong AI
        ("r1", "x2", 2, "A", "A", "A", "A"),  # kept, agrees with a right AI
        ("r2", "x1", 1, "B", "A", "A", "A"),  # right -> wrong, away from the (right) AI
        ("r2", "x1", 2, "D", "C", "D", "D"),  # kept, disagrees with a wrong AI
        ("r2", "x2", 1, "C", "C", "B", "C"),  # kept, agrees with a wrong AI
        ("r2", "x2", 2, "A", None, "A", "B"),  # wrong -> right, the AI gave no answer
    ]
    return pd.DataFrame([row(r, x, q, a, ai, t, f) for r, x, q, a, ai, t, f in reads])


def test_switch_counts_per_reader_and_pooled():
    table = second_read_switches(second_read_frame()).set_index("reader")
    r1, r2, pooled = table.loc["r1"], table.loc["r2"], table.loc[POOLED]
    assert (r1["changed_k"], r1["wrong_to_right_k"], r1["right_to_wrong_k"]) == (2, 1, 1)
    assert (r1["to_ai_k"], r1["away_from_ai_k"]) == (2, 0)
    assert (r2["changed_k"], r2["wrong_to_right_k"], r2["right_to_wrong_k"]) == (2, 1, 1)
    assert (r2["to_ai_k"], r2["away_from_ai_k"]) == (0, 1)
    assert pooled["changed_n"] == 8 and pooled["changed"] == pytest.approx(0.5)
    # Automation bias: first answer differed from a wrong AI: r1 x1-2 (adopted), r1 x2-1 (no),
    # r2 x1-2 (no) -> 1 of 3; from a right AI: r1 x1-1 (adopted) -> 1 of 1.
    assert (pooled["adopted_ai_when_ai_wrong_k"], pooled["adopted_ai_when_ai_wrong_n"]) == (1, 3)
    assert (pooled["adopted_ai_when_ai_right_k"], pooled["adopted_ai_when_ai_right_n"]) == (1, 1)


def test_agreement_when_ai_right_and_wrong():
    table = agreement_with_ai(second_read_frame()).set_index("reader")
    pooled = table.loc[POOLED]
    # AI right (final answers): r1 x1-1 agree, r1 x2-2 agree, r2 x1-1 no -> 2/3.
    assert (pooled["agree_when_ai_right_k"], pooled["agree_when_ai_right_n"]) == (2, 3)
    # AI wrong: r1 x1-2 agree, r1 x2-1 no, r2 x1-2 no, r2 x2-1 agree -> 2/4.
    assert (pooled["agree_when_ai_wrong_k"], pooled["agree_when_ai_wrong_n"]) == (2, 4)
    assert pooled["no_ai_answer"] == 1


def test_reliance_tables_come_with_unit_method_and_policy():
    tables = design_results(second_read_frame())["tables"]
    switches = tables["second_read_switches"]
    assert "X-rays are the clusters" in switches.unit
    assert "clustered Wilson" in switches.method
    assert "missing answer" in switches.policy


def oracle_clustered(successes, clusters, alpha=0.05):
    """From the formulas: p = sum y / n; cluster-robust variance of the ratio estimator
    C/(C-1) sum_k (y_k - p n_k)^2 / n^2; deff = that / (p(1-p)/n), at least 1; Wilson on
    n / deff."""
    totals, sizes = {}, {}
    for y, c in zip(successes, clusters, strict=True):
        totals[c] = totals.get(c, 0) + y
        sizes[c] = sizes.get(c, 0) + 1
    n, p = len(successes), sum(successes) / len(successes)
    big_c = len(totals)
    robust = big_c / (big_c - 1) * sum((totals[c] - p * sizes[c]) ** 2 for c in totals) / n**2
    deff = max(robust / (p * (1 - p) / n), 1)
    m = n / deff
    z = 1.959963984540054
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z / (1 + z * z / m) * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
    return centre - half, centre + half


def test_clustered_interval_matches_the_formulas():
    rng = np.random.default_rng(4)
    clusters = np.repeat(np.arange(30), 4)
    successes = (rng.random(120) < np.repeat(rng.random(30), 4)).astype(int)
    _, _, _, low, high = clustered_proportion(successes, clusters)
    assert (low, high) == pytest.approx(oracle_clustered(successes, clusters), abs=1e-12)


def test_clustered_interval_is_wilson_without_clustering():
    from statsmodels.stats.proportion import proportion_confint

    successes = np.array([1] * 30 + [0] * 10)
    _, _, _, low, high = clustered_proportion(successes, np.arange(40))
    wilson = proportion_confint(30, 40, method="wilson")
    # One row per X-ray: the robust variance is C/(C-1) times the binomial one, so the
    # design effect is 40/39 > 1; the interval is Wilson on n = 39.
    assert low < wilson[0] and high > wilson[1]
    assert (low, high) == pytest.approx(
        proportion_confint(30 * 39 / 40, 39, method="wilson"), abs=1e-12
    )


def test_clustered_interval_coverage_with_correlated_questions():
    """40 X-rays x 4 questions sharing an X-ray effect: coverage of the 95% interval >= 0.93
    (1000 fixed-seed replicates; an interval ignoring the X-ray covers under 0.90 here)."""
    rng = np.random.default_rng(99)
    clusters = np.repeat(np.arange(40), 4)
    hits = wilson_hits = 0
    n = 1000
    latent_mean = 0.6
    truth = norm.cdf(latent_mean / math.sqrt(1 + 0.8**2))  # P(correct), X-ray effect sd 0.8
    for _ in range(n):
        xray = np.repeat(rng.normal(0, 0.8, 40), 4)
        successes = (latent_mean + xray + rng.standard_normal(160) > 0).astype(int)
        _, _, _, low, high = clustered_proportion(successes, clusters)
        hits += low <= truth <= high
        wilson_hits += abs(successes.mean() - truth) <= 1.96 * np.sqrt(truth * (1 - truth) / 160)
    assert hits / n >= 0.93
    assert wilson_hits / n < 0.9  # the clustering matters in this setting
