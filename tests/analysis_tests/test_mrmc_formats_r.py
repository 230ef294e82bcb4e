"""The package files' modality order, read by the packages themselves: MRMCaov and RJafroc
sort the modality names they read and print the first minus the second, so the files must
name the modalities so that the test modality sorts first (RJafroc printed
`trtaided-trtunaided = -0.0857` for a file listing `unaided,aided` where aided was better).
Skips, saying why, where R or a package is absent (tests/roracle.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.package_files import package_files, package_names
from analysis.stats import (
    CROSSOVER,
    SECOND_READ,
    LatentModel,
    Modalities,
    design_results,
    simulate_frame,
)
from tests import roracle

pytestmark = pytest.mark.roracle


@pytest.mark.parametrize(
    "modalities", [CROSSOVER, SECOND_READ, Modalities(("b", "a"), ("b", "a"), "")]
)
def test_r_sorts_the_test_modality_first(tmp_path, modalities):
    roracle.require()
    names = package_names(modalities)
    assert names[0].endswith(modalities.names[1]) and names[1].endswith(modalities.names[0])
    quoted = ", ".join(f'"{n}"' for n in reversed(names))
    printed = roracle.run_r(f"cat(sort(c({quoted})), sep = '\\n')", tmp_path).split()
    assert printed == list(names)


def test_both_packages_print_aided_minus_unaided_with_its_sign(tmp_path):
    roracle.require("MRMCaov", "RJafroc")
    frame = simulate_frame(np.random.default_rng(4), LatentModel(effect=1.0), 4, 20, 2)
    ours = design_results(frame)["result"].random.estimate
    assert ours > 0.05  # aided clearly better: a reversed sign cannot pass as equal
    for name, body in package_files(frame).items():
        (tmp_path / name).write_bytes(body)
    program = f"""
source("{roracle.ROC_RESULTS / "mrmcaov_summary.R"}")
d <- read.csv("mrmcaov.csv")
accuracy <- function(truth, rating) mean(rating)
m <- summary(mrmc(accuracy(truth, rating), treatment, reader, case, data = d))$test_diffs
ds <- RJafroc::DfReadDataFile("rjafroc.xlsx", newExcelFileFormat = TRUE)
r <- RJafroc::St(ds, FOM = "AFROC1", method = "OR")$FOMs
write_reference(list(mrmcaov = as.character(m$Comparison), mrmcaov_estimate = m$Estimate,
  rjafroc = rownames(r$trtMeanDiffs), rjafroc_estimate = r$trtMeanDiffs[1, 1],
  rjafroc_aided = r$trtMeans["trtaided", 1]), "out.json")
"""
    roracle.run_r(program, tmp_path)
    out = json.loads((tmp_path / "out.json").read_text())
    aided = design_results(frame)["result"].means[1].estimate
    assert out["mrmcaov"] == "aided - unaided"
    assert out["mrmcaov_estimate"] == pytest.approx(ours, abs=1e-12)
    assert out["rjafroc"] == "trtaided-trtunaided"
    assert out["rjafroc_estimate"] == pytest.approx(ours, abs=1e-12)
    assert out["rjafroc_aided"] == pytest.approx(aided, abs=1e-12)
