"""Readers of the MRMC packages' input files (analysis.package_files writes them): each turns
a file back into the cube `or_design` reads, so the tests check that a file holds exactly the
rows of our own analysis (and read the packages' own example files). Only tests read these
files back; the platform writes them.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from analysis.package_files import package_names
from analysis.stats import AnalysisInputError, Cube, Modalities, cube_from_rows


def _names_back(values: pd.Series, modalities: Modalities) -> pd.Series:
    """A package file's modality names -> the study's (names not written by us stay)."""
    reference, test = modalities.names
    back = dict(zip(package_names(modalities), (test, reference), strict=True))
    return values.astype(str).map(lambda v: back.get(v, v))


def read_mrmcaov(text: str, modalities: Modalities) -> Cube:
    """MRMCaov long rows (rating 0/1 = wrong/correct) -> cube. Accepts `test` for
    `treatment`; a file without `question` has one question per row."""
    data = pd.read_csv(io.StringIO(text), dtype={"reader": str, "case": str})
    data = data.rename(columns={"test": "treatment"})
    missing = {"reader", "treatment", "case", "rating"} - set(data.columns)
    if missing:
        raise AnalysisInputError(f"not an MRMCaov long file: no column(s) {sorted(missing)}")
    if not data["rating"].isin([0, 1]).all():
        raise AnalysisInputError("rating must be 0 (wrong) or 1 (correct)")
    rows = pd.DataFrame(
        {
            "reader": data["reader"].astype(str),
            "modality": _names_back(data["treatment"], modalities),
            "case_id": data["case"].astype(str),
            "question_id": data["question"] if "question" in data else np.arange(len(data)),
            "right": data["rating"].astype(bool),
            "counted": True,
            "reader_group": data["group"].astype(str) if "group" in data else "",
            "case_group": data["group"].astype(str) if "group" in data else "",
        }
    )
    return cube_from_rows(modalities, rows)


def read_imrmc(text: str, modalities: Modalities | None = None) -> tuple[Cube, pd.DataFrame]:
    """iMRMC input -> (cube with one 'question' per X-ray weighted by its score, truth rows).

    Scores must be proportions (0..1). The cube treats each X-ray as one unit of weight 1,
    which is iMRMC's X-ray-averaged accuracy."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip().upper() == "BEGIN DATA:")
    except StopIteration as error:
        raise AnalysisInputError("not an iMRMC file: no 'BEGIN DATA:' line") from error
    data = pd.read_csv(
        io.StringIO("\n".join(lines[start + 1 :])),
        header=None,
        names=["readerID", "caseID", "modalityID", "score"],
        dtype={"readerID": str, "caseID": str, "modalityID": str},
    )
    is_truth = data["readerID"].isin(["truth", "-1"]) | (data["modalityID"] == "truth")
    truth, scores = data[is_truth], data[~is_truth]
    if modalities is None:
        names = tuple(sorted(scores["modalityID"].unique()))
        modalities = Modalities(names, names, "from an iMRMC file")
    rows = pd.DataFrame(
        {
            "reader": scores["readerID"],
            "modality": _names_back(scores["modalityID"], modalities),
            "case_id": scores["caseID"],
            "question_id": scores["caseID"],
            "right": scores["score"].astype(float),
            "counted": 1.0,
            "reader_group": "",
            "case_group": "",
        }
    )
    return cube_from_rows(modalities, rows), truth


def read_rjafroc(content: bytes, modalities: Modalities) -> Cube:
    """JAFROC Excel -> cube: every TRUTH lesion of every listed reader and modality is a
    question; an LL mark rated above the case's highest NL mark is a correct answer."""
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(content), read_only=True)
    sheets = {name.upper(): book[name] for name in book.sheetnames}
    for old, new in (("FP", "NL"), ("TP", "LL")):
        if old in sheets:
            sheets[new] = sheets[old]
    for needed in ("TRUTH", "NL", "LL"):
        if needed not in sheets:
            raise AnalysisInputError(f"not a JAFROC file: no {needed} sheet")

    def table(sheet):
        values = list(sheet.iter_rows(values_only=True))
        return pd.DataFrame(values[1:], columns=values[0])

    truth, nl, ll = table(sheets["TRUTH"]), table(sheets["NL"]), table(sheets["LL"])
    nl = nl.rename(columns={"FP_Rating": "NL_Rating"})
    ll = ll.rename(columns={"TP_Rating": "LL_Rating"})
    lesions = truth[truth["LesionID"] > 0]
    floor = nl.groupby(["ReaderID", "ModalityID", "CaseID"])["NL_Rating"].max()
    marks = ll.set_index(["ReaderID", "ModalityID", "CaseID", "LesionID"])["LL_Rating"]
    rows = []
    for lesion in lesions.itertuples():
        for reader in str(lesion.ReaderID).split(","):
            for modality in str(lesion.ModalityID).split(","):
                rating = marks.get((reader, modality, lesion.CaseID, lesion.LesionID), -np.inf)
                rows.append(
                    {
                        "reader": reader,
                        "modality": modality,
                        "case_id": str(lesion.CaseID),
                        "question_id": f"{lesion.CaseID}-{lesion.LesionID}",
                        "right": rating > floor.get((reader, modality, lesion.CaseID), -np.inf),
                        "counted": True,
                        "reader_group": "",
                        "case_group": "",
                    }
                )
    rows = pd.DataFrame(rows)
    return cube_from_rows(
        modalities, rows.assign(modality=_names_back(rows["modality"], modalities))
    )
