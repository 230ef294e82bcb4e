"""RJafroc itself on simulated studies (seeded): power from a pilot whose Var(T×R) estimate is
negative (SsPowerGivenJK), and readers against a model's probabilities (StCadVsRad). Skips,
saying why, where R or RJafroc is absent."""

import json

import numpy as np
import pandas as pd
import pytest

from analysis.stats import (
    RoeMetz,
    auc_mrmc,
    auc_pilot,
    auc_power,
    model_probabilities,
    readers_vs_model,
    simulate_ratings,
)
from tests import roracle
from tests.stats_tests.test_auc_rjafroc import ANALYSES, negative_pilot

pytestmark = pytest.mark.roracle

DESIGNS = [{"J": 5, "K": 60, "effect": 0.05}, {"J": 8, "K": 200, "effect": 0.04}]


def cad_study():
    rng = np.random.default_rng(21)
    readers = simulate_ratings(rng, RoeMetz(), readers=6, xrays=80, modalities=("unaided",))
    return readers.drop(columns="modality"), model_probabilities(rng, readers)


@pytest.fixture(scope="module")
def rjafroc(tmp_path_factory):
    roracle.require("RJafroc")
    folder = tmp_path_factory.mktemp("rjafroc")
    pilot = negative_pilot().rename(columns={"case_id": "case"})
    pilot.to_csv(folder / "pilot.csv", index=False)
    readers, model = cad_study()
    # the model is reader "00": RJafroc's StCadVsRad takes the first reader as the model
    rows = pd.concat([readers, model.assign(reader="00")], ignore_index=True)
    rows = rows.assign(modality="1").rename(columns={"case_id": "case"})
    rows[["modality", "reader", "case", "truth", "rating"]].to_csv(folder / "cad.csv", index=False)
    designs = [f"{d['J']}:{d['K']}:{d['effect']}" for d in DESIGNS]
    out = folder / "out.json"
    roracle.rscript(
        "live_rjafroc.R", str(out), str(folder / "pilot.csv"), str(folder / "cad.csv"), *designs
    )
    return json.loads((folder / "out.json").read_text())


@pytest.mark.parametrize("design", range(len(DESIGNS)))
def test_power_from_a_negative_pilot_is_rjafrocs_and_says_so(rjafroc, design):
    reference = rjafroc["power"][design]
    pilot = auc_pilot(auc_mrmc(negative_pilot()))
    assert reference["VarCom"]["VarTR"] == pytest.approx(pilot.pilot.var_tr, abs=1e-8)
    assert pilot.pilot.var_tr < 0 and pilot.notes  # RJafroc sets it to 0 without a word
    for option, analysis in ANALYSES.items():
        ours = auc_power(
            pilot, reference["effect"], reference["J"], reference["K"], analysis=analysis
        )
        assert ours == pytest.approx(reference[option][f"power{option}"], abs=1e-8)


def test_readers_vs_model_probabilities_is_rjafrocs_st_cad_vs_rad(rjafroc):
    readers, model = cad_study()
    result, counts = readers_vs_model(readers, model[["question_id", "rating"]], name="AI")
    rrrc, rrfc = rjafroc["cad_vs_rad"]["RRRC"], rjafroc["cad_vs_rad"]["RRFC"]
    ours = [
        counts["model_auc"],
        *counts["reader_aucs"].values(),
        result.estimate,
        result.random.ci_low,
        result.random.ci_high,
        result.ms_r,
        result.var,
        result.cov2,
        result.random.statistic,
        result.random.df,
        result.random.p_value,
        result.fixed_cases.ci_low,
        result.fixed_cases.ci_high,
        result.fixed_cases.p_value,
    ]
    theirs = [
        rrrc["fomCAD"],
        *rrrc["fomRAD"],
        rrrc["avgDiffFom"],
        *rrrc["CIAvgDiffFom"],
        rrrc["varR"],
        rrrc["varError"],
        rrrc["cov2"],
        rrrc["Tstat"],
        rrrc["df"],
        rrrc["pval"],
        *rrfc["CIAvgDiffFom"],
        rrfc["pval"],
    ]
    assert np.abs(np.array(ours) - np.array(theirs)).max() <= 1e-8
