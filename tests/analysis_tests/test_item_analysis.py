"""item_analysis against values computed by hand (no database).

The frame: three readers r1-r3 and two models m1, m2 on four questions; m2 gave no answer to
q2 (a failed extraction). q3 is "mis-keyed": four of five raters chose D, the key is C.

         key  r1 r2 r3 m1 m2          correct   r1 r2 r3 m1 m2
    q1    A    A  A  B  A  B            q1      1  1  0  1  0
    q2    B    B  B  B  C  -            q2      1  1  1  0  -
    q3    C    C  D  D  D  D            q3      1  0  0  0  0
    q4    D    D  A  D  D  A            q4      1  0  1  1  0

Each rater answered 4, 4, 4, 4, 3 questions and got 4, 2, 2, 2, 0 right. The rest score of a
rater on a question is their share correct on the other questions they answered, e.g. for r1
on q1 (4-1)/3 = 1, for m2 on q1 (0-0)/(3-1) = 0.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.stats import DIFFICULTY_LEVELS, FIT_LEVELS, item_analysis
from readerstudy.vocabulary import Alignment, Difficulty

KEYS = {"q1": "A", "q2": "B", "q3": "C", "q4": "D"}
ANSWERS = {
    "r1": ["A", "B", "C", "D"],
    "r2": ["A", "B", "D", "A"],
    "r3": ["B", "B", "D", "D"],
    "m1": ["A", "C", "D", "D"],
    "m2": ["B", None, "D", "A"],
}
VOTES = {  # (question, reader) -> difficulty, fit, comment
    ("q3", "r1"): ("hard", "no", "The key is wrong: this is D."),
    ("q3", "r2"): ("medium", "partly", "   "),  # blank: not a comment
    ("q3", "r3"): ("easy", "yes", ""),
    ("q1", "r1"): ("easy", "yes", "fine"),
}


def frame() -> pd.DataFrame:
    rows = []
    for rater, answers in ANSWERS.items():
        for (question, key), answer in zip(KEYS.items(), answers, strict=True):
            difficulty, fit, comment = VOTES.get((question, rater), (None, None, ""))
            rows.append(
                {
                    "question_id": question,
                    "rater": rater,
                    "rater_kind": "model" if rater.startswith("m") else "human",
                    "answer": answer,
                    "correct_answer": key,
                    "difficulty": difficulty,
                    "alignment": fit,
                    # A model's text is never a reader comment.
                    "comment": "model says hi" if rater == "m1" else comment,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def result() -> pd.DataFrame:
    return item_analysis(frame()).set_index("question_id")


def test_counts_and_proportions_correct(result):
    assert list(result.index) == ["q1", "q2", "q3", "q4"]
    assert list(result["n"]) == [5, 4, 5, 5]
    assert list(result["n_readers"]) == [3, 3, 3, 3]
    assert list(result["n_models"]) == [2, 1, 2, 2]
    assert result.loc["q1", "p_correct"] == pytest.approx(3 / 5)
    assert result.loc["q1", "p_readers"] == pytest.approx(2 / 3)
    assert result.loc["q1", "p_models"] == pytest.approx(1 / 2)
    assert result.loc["q2", "p_correct"] == pytest.approx(3 / 4)  # m2's failure is not counted
    assert result.loc["q2", "p_readers"] == 1.0 and result.loc["q2", "p_models"] == 0.0
    assert result.loc["q3", "p_readers"] == pytest.approx(1 / 3)
    assert result.loc["q3", "p_models"] == 0.0


def test_corrected_point_biserial_by_hand(result):
    # q1: item (1,1,0,1,0), rest x3 (3,1,2,1,0): cov 0.8, SS 1.2 and 5.2 -> 0.8/sqrt(6.24)
    assert result.loc["q1", "discrimination"] == pytest.approx(0.8 / math.sqrt(6.24))
    # q2 (m2 skipped): item (1,1,1,0), rest x3 (3,1,1,2): -0.25/sqrt(0.75 * 2.75)
    assert result.loc["q2", "discrimination"] == pytest.approx(-0.25 / math.sqrt(0.75 * 2.75))
    # q3: item (1,0,0,0,0), rest (1, 2/3, 2/3, 2/3, 0): 0.4/sqrt(0.8 * 8/15) = sqrt(3/8)
    assert result.loc["q3", "discrimination"] == pytest.approx(math.sqrt(3 / 8))
    assert result.loc["q4", "discrimination"] == pytest.approx(0.8 / math.sqrt(6.24))
    # Readers only: q1 item (1,1,0) rest (3,1,2): covariance 0; q2 all right: undefined;
    # q3 item (1,0,0) rest (3,2,2): perfectly aligned.
    assert result.loc["q1", "discrimination_readers"] == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(result.loc["q2", "discrimination_readers"])
    assert result.loc["q3", "discrimination_readers"] == pytest.approx(1.0)


def test_discrimination_matches_scipy_when_nobody_skips():
    from scipy.stats import pointbiserialr

    rng = np.random.default_rng(3)
    truth = rng.choice(list("ABCD"), 12)
    answers = {
        f"r{i}": [t if rng.random() < 0.3 + 0.1 * i else "A" for t in truth] for i in range(6)
    }
    rows = [
        {"question_id": f"q{q}", "rater": r, "answer": a[q], "correct_answer": truth[q]}
        for r, a in answers.items()
        for q in range(12)
    ]
    got = item_analysis(pd.DataFrame(rows)).set_index("question_id")
    correct = np.array([[a[q] == truth[q] for r, a in answers.items()] for q in range(12)])
    for q in range(12):
        item = correct[q].astype(float)
        rest = correct.sum(axis=0) - correct[q]  # classic rest-score (a sum)
        if item.std() == 0 or rest.std() == 0:
            assert math.isnan(got.loc[f"q{q}", "discrimination"])
        else:
            expected = pointbiserialr(item, rest).statistic
            assert got.loc[f"q{q}", "discrimination"] == pytest.approx(expected)


def test_option_shares_and_modal_wrong(result):
    assert [result.loc["q1", f"share_{x}"] for x in "ABCD"] == pytest.approx([0.6, 0.4, 0, 0])
    assert [result.loc["q2", f"share_{x}"] for x in "ABCD"] == pytest.approx([0, 0.75, 0.25, 0])
    assert result.loc["q1", "modal_wrong"] == "B"
    assert result.loc["q1", "modal_wrong_share"] == pytest.approx(0.4)
    assert result.loc["q3", "modal_wrong"] == "D"
    assert result.loc["q3", "modal_wrong_share"] == pytest.approx(0.8)
    assert result.loc["q4", "modal_wrong"] == "A"


def test_reader_votes_and_comments_come_from_readers_only(result):
    q3 = result.loc["q3"]
    assert (q3["difficulty_easy"], q3["difficulty_medium"], q3["difficulty_hard"]) == (1, 1, 1)
    assert (q3["fit_yes"], q3["fit_partly"], q3["fit_no"]) == (1, 1, 1)
    assert q3["comments"] == 1  # the blank one does not count
    assert result.loc["q1", "comments"] == 1 and result.loc["q1", "fit_yes"] == 1
    assert result.loc["q2", "comments"] == 0  # m1 "commented" on every question: not a reader


def test_key_suspicion_by_hand(result):
    # q3: D chosen by 4 of 5, more than the key C (1): P(D has the largest share) under the
    # Dirichlet(1/2 + votes) posterior, here from scipy's Dirichlet sampler (200,000 draws).
    draws = sps.dirichlet.rvs([0.5, 0.5, 1.5, 4.5], size=200_000, random_state=1)
    expected = float((draws.argmax(axis=1) == 3).mean())
    assert result.loc["q3", "wrong_consensus"] == pytest.approx(expected, abs=0.015)
    assert result.loc["q3", "key_suspicion"] == result.loc["q3", "wrong_consensus"]
    # q2: the key wins (3 of 4) and discrimination is negative, but from 4 raters its CI
    # spans 0: no evidence, no suspicion.
    assert result.loc["q2", "wrong_consensus"] == 0
    assert result.loc["q2", "discrimination"] < 0 < result.loc["q2", "discrimination_high"]
    assert result.loc["q2", "key_suspicion"] == 0
    # q1, q4: the key wins and discrimination is positive.
    assert result.loc["q1", "key_suspicion"] == 0 and result.loc["q4", "key_suspicion"] == 0


def test_consensus_evidence_grows_with_the_number_of_raters():
    """All choosing B for a key A: 3 raters are less evidence than 6 or 30."""

    def suspicion(k):
        rows = [{"question_id": "q", "rater": f"r{i}", "answer": "B"} for i in range(k)]
        return item_analysis(pd.DataFrame(rows).assign(correct_answer="A")).iloc[0]["key_suspicion"]

    assert 0.85 < suspicion(3) < suspicion(6) < suspicion(30) <= 1


def _study_with_one_miskeyed(rng, raters: int, questions: int = 40) -> pd.DataFrame:
    truth = rng.integers(0, 4, questions)
    key = truth.copy()
    key[0] = (truth[0] + 1) % 4  # question 0 is keyed wrong
    skill = rng.uniform(0.5, 0.9, raters)
    rows = []
    for r in range(raters):
        right = rng.random(questions) < skill[r]
        answers = np.where(right, truth, rng.integers(0, 4, questions))
        rows += [
            {"question_id": q, "rater": f"r{r}", "answer": "ABCD"[a], "correct_answer": "ABCD"[k]}
            for q, (a, k) in enumerate(zip(answers, key, strict=True))
        ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("raters", "at_least"), [(5, 0.75), (8, 0.9)])
def test_mis_keyed_question_ranks_first_in_simulated_studies(raters, at_least):
    """Bounded simulation (fixed seed): raters of skill 0.5-0.9 on 40 questions, one keyed
    wrong. It must rank strictly first (ties count as misses) in most studies."""
    rng = np.random.default_rng(raters)
    first = 0
    reps = 40
    for _ in range(reps):
        score = item_analysis(_study_with_one_miskeyed(rng, raters))["key_suspicion"].to_numpy()
        first += bool(score[0] > 0 and (score[0] > score[1:]).all())
    assert first / reps >= at_least


def test_everyone_choosing_the_same_wrong_option_is_maximal_suspicion():
    rows = [
        {"question_id": "q", "rater": f"{kind}{i}", "rater_kind": kind, "answer": "B"}
        for kind in ("human", "model")
        for i in range(3)
    ]
    got = item_analysis(pd.DataFrame(rows).assign(correct_answer="A")).iloc[0]
    assert got["key_suspicion"] > 0.97 and got["modal_wrong"] == "B"
    assert got["p_readers"] == 0 and got["p_models"] == 0 and got["n"] == 6


def test_two_raters_are_too_few_for_suspicion():
    rows = [{"question_id": "q", "rater": r, "answer": "B", "correct_answer": "A"} for r in "xy"]
    got = item_analysis(pd.DataFrame(rows)).iloc[0]
    assert got["key_suspicion"] == 0 and got["modal_wrong_share"] == 1.0
    assert got["n_readers"] == 2  # no rater_kind column: everyone is a reader


def test_unanswered_question_has_zero_counts_and_no_shares():
    rows = [
        {"question_id": "q", "rater": "r", "answer": None, "correct_answer": "A"},
        {"question_id": "p", "rater": "r", "answer": "A", "correct_answer": "A"},
    ]
    got = item_analysis(pd.DataFrame(rows)).set_index("question_id").loc["q"]
    assert got["n"] == 0 and math.isnan(got["p_correct"]) and got["modal_wrong"] is None
    assert got["key_suspicion"] == 0


def test_vote_levels_are_the_platform_vocabulary():
    assert tuple(Difficulty.values) == DIFFICULTY_LEVELS
    assert tuple(Alignment.values) == FIT_LEVELS
