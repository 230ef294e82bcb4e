"""The statistics score each row against its `accepted` letters (several valid answers, and a
key that differs between readers shown different words), in every table that counts right
answers; without the column, against `correct_answer` as before. Hand counts throughout."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import stats
from analysis.stats.design import arm_accuracy
from analysis.stats.frame import right
from analysis.stats.items import item_analysis
from analysis.stats.timing import accuracy_by_time


def frame(accepted: list[str | None] | None = None) -> pd.DataFrame:
    """Two raters on three questions keyed A, B, C. q2 has several valid answers (B, D) for
    rater x; rater y, shown other words, is scored against C alone on q3."""
    rows = pd.DataFrame(
        {
            "question_id": ["q1", "q2", "q3"] * 2,
            "rater": ["x"] * 3 + ["y"] * 3,
            "answer": ["A", "D", "D", "B", "B", "C"],
            "correct_answer": ["A", "B", "C"] * 2,
            "task": "t",
            "case_id": ["c1", "c2", "c3"] * 2,
            "time_ms": [4000, 5000, 6000, 4000, 5000, 6000],
        }
    )
    if accepted is not None:
        rows["accepted"] = accepted
    return rows


def correct(table: pd.DataFrame) -> dict[str, int]:
    every = table[table["task"] == stats.ALL]
    return dict(zip(every["rater"], every["correct"].astype(int), strict=True))


def test_without_accepted_the_key_alone_is_right():
    # x: A D D against A B C -> 1; y: B B C -> 2.
    assert correct(stats.accuracy_table(frame(), "wrong")) == {"x": 1, "y": 2}
    assert right(frame()).tolist() == [True, False, False, False, True, True]


def test_accepted_letters_each_count_right_in_accuracy_kappa_and_mcnemar():
    rows = frame(["A", "BD", "CD", "A", "BD", "C"])
    # x: A (A) right, D (BD) right, D (CD) right -> 3; y: B (A) wrong, B right, C right -> 2.
    assert right(rows).tolist() == [True, True, True, False, True, True]
    assert correct(stats.accuracy_table(rows, "wrong")) == {"x": 3, "y": 2}
    wide = stats.correct_wide(rows, "wrong")
    assert wide["x"].tolist() == [1.0, 1.0, 1.0] and wide["y"].tolist() == [0.0, 1.0, 1.0]
    pair = stats.mcnemar_pairs(rows, ["x", "y"], "wrong").iloc[0]
    assert (pair["only_a_correct"], pair["only_b_correct"]) == (1, 0)


def test_an_empty_accepted_cell_falls_back_to_the_key_and_a_typo_is_refused():
    assert right(frame(["", None, "C", "A", "B", ""])).tolist() == right(frame()).tolist()
    with pytest.raises(stats.AnalysisInputError, match="not letters A-D"):
        stats.prepare(frame(["A", "BE", "C", "A", "B", "C"]))


def test_the_item_analysis_counts_no_accepted_letter_as_the_wrong_option():
    rows = frame(["A", "BD", "C", "A", "BD", "C"])
    items = item_analysis(rows).set_index("question_id")
    # q2: x chose D (accepted), y chose B: both right, no wrong option.
    assert items.loc["q2", "p_correct"] == 1.0 and pd.isna(items.loc["q2", "modal_wrong"])
    # q3: x chose D, not accepted: the wrong option.
    assert items.loc["q3", "modal_wrong"] == "D"


def test_reading_time_quartiles_and_the_arms_score_by_accepted_too():
    rows = frame(["A", "BD", "CD", "A", "BD", "C"])
    by_time = accuracy_by_time(rows, ["x"])
    assert int(by_time["correct"].sum()) == 3
    design = rows.rename(columns={"rater": "reader"}).assign(arm="unaided")
    table = arm_accuracy(design)
    every = table[(table["task"] == stats.ALL) & (table["reader"].isin(["x", "y"]))]
    assert dict(zip(every["reader"], every["correct"], strict=True)) == {"x": 3, "y": 2}
