"""Readers' answers with a confidence as ROC ratings, and the tables a study with a scale gets
(analysis.confidence_analysis), on frames: MRMCaov's VanDyke ratings given as answers with a
confidence give MRMCaov's own numbers; what is not rated is left out and counted; a study
without binary questions has the confidence tables only."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.confidence_analysis import POOLED, confidence_results
from analysis.stats import AnalysisInputError, confidence_answers, empirical_auc, roc_ratings
from tests.analysis_tests.roc.scales import FIVE, PERCENT
from tests.stats_tests.mrmcaov_reference import compare

RESULTS = Path(__file__).parent / "results"
REFERENCE = json.loads((RESULTS / "mrmcaov_vandyke.json").read_text())
ARMS = {"1": "aided", "2": "unaided"}  # VanDyke's treatments as the arms read here


def vandyke_answers() -> pd.DataFrame:
    """VanDyke's 1-5 ratings as a reader gives them on a 1-5 confidence scale: ratings 1-2
    answer 'absent' (option B) sure (5) or less sure (4), ratings 3-5 'present' (option A)
    with confidence 1-3; the scale's rule orders them as the ratings (1 < 2 < 6 < 7 < 8), so
    every rank statistic is VanDyke's. Treatment 1 is read as the aided arm: aided − unaided
    is MRMCaov's 1 − 2."""
    d = pd.read_csv(RESULTS / "vandyke.csv")
    present = d["rating"] >= 3
    return pd.DataFrame(
        {
            "reader": d["reader"].astype(str),
            "arm": np.where(d["treatment"] == 1, "aided", "unaided"),
            "case_id": d["case"],
            "question_id": d["case"],
            "answer": np.where(present, "A", "B"),
            "correct_answer": np.where(d["truth"] == 1, "A", "B"),
            "present_option": "A",
            "confidence": np.where(present, d["rating"] - 2, 6 - d["rating"]),
        }
    )


@pytest.fixture(scope="module")
def vandyke_results():
    return confidence_results(vandyke_answers(), FIVE)


def test_vandyke_as_answers_gives_mrmcaovs_numbers(vandyke_results):
    mrmc = vandyke_results["mrmc"]
    assert mrmc.result.modalities == ("aided", "unaided")
    reference = REFERENCE["factorial"]
    for kind in ("random_readers", "fixed_readers"):
        assert compare(mrmc.result, reference[f"jackknife_{kind}"], modalities=ARMS) <= 1e-8
        delong = vandyke_results["compared"]["delong"].result
        assert compare(delong, reference[f"DeLong_{kind}"], modalities=ARMS) <= 1e-8
    assert compare(mrmc.result, reference["fixed_cases"], modalities=ARMS) <= 1e-8
    table = vandyke_results["tables"]["auc_difference"].data
    random = table[
        (table["covariance"] == "jackknife")
        & table["analysis"].str.startswith("random readers, random")
    ]
    row = random.iloc[0]
    assert (round(row["test_value"], 3), round(row["test_df2"], 2), round(row["p_value"], 4)) == (
        4.456,
        15.26,
        0.0517,
    )
    assert row["comparison"] == "aided − unaided"
    assert row["difference"] == pytest.approx(-0.04380032, abs=1e-8)


def test_each_readers_auc_is_vandykes(vandyke_results):
    auc = vandyke_results["tables"]["auc"].data
    ours = auc[auc["analysis"] == "this reader (normal)"].set_index(["modality", "reader"])["auc"]
    expected = np.asarray(REFERENCE["empirical_auc"], dtype=float)  # treatments x readers
    for t, arm in enumerate(("aided", "unaided")):
        for r in range(5):
            assert ours[(arm, str(r + 1))] == pytest.approx(expected[t][r], abs=1e-12)


