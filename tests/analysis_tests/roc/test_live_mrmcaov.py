"""MRMCaov itself on simulated reader studies (seeded), every number of its summaries against
ours: a factorial study, a split-plot study (readers and X-rays in two groups, which MRMCaov
analyses as a partially paired factorial design), cases nested within readers, and X-rays
holding one to three questions each (the X-ray as MRMCaov's case). Skips, saying why, where
R or MRMCaov is absent."""

import json

import numpy as np
import pytest

from analysis.stats import RoeMetz, auc_mrmc, simulate_ratings
from tests import roracle
from tests.stats_tests.mrmcaov_reference import compare

pytestmark = pytest.mark.roracle

MODEL = RoeMetz(effect=0.3)
# name: (simulation, MRMCaov's case column, covariance methods, design MRMCaov names)
STUDIES = {
    "factorial": (
        dict(readers=6, xrays=50, seed=11),
        "case_id",
        ["jackknife", "DeLong", "unbiased"],
        1,
    ),
    "split_plot": (
        dict(readers=6, xrays=60, design="split-plot", groups=2, seed=12),
        "case_id",
        ["jackknife", "unbiased"],
        -1,
    ),
    "cases_within_readers": (
        dict(readers=4, xrays=80, design="cases within readers", seed=13),
        "case_id",
        ["jackknife", "unbiased"],
        2,
    ),
    # MRMCaov calls a study whose X-rays hold different numbers of questions "partially
    # paired" (its table of rows per reader, modality and case is unequal); every reader rated
    # every question, so we call it factorial. The analysis is the same for both codes.
    "several_questions_per_xray": (
        dict(readers=5, xrays=40, questions_per_xray=(1, 3), seed=14),
        "case_id",
        ["jackknife"],
        -1,
    ),
}


def study(name):
    settings = dict(STUDIES[name][0])
    rng = np.random.default_rng(settings.pop("seed"))
    return simulate_ratings(rng, MODEL, **settings)


@pytest.fixture(scope="module")
def mrmcaov(tmp_path_factory):
    roracle.require("MRMCaov")
    folder = tmp_path_factory.mktemp("mrmcaov")
    jobs = []
    for name, (_, case, methods, _) in STUDIES.items():
        csv = folder / f"{name}.csv"
        data = study(name).rename(columns={"modality": "treatment"})
        data.assign(case=data[case]).to_csv(csv, index=False)
        jobs.append(f"{name}={csv}={'+'.join(methods)}")
    roracle.rscript("live.R", str(folder / "out.json"), *jobs)
    return json.loads((folder / "out.json").read_text())


CASES = [
    (name, method, readers)
    for name, (_, _, methods, _) in STUDIES.items()
    for method in methods
    for readers in ("random_readers", "fixed_readers")
] + [(name, "jackknife", "fixed_cases") for name in STUDIES]


@pytest.mark.parametrize(("name", "method", "kind"), CASES)
def test_mrmcaov_gives_our_numbers(mrmcaov, name, method, kind):
    reference = mrmcaov[name][kind if kind == "fixed_cases" else f"{method}_{kind}"]
    result = auc_mrmc(study(name), cov=method).result
    assert compare(result, reference, design=STUDIES[name][3]) <= 1e-8


def test_the_simulated_studies_are_the_designs_named():
    assert auc_mrmc(study("factorial")).cube.design == 1
    assert auc_mrmc(study("split_plot")).cube.design == -1
    assert auc_mrmc(study("cases_within_readers")).cube.design == 2
    clustered = auc_mrmc(study("several_questions_per_xray")).cube
    assert clustered.design == 1 and not clustered.one_question_per_case
