"""Item analysis: how each question behaved, to find questions that are wrong rather than hard.

Input is the long frame of `frame.py`, one row per (question, rater):

    question_id, rater, answer, correct_answer
    [+ rater_kind ("human" | "model"; missing means human), difficulty, alignment, comment]

Readers' difficulty and fit votes and comments are read from the human rows only.

Per question (`item_analysis` columns):

- n, n_readers, n_models: raters who answered (a missing answer or failed extraction is not
  an answer and is left out of every share below).
- p_correct, p_readers, p_models: proportion correct among those who answered.
- discrimination: corrected point-biserial correlation (item-rest), readers and models pooled;
  discrimination_readers: the same among readers only. For each rater who answered the
  question, the item score is 1/0 and the rest score is the rater's share correct on the
  *other* questions they answered (the classic rest-score divided by the number of other
  questions, which is the same correlation when nobody skips, and fair to raters who skip).
  NaN when fewer than 3 raters count or either score has no variance.
- share_A..share_D: share of the answering raters choosing each option.
- modal_wrong, modal_wrong_share: the most chosen option that is not the key (ties: the
  earlier letter) and its share; None / 0 when nobody chose a wrong option.
- difficulty_<level>, fit_<level>: readers' votes; comments: readers' non-empty comments.
- wrong_consensus and key_suspicion, from 0 to 1. key_suspicion is the larger of two pieces
  of evidence that the key is wrong:
    * consensus on a wrong option (wrong_consensus): modal_wrong_share, counted only when
      the modal wrong option was chosen by more raters (readers and models together) than
      the key and at least 3 raters answered; e.g. 3 readers and 3 models all choosing B
      for a question keyed A give 1.0, and 3 of 5 choosing C with 1 choosing the key 0.6;
    * negative discrimination: -discrimination when the pooled discrimination is below 0
      (the raters who do best on the rest of the study miss this question more often);
      NaN discrimination counts as 0.
  0 means neither; it is a ranking signal for the expert queue, not a test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.frame import LETTERS, prepare

# The platform's vocabulary for readers' votes; a test pins them to readerstudy.vocabulary.
DIFFICULTY_LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
FIT_LEVELS: tuple[str, ...] = ("yes", "partly", "no")
MIN_RATERS = 3  # below this, neither consensus nor discrimination counts

COLUMNS = [
    "question_id",
    "key",
    "n",
    "n_readers",
    "n_models",
    "p_correct",
    "p_readers",
    "p_models",
    "discrimination",
    "discrimination_readers",
    *[f"share_{letter}" for letter in LETTERS],
    "modal_wrong",
    "modal_wrong_share",
    *[f"difficulty_{level}" for level in DIFFICULTY_LEVELS],
    *[f"fit_{level}" for level in FIT_LEVELS],
    "comments",
    "wrong_consensus",
    "key_suspicion",
]


def point_biserial(item: np.ndarray, rest: np.ndarray) -> float:
    """Pearson correlation of a 0/1 item score with a rest score; NaN when undefined."""
    if len(item) < MIN_RATERS or item.std() == 0 or rest.std() == 0:
        return float("nan")
    return float(np.corrcoef(item, rest)[0, 1])


def _share(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.maximum(denominator, 1), np.nan)


def _votes(df: pd.DataFrame, column: str, levels: tuple[str, ...], ids) -> dict[str, np.ndarray]:
    prefix = "fit" if column == "alignment" else column
    if column not in df.columns:
        return {f"{prefix}_{level}": np.zeros(len(ids), dtype=int) for level in levels}
    counts = pd.crosstab(df["question_id"], df[column]).reindex(index=ids, fill_value=0)
    return {
        f"{prefix}_{level}": (
            counts[level].to_numpy(dtype=int) if level in counts else np.zeros(len(ids), int)
        )
        for level in levels
    }


def item_analysis(
    df: pd.DataFrame,
    *,
    difficulty_levels: tuple[str, ...] = DIFFICULTY_LEVELS,
    fit_levels: tuple[str, ...] = FIT_LEVELS,
) -> pd.DataFrame:
    """One row per question, in the order questions first appear (see the module docstring)."""
    frame = df if "task" in df.columns else df.assign(task="")
    data = prepare(frame)
    ids = data.question_ids
    kind = (
        frame.drop_duplicates("rater").set_index("rater")["rater_kind"]
        if "rater_kind" in frame.columns
        else pd.Series(dtype=object)
    )
    human = np.array([kind.get(r, "human") != "model" for r in data.raters], dtype=bool)
    model = ~human
    present, correct = data.present, data.correct

    n = present.sum(axis=1)
    n_readers = (present & human).sum(axis=1)
    n_models = (present & model).sum(axis=1)
    chosen = np.stack([(data.answers == code).sum(axis=1) for code in range(len(LETTERS))], 1)
    shares = _share(chosen, n[:, None])

    # Rest score of every rater on every question: share correct on their other answers.
    total_correct = correct.sum(axis=0)[None, :]
    total_answered = present.sum(axis=0)[None, :]
    other_answered = total_answered - present
    rest = _share(total_correct - correct, other_answered)
    usable = present & (other_answered > 0)
    discrimination = np.full(len(ids), np.nan)
    discrimination_readers = np.full(len(ids), np.nan)
    for q in range(len(ids)):
        pooled = usable[q]
        discrimination[q] = point_biserial(correct[q, pooled].astype(float), rest[q, pooled])
        readers = pooled & human
        discrimination_readers[q] = point_biserial(
            correct[q, readers].astype(float), rest[q, readers]
        )

    key_votes = np.array(
        [chosen[q, data.truth[q]] if data.truth[q] >= 0 else 0 for q in range(len(ids))]
    )
    wrong_votes = chosen.copy()
    for q, key in enumerate(data.truth):
        if key >= 0:
            wrong_votes[q, key] = -1
    modal_code = wrong_votes.argmax(axis=1)  # ties: the earlier letter
    modal_votes = wrong_votes[np.arange(len(ids)), modal_code]
    modal_wrong = [
        LETTERS[c] if v > 0 else None for c, v in zip(modal_code, modal_votes, strict=True)
    ]
    modal_share = np.where(modal_votes > 0, _share(modal_votes, n), 0.0)
    consensus = np.where((modal_votes > key_votes) & (n >= MIN_RATERS), modal_share, 0.0)
    negative = np.nan_to_num(np.clip(-discrimination, 0, None), nan=0.0)

    humans_frame = frame
    if "rater_kind" in frame.columns:
        humans_frame = frame[frame["rater_kind"] != "model"]
    comments = np.zeros(len(ids), dtype=int)
    if "comment" in humans_frame.columns:
        text = humans_frame["comment"].fillna("").astype(str).str.strip()
        counted = humans_frame.loc[text != "", "question_id"].value_counts()
        comments = counted.reindex(ids, fill_value=0).to_numpy(dtype=int)

    out = pd.DataFrame(
        {
            "question_id": ids,
            "key": [LETTERS[k] if k >= 0 else None for k in data.truth],
            "n": n,
            "n_readers": n_readers,
            "n_models": n_models,
            "p_correct": _share(correct.sum(axis=1), n),
            "p_readers": _share((correct & human).sum(axis=1), n_readers),
            "p_models": _share((correct & model).sum(axis=1), n_models),
            "discrimination": discrimination,
            "discrimination_readers": discrimination_readers,
            **{f"share_{letter}": shares[:, i] for i, letter in enumerate(LETTERS)},
            "modal_wrong": modal_wrong,
            "modal_wrong_share": modal_share,
            **_votes(humans_frame, "difficulty", difficulty_levels, ids),
            **_votes(humans_frame, "alignment", fit_levels, ids),
            "comments": comments,
            "wrong_consensus": consensus,
            "key_suspicion": np.maximum(consensus, negative),
        }
    )
    return out
