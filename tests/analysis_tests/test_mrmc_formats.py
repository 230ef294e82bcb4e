"""MRMC-package files (MRMCaov, iMRMC, RJafroc): each round-trips through our analysis to the
same result, and each reader reads the package's own published example."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

from analysis.package_files import (
    R_BLOCK,
    id_map,
    package_files,
    readme_lines,
    to_imrmc,
    to_mrmcaov,
    to_rjafroc,
)
from analysis.stats import (
    CROSSOVER,
    AnalysisInputError,
    DesignPolicy,
    LatentModel,
    Modalities,
    design_results,
    or_design,
    simulate_frame,
)
from tests.analysis_tests.package_readers import read_imrmc, read_mrmcaov, read_rjafroc

ORACLES = Path(__file__).resolve().parents[1] / "resources" / "oracles"


def study(seed=12, questions=3):
    return simulate_frame(np.random.default_rng(seed), LatentModel(effect=0.2), 4, 15, questions)


def analyse(cube):
    return or_design(cube.correct, cube.counted)


def same(a, b):
    assert a.random.f == pytest.approx(b.random.f, abs=1e-12)
    assert a.random.df2 == pytest.approx(b.random.df2, abs=1e-9)
    assert a.random.estimate == pytest.approx(b.random.estimate, abs=1e-12)
    assert a.fixed.se == pytest.approx(b.fixed.se, abs=1e-12)


@pytest.mark.parametrize("missing", ["wrong", "exclude"])
def test_mrmcaov_file_round_trips(missing):
    frame = study()
    frame.loc[frame.index[::17], "answer"] = None
    ours = design_results(frame, DesignPolicy(missing=missing))["result"]
    text = to_mrmcaov(frame, missing)
    assert text.splitlines()[0] == "reader,treatment,case,question,truth,rating"
    same(analyse(read_mrmcaov(text, CROSSOVER)), ours)


def test_mrmcaov_reader_reads_the_published_vandyke_layout():
    """MRMCaov's VanDyke data (reader, treatment, case, truth, rating): its diseased cases with
    rating >= 3 as correct give MRMCaov's F = 6.689493 through our reader."""
    data = pd.read_csv(ORACLES / "vandyke.csv")
    data = data[data["truth"] == 1].assign(rating=lambda d: (d["rating"] >= 3).astype(int))
    modalities = Modalities(("1", "2"), ("1", "2"), "Van Dyke")
    result = analyse(read_mrmcaov(data.to_csv(index=False), modalities))
    assert result.random.f == pytest.approx(6.689493, abs=1e-6)


def test_imrmc_file_round_trips_with_equal_questions_per_xray():
    frame = study()
    ours = design_results(frame)["result"]
    text = to_imrmc(frame)
    assert "Every X-ray has 3 question(s) counted" in text
    cube, truth = read_imrmc(text, CROSSOVER)
    assert len(truth) == 15 and set(truth["score"]) == {1}
    same(analyse(cube), ours)


def test_imrmc_file_says_when_it_is_xray_averaged():
    frame = study()
    frame = frame[~frame["question_id"].str.endswith("x001-q3")]
    assert "X-ray-averaged accuracy" in to_imrmc(frame)


def test_imrmc_reader_reads_the_published_example():
    cube, truth = read_imrmc((ORACLES / "imrmc_input.imrmc").read_text())
    assert cube.modalities.names == ("testA", "testB")
    assert len(cube.readers) == 5 and len(cube.case_ids) == 80
    assert sorted(truth["score"].value_counts().to_dict().items()) == [(0, 40), (1, 40)]


def test_rjafroc_file_round_trips_and_follows_the_jafroc_layout():
    frame = study()
    ours = design_results(frame)["result"]
    content = to_rjafroc(frame)
    book = load_workbook(io.BytesIO(content))
    assert book.sheetnames[:3] == ["TRUTH", "FP", "TP"]
    header = [c.value for c in book["TRUTH"][1]]
    assert header == ["CaseID", "LesionID", "Weight", "ReaderID", "ModalityID", "Paradigm"]
    assert [book["TRUTH"]["F2"].value, book["TRUTH"]["F3"].value] == ["FROC", "FCTRL"]
    assert [c.value for c in book["FP"][1]] == ["ReaderID", "ModalityID", "CaseID", "FP_Rating"]
    assert [c.value for c in book["TP"][1]] == [
        "ReaderID",
        "ModalityID",
        "CaseID",
        "LesionID",
        "TP_Rating",
    ]
    same(analyse(read_rjafroc(content, CROSSOVER)), ours)


