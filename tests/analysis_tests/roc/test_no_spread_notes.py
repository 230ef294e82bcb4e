"""A ROC or confidence AUC whose interval cannot be given says why in its row, in the words of
its own table: every rating the same (no spread), or too few X-rays with a right and a wrong
answer; an empty interval cell never stands without words, and a zero-width interval from a
zero standard error is not shown as a 95% interval."""

import math

import numpy as np
import pandas as pd

from analysis.stats import auc_panel, confidence_discrimination


def ratings(rating) -> pd.DataFrame:
    """Two readers, 8 X-rays of one binary question each, half positive."""
    rows = [
        {
            "reader": reader,
            "modality": "unaided",
            "case_id": f"x{q}",
            "question_id": f"q{q}",
            "truth": q % 2,
            "rating": rating(reader, q),
        }
        for reader in ("Reader 1", "Reader 2")
        for q in range(8)
    ]
    return pd.DataFrame(rows)


def test_a_reader_who_rated_everything_the_same_has_no_interval_and_a_note_saying_why():
    table = auc_panel(ratings(lambda reader, q: 3 if reader == "Reader 1" else q % 2 + q % 3))
    same = table[(table["reader"] == "Reader 1")].iloc[0]
    assert same["auc"] == 0.5 and math.isnan(same["ci_low"]) and math.isnan(same["ci_high"])
    assert "no interval" in same["note"] and "standard error is 0" in same["note"]
    other = table[(table["reader"] == "Reader 2")].iloc[0]
    assert not math.isnan(other["ci_low"]) and "no interval" not in other["note"]


def answers(confidence, correct) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rater": "Reader 1",
            "case_id": np.arange(len(correct)),
            "confidence": confidence,
            "correct": correct,
        }
    )


def test_confidence_all_the_same_gives_no_zero_width_interval_but_words():
    row = confidence_discrimination(answers([3] * 8, [1, 0] * 4)).iloc[0]
    assert row["auc"] == 0.5 and row["se"] == 0.0
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert "no interval" in row["note"] and "standard error is 0" in row["note"]


def test_one_wrong_answer_says_so_in_right_and_wrong_answers_not_placeholders():
    row = confidence_discrimination(answers([5, 4, 3, 5, 2, 4], [1, 1, 1, 1, 0, 1])).iloc[0]
    assert row["note"].startswith("not estimable")
    assert "reader r in m" not in row["note"]
    assert "5 right and 1 wrong answer(s)" in row["note"]


def test_an_operating_point_without_positives_or_negatives_says_which_rate_it_lacks():
    from analysis.stats import operating_points

    data = pd.DataFrame(
        {
            "modality": "unaided",
            "reader": ["only positives"] * 3 + ["only negatives"] * 3 + ["both"] * 2,
            "truth": [1, 1, 1, 0, 0, 0, 1, 0],
            "present": [1, 0, 1, 0, 1, 0, 1, 0],
        }
    )
    table = operating_points(data).set_index("reader")
    assert math.isnan(table.loc["only positives", "fpr"])
    assert (
        "no negative question rated: no false-positive rate" in table.loc["only positives", "note"]
    )
    assert math.isnan(table.loc["only negatives", "tpr"])
    assert "no positive question rated: no sensitivity" in table.loc["only negatives", "note"]
    assert table.loc["both", "note"] == ""
