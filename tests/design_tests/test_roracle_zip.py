"""The ZIP as a PI downloads it, checked by the packages it names: the R commands of its own
mrmc/README.txt (parsed out of it, not retyped) run by MRMCaov 0.3.0 and RJafroc 2.1.3 on the
files beside it print every number of the page's aided-vs-unaided tables (estimate with its
sign, SE, df, CI, p, F or X2, the variance components) to 1e-8; power.csv equals RJafroc's
SsPowerGivenJK. Studies are made and read through the services (crossover, missing answers
under both policies, second read, split-plot, the demo's aided study). Skips, saying why,
where R or a package is absent (tests/roracle.py)."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from readerstudy.design.services import study_design_set
from readerstudy.models import ReaderStudy
from tests import roracle
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.design_tests.roracle_zip import (
    TOLERANCE,
    check_packages,
    download,
    far,
    one,
    read_study,
    run_readme,
    with_pi,
    xray_study,
)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.roracle,
    pytest.mark.usefixtures("figures_unrendered"),
]


@pytest.fixture(autouse=True)
def _r_packages():
    """Skip, saying why, before a study is built where R or a package is absent."""
    roracle.require("MRMCaov", "RJafroc")


def check_power(archive, folder) -> None:
    """power.csv (this study as the pilot) against RJafroc's SsPowerGivenJK from the ZIP's
    own rjafroc.xlsx, for the first rows with a number of X-rays (effect 0.05, power.csv's)."""
    table = pd.read_csv(io.BytesIO(archive.read("power.csv")))
    rows = table.dropna(subset=["x_rays"]).head(6)
    assert len(rows) >= 2, table
    (folder / "rjafroc.xlsx").write_bytes(archive.read("mrmc/rjafroc.xlsx"))
    calls = ", ".join(f"c({int(r.readers)}, {int(r.x_rays)})" for r in rows.itertuples())
    # SsPowerGivenJK takes an ROC dataset or OR variance components: the components RJafroc
    # estimates from the ZIP's (FROC-format) file, its pilot of KStar X-rays.
    program = f"""
ds <- RJafroc::DfReadDataFile("rjafroc.xlsx", newExcelFileFormat = TRUE)
vc <- RJafroc::St(ds, FOM = "AFROC1", method = "OR")$ANOVA$VarCom
pilot <- list(KStar = length(ds$ratings$NL[1, 1, , 1]), VarTR = vc["VarTR", "Estimates"],
  Cov1 = vc["Cov1", "Estimates"], Cov2 = vc["Cov2", "Estimates"],
  Cov3 = vc["Cov3", "Estimates"], Var = vc["Var", "Estimates"])
for (jk in list({calls})) cat(sprintf("%.17g\\n", RJafroc::SsPowerGivenJK(NULL, pilot,
  FOM = "Wilcoxon", J = jk[1], K = jk[2], effectSize = 0.05, method = "OR",
  analysisOption = "RRRC")$powerRRRC))
"""
    powers = [float(x) for x in roracle.run_r(program, folder).split()]
    assert powers == pytest.approx(list(rows["power"]), abs=1e-9)
    assert all(math.isfinite(p) for p in powers)


# The studies --------------------------------------------------------------------------------


@pytest.fixture
def read_crossover(db):
    """A crossover (unaided / aided, concurrent), 5 readers x 16 X-rays of 1-3 questions."""
    study = xray_study([1, 2, 3, 2, 1, 3, 2, 2, 1, 3, 2, 1, 2, 3, 1, 2])
    add_model(study)
    readers = add_readers(study, 5)
    study_design_set(study=study, design=crossover())
    read_study(study, readers, seed=5)
    return study, with_pi(study)


def test_crossover_packages_print_the_pages_numbers_with_its_sign_and_its_power(
    client, read_crossover, tmp_path
):
    study, pi = read_crossover
    archive, design = download(client, study, pi)
    out = check_packages(archive, design, tmp_path)
    check_power(archive, tmp_path)
    # the page's difference is aided better (the sign the packages must keep)
    assert out["mrmcaov.csv"]["random_readers"]["test_diffs"]["Estimate"] > 0
    assert design["tables"]["mrmc_difference"]["rows"][0]["comparison"] == "aided − unaided"


@pytest.mark.parametrize("missing", ["wrong", "exclude"])
def test_missing_answers_under_each_policy(client, db, tmp_path, missing):
    study = xray_study([2, 1, 3, 2, 2, 1, 3, 1, 2, 2, 3, 1, 2, 1])
    add_model(study)
    readers = add_readers(study, 4)
    study_design_set(study=study, design=crossover())
    read_study(study, readers, seed=7, skip=0.12)
    archive, design = download(client, study, with_pi(study), missing=missing)
    check_packages(archive, design, tmp_path)


def test_second_read_packages_print_final_minus_first(client, db, tmp_path):
    study = xray_study([1, 2, 3, 1, 2, 2, 1, 3, 2, 1, 2, 2])
    add_model(study)
    readers = add_readers(study, 4)
    study_design_set(study=study, design=crossover(arms="aided", aid_mode="second-read"))
    read_study(study, readers, seed=9, sessions=1)
    archive, design = download(client, study, with_pi(study))
    check_packages(archive, design, tmp_path, test="final", reference="first")


def test_demo_aided_study(client, demo, tmp_path):
    study = ReaderStudy.objects.get(slug="demo-aided")
    pi = get_user_model().objects.get(username="pi1")
    archive, design = download(client, study, pi)
    check_packages(archive, design, tmp_path)


def test_split_plot_readme_recipe_prints_the_pages_split_plot_rows(client, db, tmp_path):
    """MRMCaov has no split-plot design: its partially paired analysis of the whole file gives
    another SE (the README's old recipe handed that out as the page's). The README says so in
    words, and its lines (MRMCaov per group, combined as the page combines them) print the
    page's two rows."""
    roracle.require("MRMCaov")
    study = xray_study([2, 1, 3, 2, 1, 2, 3, 1, 2, 2, 1, 3, 2, 1, 2, 3])
    add_model(study)
    readers = add_readers(study, 6)
    study_design_set(study=study, design=crossover(groups=2))
    read_study(study, readers, seed=11)
    archive, design = download(client, study, with_pi(study))
    readme = " ".join(archive.read("mrmc/README.txt").decode().split())
    assert "MRMCaov 0.3.0 has no split-plot design" in readme
    assert "standard error, df, CI and p are NOT the page's" in readme
    assert "mrmc/rjafroc.xlsx" not in archive.namelist()
    whole_file = "fit <- mrmc(accuracy(truth, rating), treatment, reader, case, data = d)\n"
    out = run_readme(archive, tmp_path, then=whole_file)["mrmcaov.csv"]
    rows = out["split_plot"]
    assert rows["comparison"] == ["aided - unaided"] * 2
    page = design["tables"]["mrmc_difference"]["rows"]
    columns = {"difference": "estimate", "se": "se", "ci_low": "ci_low", "ci_high": "ci_high"}
    columns["p_value"] = "p_value"
    pairs = [
        (f"{row['analysis']} {ours}", row[ours], rows[theirs][i])
        for i, row in enumerate(page)
        for ours, theirs in columns.items()
    ]
    pairs.append(("random readers df", page[0]["df"], rows["df"][0]))
    bad = far(pairs)
    assert not bad, "the README's split-plot lines differ from the page: " + "; ".join(
        map(str, bad)
    )
    # what the README refuses: MRMCaov's own command on the whole file gives another SE
    assert abs(one(out["fit"]["test_diffs"]["StdErr"]) - page[0]["se"]) > 1e-4
    assert abs(one(out["fit"]["test_diffs"]["Estimate"]) - page[0]["difference"]) <= TOLERANCE