def test_truth_is_the_key_being_the_present_option_and_unrated_questions_are_counted():
    frame = pd.DataFrame(
        {
            "reader": ["R1"] * 6,
            "arm": "unaided",
            "case_id": [1, 1, 2, 3, 4, 5],
            "question_id": ["q1", "q2", "q3", "q4", "q5", "q6"],
            "answer": ["A", "C", None, "B", "D", "A"],
            "correct_answer": ["A", "B", "C", "C", "D", "B"],
            "present_option": ["A", "C", "C", "C", "", None],
            "confidence": [5, 2, None, None, 3, 4],
        }
    )
    ratings, counts = roc_ratings(frame, FIVE)
    # q5 and q6 are multiple-choice questions; q3 has no answer, q4 no confidence
    assert list(ratings["question_id"]) == ["q1", "q2"]
    assert list(ratings["truth"]) == [1, 0]  # q2's key is B, its present option C
    assert list(ratings["rating"]) == [10.0, 7.0]  # present & sure; present (C) & unsure
    row = counts.iloc[0]
    assert (row["binary_questions"], row["rated"], row["no_answer"], row["no_confidence"]) == (
        4,
        2,
        1,
        1,
    )
    answers = confidence_answers(frame, FIVE)  # every question answered with a confidence
    assert list(answers["question_id"]) == ["q1", "q2", "q5", "q6"]
    assert list(answers["correct"]) == [1, 0, 1, 0]


def test_a_confidence_off_the_scale_or_a_present_option_not_a_letter_is_refused():
    frame = vandyke_answers().head(4).assign(confidence=[1, 2, 6, 3])
    with pytest.raises(AnalysisInputError, match="outside the scale 1–5"):
        roc_ratings(frame, FIVE)
    with pytest.raises(AnalysisInputError, match="present option"):
        roc_ratings(vandyke_answers().head(4).assign(present_option="yes"), FIVE)


def test_the_rule_orders_questions_as_answer_and_confidence_do():
    """Any order-keeping rule gives one AUC: the 2n-point rule's AUC is the AUC of the
    (answer, confidence) pairs ranked by hand."""
    frame = vandyke_answers()
    ratings, _ = roc_ratings(frame, FIVE)
    signed = np.where(frame["answer"] == "A", frame["confidence"], -frame["confidence"])
    truth = (frame["correct_answer"] == "A").to_numpy()
    for arm in ("aided", "unaided"):
        mine = ratings[(ratings["modality"] == arm) & (ratings["reader"] == "3")]
        rows = ((frame["arm"] == arm) & (frame["reader"] == "3")).to_numpy()
        assert empirical_auc(mine["truth"], mine["rating"]) == pytest.approx(
            empirical_auc(truth[rows], signed[rows]), abs=1e-15
        )


