"""Obuchowski-Rockette / Hillis on accuracy: against MRMCaov on the Van Dyke data, and the
single-modality intervals of the readers against an AI."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.stats import mrmc
from analysis.stats.or_accuracy import or_design

ORACLES = Path(__file__).resolve().parents[1] / "resources" / "oracles"


def vandyke_scores():
    data = pd.read_csv(ORACLES / "vandyke.csv")
    diseased = data[data["truth"] == 1]
    cube = diseased.pivot_table(index=["treatment", "reader"], columns="case", values="rating")
    scores = (cube.to_numpy() >= 3).astype(float)
    return scores.reshape(2, 5, -1)


def test_two_treatments_matches_mrmcaov():
    """The accuracy analysis (`or_design`, one question per case) on the Van Dyke data read as
    binary (rating >= 3 on the diseased cases) gives MRMCaov's F, df2 and p."""
    scores = vandyke_scores()
    result = or_design(scores, np.ones_like(scores)).random
    assert result.f == pytest.approx(6.689493, abs=1e-6)
    assert result.df2 == pytest.approx(15.71732, abs=1e-5)
    assert result.p_value == pytest.approx(0.02008822, abs=1e-8)
    assert result.ci_low < result.estimate < result.ci_high


def test_ai_versus_readers():
    rng = np.random.default_rng(0)
    truth_hard = rng.random(200) < 0.3
    readers = np.array([(rng.random(200) < np.where(truth_hard, 0.5, 0.9)) for _ in range(4)])
    perfect_ai = np.ones(200)
    result = mrmc.ai_versus_readers(readers, perfect_ai)
    assert result.mean == pytest.approx(readers.mean() - 1.0)
    assert result.p_value < 1e-6 and result.ci_high < 0
    same = mrmc.ai_versus_readers(readers, readers[0])
    assert same.ci_low < same.mean < same.ci_high


def test_needs_two_readers():
    with pytest.raises(ValueError, match="two readers"):
        mrmc.or_single_treatment(np.ones((1, 10)))


def test_fixed_readers_se_floors_a_negative_reader_covariance_at_zero_as_mrmcaov():
    """Two readers who are right on opposite X-rays: their jackknife covariance (Cov2) is
    negative. MRMCaov's one-test fixed-readers SE (`summary.mrmc_tests_frrc`) is
    sqrt((Var + (r - 1) max(Cov2, 0)) / r): a negative Cov2 must not shrink the interval."""
    scores = np.array([[1, 0, 1, 0, 1, 1, 0, 1], [0, 1, 0, 1, 0, 1, 1, 0]], float)
    result = mrmc.panel_accuracy(scores)
    assert result.cov2 < 0
    r = scores.shape[0]
    assert result.se_fixed == pytest.approx(np.sqrt(result.var / r), rel=1e-12)
    half = 1.959963984540054 * result.se_fixed
    assert (result.ci_low_fixed, result.ci_high_fixed) == pytest.approx(
        (result.mean - half, result.mean + half), rel=1e-12
    )
