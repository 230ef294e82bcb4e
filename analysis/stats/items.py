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
- modal_wrong, modal_wrong_share: the most chosen option that is not the key (nor another
  accepted answer, `accepted`: several valid) (ties: the earlier letter) and its share;
  None / 0 when nobody chose a wrong option.
- difficulty_<level>, fit_<level>: readers' votes; comments: readers' non-empty comments.
- discrimination_low, discrimination_high: a 95% CI of the pooled discrimination (Fisher's
  z, atanh(r) +- 1.96 / sqrt(k - 3) with k raters counted; NaN with 3 or fewer).
- wrong_consensus and key_suspicion, from 0 to 1, evidence that grows with the number of
  raters (a share from 3 raters is not the same evidence as one from 30):
    * wrong_consensus: the posterior probability that the modal wrong option is the most
      popular answer of raters like these (above the key and every other option), under a
      Jeffreys Dirichlet(1/2, 1/2, 1/2, 1/2) prior on the four options' shares given the
      votes: P(pi_wrong = max pi | votes), by Monte Carlo (4,000 draws, fixed seed:
      reproducible). Counted only when the modal wrong option has more votes than the key
      and at least 3 raters answered; e.g. 3 of 3 choosing B for a key A give about 0.92,
      6 of 6 about 0.99, 2 of 5 choosing C against 1 for the key and 2 for D about 0.41.
    * negative discrimination counts only when its CI excludes 0 (upper limit below 0):
      then -discrimination. A negative point-biserial from a handful of raters is noise.
  key_suspicion is the larger of the two; 0 means neither. A ranking signal for the expert
  queue, not a test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.frame import LETTERS, prepare

# What item analysis measures, in the words of this docstring (the triage API serves them).
DEFINITION = __doc__.strip()

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
    "discrimination_low",
    "discrimination_high",
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


def fisher_interval(r: float, k: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Fisher's z interval of a correlation r from k pairs; NaN when k <= 3 or r undefined."""
    if k <= 3 or not np.isfinite(r):
        return float("nan"), float("nan")
    centre = np.arctanh(np.clip(r, -0.999999, 0.999999))
    half = z / np.sqrt(k - 3)
    return float(np.tanh(centre - half)), float(np.tanh(centre + half))


DRAWS = 4000


def wrong_top_probability(counts: np.ndarray, option: np.ndarray, seed: int = 0) -> np.ndarray:
    """Per row of `counts` (questions x 4 votes): P(the share of `option` is the largest)
    under the Dirichlet(counts + 1/2) posterior, by Monte Carlo with a fixed seed."""
    counts = np.asarray(counts, dtype=float)
    if not len(counts):
        return np.zeros(0)
    rng = np.random.default_rng(seed)
    draws = rng.standard_gamma(counts[:, None, :] + 0.5, size=(len(counts), DRAWS, 4))
    top = draws.argmax(axis=2)  # gamma draws share the Dirichlet's ordering
    return (top == np.asarray(option)[:, None]).mean(axis=1)


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
    discrimination_ci = np.full((len(ids), 2), np.nan)
    discrimination_readers = np.full(len(ids), np.nan)
    for q in range(len(ids)):
        pooled = usable[q]
        discrimination[q] = point_biserial(correct[q, pooled].astype(float), rest[q, pooled])
        discrimination_ci[q] = fisher_interval(discrimination[q], int(pooled.sum()))
        readers = pooled & human
        discrimination_readers[q] = point_biserial(
            correct[q, readers].astype(float), rest[q, readers]
        )

    # The options counted correct for the question: its key, and any further accepted
    # answer (several valid) counted correct for one of its answers.
    right_options = np.zeros((len(ids), len(LETTERS)), dtype=bool)
    for q, key in enumerate(data.truth):
        if key >= 0:
            right_options[q, key] = True
    if data.accepted is not None:
        union = np.bitwise_or.reduce(data.accepted, axis=1)
        for code in range(len(LETTERS)):
            right_options[:, code] |= (union >> code) & 1 == 1
    key_votes = np.where(right_options, chosen, 0).sum(axis=1)
    wrong_votes = np.where(right_options, -1, chosen)
    modal_code = wrong_votes.argmax(axis=1)  # ties: the earlier letter
    modal_votes = wrong_votes[np.arange(len(ids)), modal_code]
    modal_wrong = [
        LETTERS[c] if v > 0 else None for c, v in zip(modal_code, modal_votes, strict=True)
    ]
    modal_share = np.where(modal_votes > 0, _share(modal_votes, n), 0.0)
    counted = (modal_votes > key_votes) & (n >= MIN_RATERS)
    consensus = np.zeros(len(ids))
    consensus[counted] = wrong_top_probability(chosen[counted], modal_code[counted])
    clear = discrimination_ci[:, 1] < 0  # NaN compares False: not enough raters
    negative = np.where(clear, -np.nan_to_num(discrimination), 0.0)

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
            "discrimination_low": discrimination_ci[:, 0],
            "discrimination_high": discrimination_ci[:, 1],
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
