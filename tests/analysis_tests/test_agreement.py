"""One Fleiss' kappa: the experts' agreement in the review queue counts the same questions as
the analysis's Fleiss table, those every member of the panel rated, whichever subsets of the
questions the experts happened to review."""

import pandas as pd
import pytest

from analysis import stats
from analysis.agreement import panel_agreement

# Three experts; "c" reviewed only the first four questions, so most questions have two
# ratings and four have three.
VERDICTS = {
    "a": "AABBCCDDAABB",
    "b": "ABBBCDDDABBA",
    "c": "AACB",
}


def frame() -> pd.DataFrame:
    rows = [
        {
            "question_id": f"q{n:02d}",
            "rater": rater,
            "answer": letter,
            "correct_answer": "A",
            "task": "Presence",
            "case_id": f"x{n:02d}",
        }
        for rater, letters in VERDICTS.items()
        for n, letter in enumerate(letters)
    ]
    return pd.DataFrame(rows)


def test_the_review_queue_and_the_analysis_count_the_same_questions():
    df = frame()
    queue = panel_agreement(df[["question_id", "rater", "answer"]])
    analysis = stats.fleiss_table(df, ["a", "b", "c"], n_boot=0).set_index("task").loc["All"]
    assert queue["kappa_questions"] == analysis["n"] == 4
    assert queue["fleiss_kappa"] == pytest.approx(analysis["kappa"], abs=1e-12)
    # Pairwise agreement still uses every question two or more experts rated.
    assert queue["questions"] == 12


def test_fleiss_kappa_by_hand_on_the_questions_the_whole_panel_rated():
    # q00: A A A; q01: A B A; q02: B B C; q03: B B B (categories A, B, C; m = 3).
    agree = [1, 1 / 3, 1 / 3, 1]
    p_bar = sum(agree) / 4
    shares = {"A": 5 / 12, "B": 6 / 12, "C": 1 / 12}
    p_e = sum(p**2 for p in shares.values())
    expected = (p_bar - p_e) / (1 - p_e)
    result = panel_agreement(frame()[["question_id", "rater", "answer"]])
    assert result["fleiss_kappa"] == pytest.approx(expected, abs=1e-12)
