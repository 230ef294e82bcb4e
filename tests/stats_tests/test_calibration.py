"""Calibration and confidence against scikit-learn and hand computation; bad input refused."""

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from analysis.stats.bounded import auc_note
from analysis.stats.clustered import clustered_proportion_ci
from analysis.stats.confidence import accuracy_by_confidence, confidence_discrimination
from analysis.stats.frame import AnalysisInputError
from analysis.stats.probability_calibration import (
    Binning,
    assign_bins,
    calibration,
    multiclass_brier_table,
)


def brier_score(outcome, probability) -> float:
    """The Brier score by its definition: the mean squared difference between probability
    and outcome (binary)."""
    outcome, probability = np.asarray(outcome, float), np.asarray(probability, float)
    return float(np.mean((probability - outcome) ** 2))


def expected_calibration_error(outcome, probability, binning: Binning) -> float:
    """ECE by its definition on `binning`'s bins: sum_b |sum of probabilities_b - sum of
    outcomes_b| / N, from the rows themselves (`calibration` sums per X-ray first)."""
    outcome, probability = np.asarray(outcome, float), np.asarray(probability, float)
    bins = assign_bins(probability, binning.edges(probability))
    gap = np.bincount(bins, probability - outcome, minlength=binning.bins)
    return float(np.abs(gap).sum() / len(probability))


def events(seed=0, xrays=40, per=3):
    rng = np.random.default_rng(seed)
    n = xrays * per
    frames = []
    for rater, sharpness in (("AI", 3.0), ("reader 1", 1.0)):
        p = rng.beta(sharpness, sharpness, n)
        p[:3] = [0.0, 1.0, 0.1]  # the edges of the bins, as calibration_curve puts them
        frames.append(
            pd.DataFrame(
                {
                    "rater": rater,
                    "case_id": np.repeat(np.arange(xrays), per),
                    "probability": p,
                    "outcome": (rng.random(n) < p**1.3).astype(int),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("binning", [Binning(), Binning(5), Binning(8, "quantile")])
def test_brier_and_bins_are_scikit_learns(binning):
    data = events()
    summary, bins = calibration(data, binning, n_boot=200)
    for rater, part in data.groupby("rater"):
        row = summary.set_index("rater").loc[rater]
        assert row["brier"] == pytest.approx(
            brier_score_loss(part["outcome"], part["probability"]), abs=1e-12
        )
        observed, predicted = calibration_curve(
            part["outcome"], part["probability"], n_bins=binning.bins, strategy=binning.strategy
        )
        ours = bins[bins["rater"] == rater]
        assert np.allclose(ours["observed"], observed, atol=1e-12)
        assert np.allclose(ours["mean_probability"], predicted, atol=1e-12)
        assert ours["n"].sum() == len(part)
        # ECE: the bins' gaps weighted by their share of the questions
        weights = ours["n"] / len(part)
        ece = float((weights * (ours["mean_probability"] - ours["observed"]).abs()).sum())
        assert row["ece"] == pytest.approx(ece, abs=1e-12)
        assert row["ece"] == pytest.approx(
            expected_calibration_error(part["outcome"], part["probability"], binning)
        )
        assert row["brier_ci_low"] <= row["brier"] <= row["brier_ci_high"]
        assert 0 <= row["ece_ci_low"] < row["ece_ci_high"] and row["ece_bias_corrected"] >= 0


def test_a_bins_interval_is_the_clustered_wilson_interval_by_xray():
    data = events()
    _, bins = calibration(data, n_boot=50)
    part = data[data["rater"] == "AI"]
    in_bin = (part["probability"] > 0.4) & (part["probability"] <= 0.5)
    sums = part[in_bin].groupby("case_id")["outcome"].agg(["sum", "size"])
    expected = clustered_proportion_ci(sums["sum"].to_numpy(), sums["size"].to_numpy())
    row = bins[(bins["rater"] == "AI") & (bins["bin"] == 5)].iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.ci_low[0], expected.ci_high[0])
    )


def test_the_bootstrap_keeps_an_xrays_questions_together():
    """Questions that copy each other within an X-ray carry no more information than one
    question: the interval by X-ray is as wide as with one question per X-ray, the interval by
    question far narrower."""
    one = events(xrays=60, per=1).query("rater == 'AI'")
    copied = one.loc[one.index.repeat(6)]
    by_xray = calibration(copied, n_boot=1000)[0].iloc[0]
    alone = calibration(one, n_boot=1000)[0].iloc[0]
    by_question = calibration(copied.assign(case_id=np.arange(len(copied))), n_boot=1000)[0]
    width = lambda row: row["brier_ci_high"] - row["brier_ci_low"]  # noqa: E731
    assert width(by_xray) == pytest.approx(width(alone), rel=0.15)
    assert width(by_question.iloc[0]) < 0.6 * width(by_xray)


def test_multiclass_brier_is_scikit_learns():
    rng = np.random.default_rng(2)
    n, options = 50, ["A", "B", "C", "D"]
    probabilities = rng.dirichlet(np.ones(4), n)
    keys = rng.integers(0, 4, n)
    rows = pd.DataFrame(
        {
            "rater": "AI",
            "case_id": np.repeat(np.arange(25), 2),
            "question_id": np.arange(n),
        }
    ).merge(pd.DataFrame({"option": options}), how="cross")
    rows["probability"] = probabilities.ravel()
    rows["correct"] = (rows["option"] == np.asarray(options)[keys[rows["question_id"]]]).astype(int)
    table = multiclass_brier_table(rows, n_boot=200)
    expected = brier_score_loss(np.asarray(options)[keys], probabilities, labels=options)
    assert table.iloc[0]["brier"] == pytest.approx(expected, abs=1e-12)
    assert table.iloc[0]["brier_ci_low"] < expected < table.iloc[0]["brier_ci_high"]
    broken = rows.assign(probability=rows["probability"] * 1.1)
    with pytest.raises(AnalysisInputError, match="do not sum to 1"):
        multiclass_brier_table(broken)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"probability": 1.2}, "outside 0-1"),
        ({"probability": np.nan}, "outside 0-1"),
        ({"outcome": 2}, "not 0 or 1"),
        ({"case_id": None}, "without case_id"),
    ],
)
def test_bad_input_is_refused_in_words(change, message):
    data = events()
    data.loc[5, list(change)] = list(change.values())
    with pytest.raises(AnalysisInputError, match=message):
        calibration(data, n_boot=10)