def test_a_percent_scale_gives_probabilities_to_calibrate():
    rng = np.random.default_rng(4)
    n = 80
    key = rng.choice(list("AB"), n)
    answer = np.where(rng.random(n) < 0.75, key, np.where(key == "A", "B", "A"))
    frame = pd.DataFrame(
        {
            "reader": np.repeat(["R1", "R2"], n // 2),
            "arm": "unaided",
            "case_id": np.arange(n) // 2,
            "question_id": np.arange(n) % (n // 2),
            "answer": answer,
            "correct_answer": key,
            "present_option": "A",
            "confidence": rng.integers(50, 101, n),
        }
    )
    frame["correct_answer"] = frame.groupby("question_id")["correct_answer"].transform("first")
    frame["case_id"] = frame["question_id"] // 2
    results = confidence_results(frame, PERCENT)
    calibration = results["tables"]["calibration"].data
    assert list(calibration["rater"]) == ["R1", "R2"]
    answers = confidence_answers(frame, PERCENT)
    for rater, row in calibration.set_index("rater").iterrows():
        mine = answers[answers["rater"] == rater]
        p = mine["confidence"] / 100
        assert row["brier"] == pytest.approx(float(((p - mine["correct"]) ** 2).mean()))
        assert row["brier_ci_low"] <= row["brier"] <= row["brier_ci_high"]
    # the ROC rating on a percent scale is the probability the finding is present
    ratings = results["ratings"]
    first = frame.iloc[0]
    expected = first["confidence"] if first["answer"] == "A" else 100 - first["confidence"]
    assert ratings.iloc[0]["rating"] == expected


def test_no_binary_question_gives_the_confidence_tables_only():
    frame = vandyke_answers().assign(present_option="")
    results = confidence_results(frame, FIVE)
    assert set(results["tables"]) == {"accuracy_by_confidence", "confidence_discrimination"}
    assert results["mrmc"] is None
    levels = results["tables"]["accuracy_by_confidence"].data
    assert set(levels["arm"]) == {"aided", "unaided"}
    pooled = levels[(levels["rater"] == POOLED) & (levels["arm"] == "aided")]
    aided = frame[frame["arm"] == "aided"]
    right = (aided["answer"] == aided["correct_answer"]).groupby(aided["confidence"]).mean()
    assert np.allclose(pooled["accuracy"], right.to_numpy())


def test_models_probabilities_are_their_ratings_beside_the_readers(vandyke_results):
    frame = vandyke_answers()
    questions = frame.drop_duplicates("question_id")
    truth = (questions["correct_answer"] == "A").to_numpy()
    rng = np.random.default_rng(1)
    present = 1 / (1 + np.exp(-(3 * (truth - 0.5) + rng.normal(0, 1, len(questions)))))
    answer_present = present > 0.5
    models = pd.DataFrame(
        {
            "model": "AI",
            "case_id": questions["case_id"],
            "question_id": questions["question_id"],
            "correct": (answer_present == truth).astype(int),
            "probability": np.where(answer_present, present, 1 - present),
            "present_probability": present,
            "answer_present": answer_present.astype(float),
        }
    )
    results = confidence_results(frame, FIVE, models=models)
    auc = results["tables"]["auc"].data
    model_auc = auc[(auc["modality"] == "model") & (auc["reader"] == "AI")]["auc"].iloc[0]
    assert model_auc == pytest.approx(empirical_auc(truth, present))
    versus = results["tables"]["auc_vs_models"].data.set_index("modality")
    for arm in ("aided", "unaided"):
        readers = auc[(auc["modality"] == arm) & (auc["analysis"] == "this reader (normal)")]
        assert versus.loc[arm, "difference"] == pytest.approx(readers["auc"].mean() - model_auc)
    points = results["tables"]["roc_operating_points"].data.set_index(["modality", "reader"])
    assert points.loc[("model", "AI"), "tpr"] == pytest.approx(answer_present[truth].mean())
    assert points.loc[("model", "AI"), "fpr"] == pytest.approx(answer_present[~truth].mean())
    assert "AI" in set(results["tables"]["calibration"].data["rater"])


def test_readers_against_a_model_in_a_split_plot_study_are_analysed_by_group():
    """Six readers in two groups reading their own X-rays: the readers' differences from the
    model vary within groups only (MS(R) on 6 − 2 df), as the accuracy analysis does it."""
    from analysis.stats import model_probabilities, readers_vs_model, simulate_ratings

    rng = np.random.default_rng(5)
    ratings = simulate_ratings(rng, readers=6, xrays=60, design="split-plot", groups=2)
    ratings = ratings[ratings["modality"] == "unaided"].drop(columns="modality")
    model = model_probabilities(rng, ratings)
    groups = {f"R{j + 1:02d}": j % 2 for j in range(6)}
    plain, _ = readers_vs_model(ratings, model)
    grouped, counts = readers_vs_model(ratings, model, reader_groups=groups)
    assert plain.fixed_cases.df == 5 and grouped.fixed_cases.df == 4
    assert grouped.estimate == pytest.approx(plain.estimate)
    differences = np.array([counts["reader_aucs"][r] for r in sorted(groups)]) - counts["model_auc"]
    own = np.array([differences[[g == k for g in groups.values()]].mean() for k in groups.values()])
    assert grouped.ms_r == pytest.approx(((differences - own) ** 2).sum() / 4)


def test_a_crossover_half_read_says_no_reader_has_rated_both_arms_yet():
    """Half-way through session 1 each reader has read one arm: the AUC comparison says so,
    not that there are no ratings (each arm's AUCs are there)."""
    answers = vandyke_answers()
    readers = sorted(answers["reader"].unique())
    half = answers[
        answers["reader"].isin(readers[::2]) & (answers["arm"] == "unaided")
        | answers["reader"].isin(readers[1::2]) & (answers["arm"] == "aided")
    ]
    results = confidence_results(half, FIVE)
    assert results["tables"]["auc_difference"].data["note"].tolist() == [
        "not estimable yet: no reader has rated binary questions in both arms"
    ]
    auc = results["tables"]["auc"].data
    assert set(auc.dropna(subset=["auc"])["modality"]) == {"aided", "unaided"}
