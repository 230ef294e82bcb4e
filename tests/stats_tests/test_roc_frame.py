"""The ratings frame: what the ROC analysis reads, and the bad input it refuses in words."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.frame import AnalysisInputError
from analysis.stats.roc import roc_points
from analysis.stats.roc_frame import ratings_cube
from analysis.stats.roc_mrmc import auc_mrmc
from analysis.stats.roc_vs_models import readers_vs_model


def frame(readers=3, questions=8):
    rows = []
    for modality in ("unaided", "aided"):
        for j in range(readers):
            for q in range(questions):
                rows.append(
                    {
                        "reader": f"r{j}",
                        "modality": modality,
                        "case_id": f"x{q // 2}",
                        "question_id": f"q{q}",
                        "truth": q % 2,
                        "rating": (q % 2) * 2 + (q + j) % 3 + 1,
                    }
                )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.drop(columns="truth"), "missing column"),
        (lambda d: d.assign(truth=d["truth"].replace(1, 2)), "not 0 or 1"),
        (lambda d: d.assign(rating=d["rating"].where(d.index != 3)), "empty or not a number"),
        (
            lambda d: d.assign(rating=d["rating"].astype(object).where(d.index != 3, "high")),
            "not a number",
        ),
        (lambda d: pd.concat([d, d.iloc[[0]]]), "more than one rating"),
        (lambda d: d.assign(truth=np.where(d.index == 0, 1, d["truth"])), "different truths"),
        (
            lambda d: d.assign(case_id=np.where(d.index == 0, "x9", d["case_id"])),
            "different X-rays",
        ),
        (lambda d: d[~((d["reader"] == "r1") & (d["modality"] == "aided"))], "r1 in aided"),
        (lambda d: d.assign(case_id=None), "without case_id"),
    ],
)
def test_bad_ratings_are_refused_in_words(change, message):
    with pytest.raises(AnalysisInputError, match=message):
        ratings_cube(change(frame()))


def test_a_reader_missing_a_question_reads_as_partially_paired():
    data = frame().drop(index=5)
    cube = ratings_cube(data)
    assert cube.design == -1 and not cube.fully_paired
    auc_mrmc(data)  # jackknife and unbiased take it; DeLong refuses
    with pytest.raises(AnalysisInputError, match="every reader to rate every question"):
        auc_mrmc(
            data.assign(
                question_id=data["case_id"] + data["question_id"],
                case_id=data["case_id"] + data["question_id"],
            ),
            cov="DeLong",
        )


def test_modalities_are_ordered_as_asked_and_the_difference_follows():
    data = frame()
    data.loc[data["modality"] == "aided", "rating"] += data["truth"] * 3  # aided separates better
    result = auc_mrmc(data, modalities=["aided", "unaided"]).result
    assert result.modalities == ("aided", "unaided")
    assert result.random.differences[0].comparison == "aided − unaided"
    assert result.random.differences[0].estimate > 0
    with pytest.raises(AnalysisInputError, match="not in the order given"):
        ratings_cube(data, modalities=["aided"])


def test_an_xray_holding_every_positive_cannot_be_left_out():
    data = frame(questions=6)
    data["case_id"] = np.where(data["truth"] == 1, "all positives", data["question_id"])
    with pytest.raises(AnalysisInputError, match="without a positive or a negative"):
        auc_mrmc(data)


def test_operating_points_of_a_five_point_scale():
    points = roc_points([1, 1, 0, 0, 1, 0], [5, 3, 1, 3, 4, 2])
    assert list(points["threshold"]) == [np.inf, 5, 4, 3, 2, 1]
    assert list(points["fpr"]) == [0, 0, 0, 1 / 3, 2 / 3, 1]
    assert list(points["tpr"]) == [0, 1 / 3, 2 / 3, 1, 1, 1]


def test_a_model_named_like_a_reader_is_refused():
    data = frame()
    model = data.drop_duplicates("question_id")[["question_id", "rating"]]
    with pytest.raises(AnalysisInputError, match="also a reader"):
        readers_vs_model(data[data["modality"] == "aided"], model, name="r1")
    with pytest.raises(AnalysisInputError, match="one modality at a time"):
        readers_vs_model(data, model, name="AI")
