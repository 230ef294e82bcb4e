"""Readers against a model on AUC and power from an AUC pilot, against RJafroc 2.1.3.

Stored references (`results/rjafroc.json`, written by `results/rjafroc.R`): StCadVsRad on
RJafroc's own dataset09 (standalone CAD, reader 1, against nine radiologists) and
SsPowerGivenJK with MRMCaov's VanDyke data as the pilot.
"""

import json

import numpy as np
import pandas as pd
import pytest

from analysis.stats import power
from analysis.stats.roc_mrmc import auc_mrmc
from analysis.stats.roc_power import auc_pilot, auc_power, auc_sample_size_table
from analysis.stats.roc_simulate import RoeMetz, simulate_ratings
from analysis.stats.roc_vs_models import auc_vs_models_table, readers_vs_model
from tests.roracle import ROC_RESULTS

RESULTS = ROC_RESULTS
NO_INTERACTION = RoeMetz(reader=0.2, modality_reader=0.0)
REFERENCE = json.loads((RESULTS / "rjafroc.json").read_text())
ANALYSES = {"RRRC": "random", "FRRC": "fixed-readers", "RRFC": "fixed-cases"}


def negative_pilot() -> pd.DataFrame:
    """A simulated pilot without modality x reader variance whose Var(T×R) estimate falls
    below 0 (as it does in about half of such pilots)."""
    return simulate_ratings(np.random.default_rng(1), NO_INTERACTION, readers=5, xrays=60)


def dataset09():
    data = pd.read_csv(RESULTS / "dataset09.csv").rename(columns={"case": "case_id"})
    cad = data[data["reader"] == 1][["case_id", "rating"]].rename(
        columns={"case_id": "question_id"}
    )
    return data[data["reader"] != 1], cad


def assert_close(ours, theirs, worst):
    ours, theirs = np.atleast_1d(ours).astype(float), np.atleast_1d(theirs).astype(float)
    difference = float(np.abs(ours - theirs).max())
    worst.append(difference)
    assert difference <= 1e-8, (ours, theirs)


def test_readers_vs_cad_is_rjafrocs_st_cad_vs_rad():
    readers, cad = dataset09()
    result, counts = readers_vs_model(readers, cad, name="CAD")
    worst = []
    rrrc, rrfc = (
        REFERENCE["dataset09_cad_vs_rad"]["RRRC"],
        REFERENCE["dataset09_cad_vs_rad"]["RRFC"],
    )
    assert_close(counts["model_auc"], rrrc["fomCAD"], worst)
    aucs = [counts["reader_aucs"][str(reader)] for reader in range(2, 11)]
    assert_close(aucs, rrrc["fomRAD"], worst)
    assert_close(counts["reader_mean"], rrrc["avgRadFom"], worst)
    assert_close(result.estimate, rrrc["avgDiffFom"], worst)
    random = result.random
    assert_close([random.ci_low, random.ci_high], rrrc["CIAvgDiffFom"], worst)
    assert_close(
        np.array([random.ci_low, random.ci_high]) + counts["model_auc"], rrrc["CIAvgRad"], worst
    )
    assert_close(
        [result.ms_r, result.var, result.cov2],
        [rrrc["varR"], rrrc["varError"], rrrc["cov2"]],
        worst,
    )
    assert_close(
        [random.statistic, random.df, random.p_value],
        [rrrc["Tstat"], rrrc["df"], rrrc["pval"]],
        worst,
    )
    fixed_cases = result.fixed_cases
    assert_close([fixed_cases.ci_low, fixed_cases.ci_high], rrfc["CIAvgDiffFom"], worst)
    assert_close(
        [fixed_cases.statistic, fixed_cases.df, fixed_cases.p_value],
        [rrfc["Tstat"], rrfc["df"], rrfc["pval"]],
        worst,
    )
    assert max(worst) <= 1e-8


def test_the_table_gives_one_row_per_model_with_the_readers_minus_model_difference():
    readers, cad = dataset09()
    models = pd.concat(
        [cad.assign(model="CAD"), cad.assign(model="inverted", rating=-cad["rating"])]
    )
    table = auc_vs_models_table(readers, models)
    assert list(table["model"]) == ["CAD", "inverted"]
    row = table.set_index("model").loc["CAD"]
    assert row["difference"] == pytest.approx(
        REFERENCE["dataset09_cad_vs_rad"]["RRRC"]["avgDiffFom"]
    )
    assert row["readers"] == 9 and row["n_questions"] == 200 and row["warning"] == ""
    # A model whose ratings are reversed has AUC 1 - AUC: the readers beat it by far.
    inverted = table.set_index("model").loc["inverted"]
    assert inverted["model_auc"] == pytest.approx(1 - row["model_auc"])
    assert inverted["ci_low"] > 0 and inverted["p_value"] < 1e-6


@pytest.mark.parametrize("design", range(len(REFERENCE["vandyke_power"])))
def test_power_from_the_vandyke_pilot_is_rjafrocs(design):
    reference = REFERENCE["vandyke_power"][design]
    data = pd.read_csv(RESULTS / "vandyke.csv").rename(
        columns={"treatment": "modality", "case": "case_id"}
    )
    pilot = auc_pilot(auc_mrmc(data))
    vc = reference["VarCom"]
    p = pilot.pilot
    worst = []
    assert_close(
        [p.var_tr, p.var, p.cov1, p.cov2, p.cov3],
        [vc["VarTR"], vc["Var"], vc["Cov1"], vc["Cov2"], vc["Cov3"]],
        worst,
    )
    for option, analysis in ANALYSES.items():
        ours = auc_power(
            pilot, reference["effect"], int(reference["J"]), int(reference["K"]), analysis=analysis
        )
        assert_close(ours, reference[option][f"power{option}"], worst)
    assert pilot.notes == ()


def test_a_negative_pilot_component_is_reported_not_silently_zeroed():
    pilot = auc_pilot(auc_mrmc(negative_pilot()))
    assert pilot.pilot.var_tr < 0
    assert any("Var(T×R) estimate is negative (−" in n for n in pilot.notes)
    table = auc_sample_size_table(pilot, 0.05)
    assert table["note"].str.contains("Var(T×R) estimate is negative", regex=False).all()
    fields = ("var", "cov1", "cov2", "cov3", "cases")
    clipped = power.Pilot(0.0, *[getattr(pilot.pilot, f) for f in fields])
    assert auc_power(pilot, 0.05, 5, 114) == pytest.approx(power.power(clipped, 0.05, 5, 114))
