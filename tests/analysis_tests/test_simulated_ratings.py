"""A simulated study with a 1-5 confidence scale and yes/no questions declared binary
(analysis.simulation), read through the services: the ZIP's AUC files, read back here and,
where R is present, by MRMCaov and RJafroc with the README's own commands, give the page's AUC
difference, sign included (a crossover: aided − unaided; a second read: final − first)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from analysis.simulation import Simulation, simulate
from analysis.stats import empirical_auc
from readerstudy.vocabulary import ConfidenceScale
from tests import roracle
from tests.analysis_tests.simulated_checks import interval_problems
from tests.design_tests.roracle_zip import r_commands

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.roracle,
    pytest.mark.usefixtures("figures_unrendered"),
]


def simulated(tmp_path, design: str):
    sim = Simulation(
        slug=f"rated-{design}",
        design=design,
        readers=5,
        xrays=20,
        questions_per_xray=(1, 3),
        seed=3,
        confidence=ConfidenceScale.FIVE,
        binary=0.6,
        missing=0.0,
        fast=0.0,
        rejected=0,
        excluded=0,
    )
    return simulate(sim, tmp_path / "source")


def r_present() -> bool:
    try:
        roracle.require("MRMCaov", "RJafroc")
    except pytest.skip.Exception:
        return False
    return True


@pytest.mark.parametrize("design", ["crossover", "second-read"])
def test_the_packages_read_the_pages_auc_difference_with_its_sign(client, tmp_path, design):
    made = simulated(tmp_path, design)
    result = StudyAnalysis(made.study, AnalysisSettings()).result
    table = result.table("auc_difference")
    page = table[(table["covariance"] == "jackknife") & table["analysis"].str.startswith("random")]
    page = page.iloc[0]
    expected = {"crossover": "aided − unaided", "second-read": "aided − aided (first answer)"}
    assert page["comparison"] == expected[design]
    assert not interval_problems(result.tables())
    client.force_login(made.pi)
    body = client.get(reverse("analysis-zip", args=[made.study.slug])).content
    archive = zipfile.ZipFile(io.BytesIO(body))
    folder = tmp_path / "mrmc"
    folder.mkdir()
    for name in archive.namelist():
        if name.startswith("mrmc/"):
            (folder / name.removeprefix("mrmc/")).write_bytes(archive.read(name))
    # The file read back: the mean of the readers' AUC differences, first name minus second.
    rows = pd.read_csv(folder / "mrmcaov_auc.csv")
    test, reference = sorted(rows["treatment"].unique())
    aucs = {
        (reader, treatment): empirical_auc(part["truth"], part["rating"])
        for (reader, treatment), part in rows.groupby(["reader", "treatment"])
    }
    readers = sorted(rows["reader"].unique())
    read_back = np.mean([aucs[(r, test)] - aucs[(r, reference)] for r in readers])
    assert read_back == pytest.approx(page["difference"], abs=1e-12)
    assert (folder / "rjafroc_auc.xlsx").exists()
    if not r_present():
        return
    readme = (folder / "README.txt").read_text()
    program = "\n".join(r_commands(readme, "mrmcaov_auc.csv"))
    program += '\ncat(sprintf("MRMCAOV %.17g\\n", summary(random_readers)$test_diffs$Estimate))'
    out = roracle.run_r(program, folder)
    mrmcaov = float(out.split("MRMCAOV ")[-1].split()[0])
    program = "\n".join(r_commands(readme, "rjafroc_auc.xlsx"))
    program += '\ncat(sprintf("RJAFROC %.17g\\n", random_readers$RRRC$ciDiffTrt$Estimate))'
    rjafroc = float(roracle.run_r(program, folder).split("RJAFROC ")[-1].split()[0])
    assert abs(mrmcaov - page["difference"]) <= 1e-8
    assert abs(rjafroc - page["difference"]) <= 1e-8
    assert np.sign(mrmcaov) == np.sign(rjafroc) == np.sign(page["difference"]) != 0
