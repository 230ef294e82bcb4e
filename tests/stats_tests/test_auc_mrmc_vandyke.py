"""AUC OR/Hillis against MRMCaov's own VanDyke analyses, every number its summary prints.

`results/vandyke.csv` is MRMCaov's `VanDyke` data (5 readers, 2 modalities, 114 cases, 1-5
ratings, with its codings of the nested designs) and `results/mrmcaov_vandyke.json` MRMCaov
0.3.0's summaries of it, both written by `results/vandyke.R`.
"""

import json

import numpy as np
import pandas as pd
import pytest

from analysis.stats.frame import AnalysisInputError
from analysis.stats.roc import auc_table, empirical_auc, roc_curves
from analysis.stats.roc_mrmc import auc_mrmc
from tests.roracle import ROC_RESULTS
from tests.stats_tests.mrmcaov_reference import compare

RESULTS = ROC_RESULTS
REFERENCE = json.loads((RESULTS / "mrmcaov_vandyke.json").read_text())
DESIGNS = {"factorial": "case", "cases_within_readers": "case2", "cases_within_tests": "case3"}


def vandyke(case: str = "case") -> pd.DataFrame:
    data = pd.read_csv(RESULTS / "vandyke.csv", dtype={"case2": str, "case3": str})
    return data.rename(columns={"treatment": "modality"}).assign(case_id=data[case])


def test_the_acceptance_numbers():
    """F = 4.456, df2 = 15.26, p = 0.0517: MRMCaov's mrmc(empirical_auc(truth, rating), ...)."""
    result = auc_mrmc(vandyke()).result
    test = result.random.global_test
    assert (round(test.statistic, 3), round(test.df2, 2), round(test.p_value, 4)) == (
        4.456,
        15.26,
        0.0517,
    )
    difference = result.random.differences[0]
    assert difference.comparison == "1 − 2"
    assert difference.estimate == pytest.approx(-0.04380032, abs=1e-8)


CASES = [
    (design, name)
    for design, analyses in REFERENCE.items()
    if design in DESIGNS
    for name in analyses
]


@pytest.mark.parametrize(("design", "name"), CASES)
def test_every_number_of_mrmcaovs_summary(design, name):
    reference = REFERENCE[design][name]
    method = reference["cov_method"] if reference["cov_method"] != "NULL" else "jackknife"
    result = auc_mrmc(vandyke(DESIGNS[design]), cov=method).result
    assert compare(result, reference) <= 1e-8


def test_aucs_and_operating_points_are_mrmcaovs():
    data = vandyke()
    table = auc_table(data)
    expected = np.asarray(REFERENCE["empirical_auc"], dtype=float)
    assert np.abs(table["auc"].to_numpy() - expected.ravel()).max() <= 1e-12
    curves = roc_curves(data)
    for curve in REFERENCE["roc_points"]:
        ours = curves[(curves.modality == curve["treatment"]) & (curves.reader == curve["reader"])]
        # MRMCaov lists the points from (1, 1) down to (0, 0); ours go up.
        assert np.allclose(ours["fpr"], curve["FPR"][::-1], atol=1e-12)
        assert np.allclose(ours["tpr"], curve["TPR"][::-1], atol=1e-12)


def test_auc_is_the_mann_whitney_statistic_with_ties_counted_half():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    truth = rng.random(60) < 0.4
    rating = rng.integers(1, 6, 60)  # a 5-point scale: many ties
    assert empirical_auc(truth, rating) == pytest.approx(roc_auc_score(truth, rating), abs=1e-12)
    assert empirical_auc([1, 0], [3, 3]) == 0.5


def test_delong_and_unbiased_refuse_several_questions_per_xray():
    data = vandyke().assign(question_id=lambda d: d["case_id"], case_id=lambda d: d["case_id"] // 2)
    auc_mrmc(data)  # the jackknife leaves out whole X-rays
    for method in ("DeLong", "unbiased"):
        with pytest.raises(AnalysisInputError, match="leaves out whole X-rays"):
            auc_mrmc(data, cov=method)