def test_rjafroc_is_not_written_for_split_plot():
    frame = study()
    groups = {"r1": "g1", "r2": "g1", "r3": "g2", "r4": "g2"}
    xray = frame["case_id"].str[1:].astype(int)
    frame = frame.assign(
        reader_group=frame["reader"].map(groups), case_group=np.where(xray % 2, "g1", "g2")
    )
    frame = frame[frame["reader_group"] == frame["case_group"]]
    with pytest.raises(AnalysisInputError, match="split-plot"):
        to_rjafroc(frame)
    files = package_files(frame)
    assert "rjafroc.xlsx" not in files and b"split-plot" in files["rjafroc_not_written.txt"]


def test_every_file_has_a_readme_part_with_r_commands_where_r_reads_it():
    files = package_files(study())
    lines = readme_lines(CROSSOVER, set(files), split_plot=False)
    for name in files:
        assert any(line.startswith(f"{name}: ") for line in lines), name
    assert sum(line.strip() == R_BLOCK for line in lines) == 2  # MRMCaov, RJafroc
    assert any("does not install" in line for line in lines if line.startswith("imrmc"))


def test_names_reach_the_files_only_as_codes():
    """A reader named like a formula or with a comma (iMRMC and RJafroc split on commas) is
    written as a code; the key maps codes back; the result is unchanged."""
    frame = study()
    frame["reader"] = (
        frame["reader"].map({"r1": "=HYPERLINK(1)", "r2": "Smith, J"}).fillna(frame["reader"])
    )
    ours = design_results(frame)["result"]
    files = package_files(frame)
    for name in ("mrmcaov.csv", "imrmc.imrmc"):
        text = files[name].decode()
        assert "HYPERLINK" not in text and "Smith" not in text
    book = load_workbook(io.BytesIO(files["rjafroc.xlsx"]))
    cells = [c.value for sheet in book for r in sheet.iter_rows() for c in r]
    assert not any(isinstance(v, str) and ("HYPERLINK" in v or v.startswith("=")) for v in cells)
    same(analyse(read_rjafroc(files["rjafroc.xlsx"], CROSSOVER)), ours)
    same(analyse(read_imrmc(files["imrmc.imrmc"].decode(), CROSSOVER)[0]), ours)
    key = id_map(frame)
    readers = key[key["kind"] == "reader"].set_index("code")["id"]
    assert readers["R01"] == "=HYPERLINK(1)" and readers["R02"] == "Smith, J"


def test_split_plot_mrmcaov_file_carries_the_groups_and_round_trips():
    """The split-plot file's `group` column (the README's per-group recipe splits on it)
    gives back the split-plot analysis, not a factorial one."""
    frame = study()
    groups = {"r1": "g1", "r2": "g1", "r3": "g2", "r4": "g2"}
    xray = frame["case_id"].str[1:].astype(int)
    frame = frame.assign(
        reader_group=frame["reader"].map(groups), case_group=np.where(xray % 2, "g1", "g2")
    )
    frame = frame[frame["reader_group"] == frame["case_group"]]
    ours = design_results(frame)["result"]
    text = to_mrmcaov(frame)
    data = pd.read_csv(io.StringIO(text))
    assert set(data["group"]) == {"g1", "g2"}
    assert data.groupby("reader")["group"].nunique().max() == 1
    cube = read_mrmcaov(text, CROSSOVER)
    again = or_design(
        cube.correct, cube.counted, reader_groups=cube.groups, case_groups=cube.case_groups
    )
    same(again, ours)
    assert again.random.se == pytest.approx(ours.random.se, abs=1e-12)
