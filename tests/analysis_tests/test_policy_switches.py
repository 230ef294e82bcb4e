"""The policy switches of issue 22 through the pure pipeline: rejected questions, the Holm
family, kappa caveats, the Methods section (no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from analysis import stats
from analysis.pipeline import AnalysisSettings, analyse
from analysis.reporting import methods_markdown
from analysis.stats import kappa_caveat

RATERS = [("Reader 1", "human"), ("Reader 2", "human"), ("Model", "model")]


def responses(n_questions: int = 48, rejected: tuple[int, ...] = (3,), seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        for rater, kind in RATERS:
            rows.append(
                {
                    "question_id": f"q{q}",
                    "rater": rater,
                    "rater_id": rater,
                    "rater_kind": kind,
                    "answer": "A" if rng.random() < 0.7 else "ABCD"[rng.integers(1, 4)],
                    "presented": True,
                    "correct_answer": "A",
                    "task": "Presence" if q % 2 else "Location",
                    "category": "c",
                    "case_id": f"x{q // 4}",
                    "time_ms": 12_000,
                    "excluded": False,
                    "excluded_reason": "",
                    "rejected": q in rejected,
                    "rejected_by": int(q in rejected),
                }
            )
    return pd.DataFrame(rows)


def with_fast_answers(frame: pd.DataFrame) -> pd.DataFrame:
    """Reader 1 answered q0..q5 in 300 ms (a key burst); all wrong but for q0."""
    frame = frame.copy()
    burst = (frame["rater"] == "Reader 1") & frame["question_id"].isin([f"q{i}" for i in range(6)])
    frame.loc[burst, "time_ms"] = 300
    frame.loc[burst, "answer"] = np.where(frame.loc[burst, "question_id"] == "q0", "A", "B")
    return frame


def test_fast_answers_are_counted_in_the_flow_and_kept_by_default():
    frame = with_fast_answers(responses(rejected=()))
    result = analyse(frame, AnalysisSettings(fast_answer_ms=2000))
    flow = result.flow.set_index("stage")
    row = flow.loc["Answers faster than 2000 ms"]
    assert row["questions"] == 6 and row["x_rays"] == 2
    assert row["detail"].startswith("6 answers by 1 reader:") and "kept" in row["detail"]
    per_rater = result.flow_raters.set_index("rater")
    assert per_rater.loc["Reader 1", "too_fast"] == 6 and per_rater.loc["Reader 2", "too_fast"] == 0
    assert per_rater.loc["Model", "too_fast"] == 0  # a model has no reading time
    accuracy = result.accuracy.set_index(["rater", "task"])
    assert accuracy.loc[("Reader 1", "All"), "n"] == 48
    assert "kept in the analysis" in result.settings.policy()["fast_answers"]


def test_fast_answers_can_be_left_out_of_the_readers_n():
    frame = with_fast_answers(responses(rejected=()))
    kept = analyse(frame, AnalysisSettings(fast_answer_ms=2000))
    left = analyse(frame, AnalysisSettings(fast_answer_ms=2000, exclude_fast=True))
    before = kept.accuracy.set_index(["rater", "task"]).loc[("Reader 1", "All")]
    after = left.accuracy.set_index(["rater", "task"]).loc[("Reader 1", "All")]
    # Under "missing = wrong" too: a left-out fast answer is in no n, it is not a wrong answer.
    assert after["n"] == before["n"] - 6 and after["correct"] == before["correct"] - 1
    other = left.accuracy.set_index(["rater", "task"]).loc[("Reader 2", "All"), "n"]
    assert other == 48
    assert "left out" in left.flow.set_index("stage").loc["Answers faster than 2000 ms", "detail"]
    assert left.flow_raters.set_index("rater").loc["Reader 1", "answered"] == 42
    assert left.reading_time[left.reading_time["rater"] == "Reader 1"]["n"].max() <= 42
    assert (
        "left out" in left.settings.describe()
        and "under 2000 ms" in left.settings.policy()["fast_answers"]
    )


def test_rejected_questions_are_left_out_by_default_and_counted_in_the_flow():
    result = analyse(responses(), AnalysisSettings())
    flow = result.flow.set_index("stage")
    assert flow.loc["Rejected by an expert", "questions"] == 1
    assert "left out" in flow.loc["Rejected by an expert", "detail"]
    assert flow.loc["Analysed", "questions"] == 47
    assert result.accuracy.set_index(["rater", "task"]).loc[("Model", "All"), "n"] == 47
    assert "questions an expert rejected are left out" in result.header_lines("accuracy").__str__()

    kept = analyse(responses(), AnalysisSettings(exclude_rejected=False))
    assert kept.flow.set_index("stage").loc["Analysed", "questions"] == 48
    assert "kept" in kept.flow.set_index("stage").loc["Rejected by an expert", "detail"]


@pytest.mark.parametrize("family", ["ai_vs_reader", "all_pairs"])
def test_holm_family_is_a_policy_choice_written_beside_the_adjusted_p(family):
    result = analyse(responses(), AnalysisSettings(holm_family=family))
    pairs = result.mcnemar.set_index(["rater_a", "rater_b"])
    readers_pair = pairs.loc[("Reader 1", "Reader 2")]
    inside = pairs[pairs["in_holm_family"]]
    assert np.allclose(inside["p_holm"], multipletests(inside["p_value"], method="holm")[1])
    if family == "ai_vs_reader":
        assert not readers_pair["in_holm_family"] and np.isnan(readers_pair["p_holm"])
        assert len(inside) == 2
    else:
        assert len(inside) == 3
    header = result.header_lines("mcnemar")
    assert f"holm_family: {family}" in header


def test_kappa_from_few_xrays_or_a_zero_width_interval_carries_words():
    frame = responses(n_questions=12)  # 3 X-rays
    pairs = stats.kappa_pairs(frame, n_boot=200)
    assert pairs["caveat"].str.contains("only 3 X-rays").all()
    # "n = 3, kappa = 1.0, 95% CI 1.0-1.0": words, not a precise-looking interval
    words = kappa_caveat(1.0, 1.0, 1.0, 3, 20)
    assert "only 3 X-rays" in words and "zero-width" in words
    assert kappa_caveat(0.6, 0.4, 0.8, 40, 20) == ""


def test_high_agreement_with_low_kappa_is_explained_with_pabak():
    # 40 questions on 40 X-rays: both say A on 38; one B each on different questions.
    rows = []
    for q in range(40):
        for rater in ("x", "y"):
            answer = "B" if (rater, q) in {("x", 0), ("y", 1)} else "A"
            rows.append(
                {"question_id": q, "rater": rater, "answer": answer, "correct_answer": "A",
                 "task": "T"}
            )  # fmt: skip
    row = stats.kappa_pairs(pd.DataFrame(rows), n_boot=100).iloc[0]
    assert row["agreement"] == pytest.approx(0.95) and row["kappa"] < 0.1
    assert "prevalence" in row["caveat"] and row["pabak"] > 0.9


def test_methods_section_reports_readers_seniority_rejections_and_methods():
    facts = {
        "readers": [
            {"name": "Reader 1", "seniority": "PGY-2"},
            {"name": "Reader 2", "seniority": ""},
        ],
        "conditions": {
            "random_order": True,
            "allow_revision": True,
            "show_indication": False,
            "lock_on_finish": False,
        },
        "ages": [50, 60, 70],
        "sexes": {"F": 2, "M": 1},
        "reviews": {"reviews": 4, "experts": 2, "questions_reviewed": 3, "decisions": {}},
    }
    result = analyse(responses(), AnalysisSettings(), facts)
    text = methods_markdown(result)
    assert "Reader 1 (PGY-2)" in text and "age median 60" in text
    assert "1 further question rejected by an expert (left out" in text
    assert "Clinical indication not shown" in text and "capped at 30 min" in text
    assert "Obuchowski" in text and "Korn" in text
    assert list(result.raters["seniority"]) == ["PGY-2", "", ""]
