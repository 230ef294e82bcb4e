"""A binary question whose adjudicated key accepts both its 'present' option and an 'absent'
one (several valid answers) has no truth for the ROC: it is left out of every reader's AUC
(and so the models'), and counted in words, rather than taken as positive by its old key."""

import pandas as pd

from analysis.confidence_analysis import confidence_results
from analysis.stats import roc_ratings
from tests.analysis_tests.roc.scales import FIVE


def answers(accepted_q2: str) -> pd.DataFrame:
    rows = []
    for reader in ("R1", "R2"):
        for q in range(6):
            rows.append(
                {
                    "reader": reader,
                    "arm": "unaided",
                    "case_id": q,
                    "question_id": f"q{q}",
                    "answer": "AB"[(q + (reader == "R2")) % 2],
                    "correct_answer": "AB"[q % 2],
                    "accepted": accepted_q2 if q == 2 else "AB"[q % 2],
                    "present_option": "A",
                    "confidence": 1 + q % 5,
                }
            )
    return pd.DataFrame(rows)


def test_a_binary_question_accepting_present_and_absent_is_left_out_and_counted():
    ratings, counts = roc_ratings(answers("AB"), FIVE)
    assert "q2" not in set(ratings["question_id"])
    row = counts.set_index("reader").loc["R1"]
    assert (row["binary_questions"], row["rated"], row["no_truth"]) == (6, 5, 1)
    assert (row["positives"], row["negatives"]) == (2, 3)
    kept, counted = roc_ratings(answers("A"), FIVE)
    assert "q2" in set(kept["question_id"]) and counted["no_truth"].sum() == 0


def test_the_counts_table_says_what_no_truth_means():
    tables = confidence_results(answers("AB"), FIVE)["tables"]
    assert "both the 'present' option and an 'absent' one" in tables["roc_counts"].method