def test_brier_score_by_hand():
    assert brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]) == pytest.approx(0.0375)


def answers():
    rng = np.random.default_rng(4)
    rows = []
    for reader, insight in (("reader 1", 1.0), ("reader 2", 0.0)):
        confidence = rng.integers(1, 6, 300)
        p_right = 0.5 + insight * (confidence - 3) * 0.12  # reader 1 knows; reader 2 does not
        rows.append(
            pd.DataFrame(
                {
                    "rater": reader,
                    "case_id": np.arange(300) // 3,
                    "confidence": confidence,
                    "correct": (rng.random(300) < p_right).astype(int),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_accuracy_rises_with_confidence_for_a_reader_who_knows():
    table = accuracy_by_confidence(answers(), pooled="readers (pooled)")
    knows = table[table["rater"] == "reader 1"].set_index("confidence")
    assert knows.loc[5, "accuracy"] > knows.loc[1, "accuracy"]
    assert knows.loc[5, "ci_low"] > knows.loc[1, "ci_high"]
    pooled = table[table["rater"] == "readers (pooled)"]
    assert pooled["n"].sum() == 600
    part = answers().query("rater == 'reader 1' and confidence == 4")
    assert knows.loc[4, "accuracy"] == pytest.approx(part["correct"].mean())


def test_confidence_discrimination_is_the_auc_of_confidence_for_right_answers():
    data = answers()
    table = confidence_discrimination(data).set_index("rater")
    for reader, part in data.groupby("rater"):
        expected = roc_auc_score(part["correct"], part["confidence"])
        assert table.loc[reader, "auc"] == pytest.approx(expected, abs=1e-12)
    assert table.loc["reader 1", "ci_low"] > 0.5  # knows when right
    assert table.loc["reader 2", "ci_low"] < 0.5 < table.loc["reader 2", "ci_high"]
    always_right = data.assign(correct=1)
    assert confidence_discrimination(always_right)["note"].str.startswith("not estimable").all()


def test_a_rater_with_wrong_answers_on_one_xray_is_told_so_in_the_tables_words():
    """The note speaks of this rater's right and wrong answers, not of the placeholder reader
    and modality the ROC computation is handed."""
    data = answers().query("rater == 'reader 1'")
    wrong_xray = data.loc[data["correct"] == 0, "case_id"].iloc[0]
    data = data.assign(correct=(data["case_id"] != wrong_xray).astype(int))
    note = confidence_discrimination(data).loc[0, "note"]
    assert note.startswith("not estimable: ") and "wrong answer" in note
    assert " r in m " not in note and "positive" not in note


def test_a_question_twice_for_one_rater_is_refused():
    data = events().assign(question_id=lambda d: d.groupby("rater").cumcount())
    with pytest.raises(AnalysisInputError, match="more than one probability"):
        calibration(pd.concat([data, data.iloc[[0]]]), n_boot=10)
    answered = answers().assign(question_id=lambda d: d.groupby("rater").cumcount())
    with pytest.raises(AnalysisInputError, match="more than one answer"):
        accuracy_by_confidence(pd.concat([answered, answered.iloc[[0]]]))


def test_a_discrimination_interval_past_one_says_so_in_its_note():
    """Six X-rays, three right and three wrong answers rated nearly apart: the AUC's normal
    interval reaches past 1. It is shown as computed, with the row's note saying it is
    uninformative past the bound (as every AUC interval of the analysis)."""
    data = pd.DataFrame(
        {
            "rater": "r",
            "case_id": [1, 2, 3, 4, 5, 6],
            "confidence": [5, 4, 2, 1, 3, 3],
            "correct": [1, 1, 0, 0, 1, 0],
        }
    )
    row = confidence_discrimination(data).iloc[0]
    assert row["ci_high"] > 1 and row["ci_low"] < row["auc"]
    assert row["note"] == auc_note(-1.0, 2.0)
