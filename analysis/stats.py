"""Reader-study statistics as pure functions on pandas DataFrames (no Django needed).

Input is long format, one row per (question, rater):

    question_id, rater, answer, correct_answer, task    [+ category, case_id]

`answer` is "A".."D", or None/NaN when the rater gave no answer (a missing answer, or a
model's failed extraction). Two policies for missing answers, stated wherever results are shown:

- missing="wrong"   (default) a missing answer counts as incorrect; n is every question.
- missing="exclude" missing answers are dropped; n is the questions the rater answered.
  (The ReXVQA paper's reader accuracies, 166/198 and 153/198, drop two of 200 cases.)

Cohen's kappa uses pairwise deletion: each pair is compared on the questions both answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as _mcnemar
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

ALL = "All"
LETTERS = ("A", "B", "C", "D")
Missing = Literal["wrong", "exclude"]
REQUIRED = ("question_id", "rater", "answer", "correct_answer", "task")


class AnalysisInputError(ValueError):
    pass


@dataclass(frozen=True)
class Prepared:
    """The long frame as arrays: questions x raters answer codes (0-3, -1 = missing).

    Built once by `prepare`; every statistic below works on it, so a notebook that computes
    many tables can prepare once and pass the result instead of the DataFrame.
    """

    question_ids: np.ndarray
    raters: list[str]
    answers: np.ndarray  # int8, questions x raters
    truth: np.ndarray  # int8, questions; -1 where unknown
    attributes: dict[str, np.ndarray]  # per-question columns: task, category, case_id

    @property
    def present(self) -> np.ndarray:
        return self.answers >= 0

    @property
    def correct(self) -> np.ndarray:
        return (self.answers == self.truth[:, None]) & self.present


def _letter_codes(values: pd.Series) -> np.ndarray:
    codes = pd.Categorical(values, categories=LETTERS).codes.astype(np.int8)
    odd = (codes < 0) & values.notna().to_numpy()
    if odd.any():  # only unusual spellings (" b", "c") pay for string normalisation
        fixed = values[odd].map(lambda v: str(v).strip().upper())
        codes[odd] = pd.Categorical(fixed, categories=LETTERS).codes
    return codes


def prepare(df: pd.DataFrame | Prepared) -> Prepared:
    """Validate the long format and turn it into arrays (see module docstring)."""
    if isinstance(df, Prepared):
        return df
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    q_codes, q_ids = pd.factorize(df["question_id"])
    r_codes, raters = pd.factorize(df["rater"])
    if (q_codes < 0).any() or (r_codes < 0).any():
        raise AnalysisInputError("question_id and rater must not be empty")
    n_q, n_r = len(q_ids), len(raters)
    flat = q_codes.astype(np.int64) * n_r + r_codes
    counts = np.bincount(flat, minlength=n_q * n_r)
    if counts.max(initial=0) > 1:
        q, r = divmod(int(np.argmax(counts)), n_r)
        raise AnalysisInputError(f"more than one row for question/rater {[q_ids[q], raters[r]]}")
    answers = np.full((n_q, n_r), -1, dtype=np.int8)
    answers[q_codes, r_codes] = _letter_codes(df["answer"])
    truth_rows = _letter_codes(df["correct_answer"])
    truth = np.full(n_q, -1, dtype=np.int8)
    truth[q_codes] = truth_rows
    if (truth[q_codes] != truth_rows).any():
        raise AnalysisInputError("a question has different correct answers in different rows")
    attributes = {}
    for column in ("task", "category", "case_id"):
        if column in df.columns:
            values = np.empty(n_q, dtype=object)
            values[q_codes] = df[column].to_numpy(dtype=object)
            attributes[column] = values
    return Prepared(np.asarray(q_ids), [str(r) for r in raters], answers, truth, attributes)


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check the long format (raises AnalysisInputError) and return it unchanged."""
    prepare(df)
    return df


def _interval(correct: np.ndarray, n: np.ndarray, method: str, alpha: float):
    low = np.full(len(n), np.nan)
    high = np.full(len(n), np.nan)
    ok = n > 0
    if ok.any():
        low[ok], high[ok] = proportion_confint(
            correct[ok],
            n[ok],
            alpha=alpha,
            method="beta" if method == "clopper-pearson" else method,
        )
    return low, high


def accuracy_table(
    df: pd.DataFrame | Prepared,
    missing: Missing = "wrong",
    method: Literal["wilson", "clopper-pearson"] = "wilson",
    alpha: float = 0.05,
    by: str = "task",
) -> pd.DataFrame:
    """Accuracy per rater and task (or `by` column), plus an "All" row per rater.

    Returns columns rater, <by>, n, correct, accuracy (fraction), ci_low, ci_high.
    """
    if missing not in ("wrong", "exclude"):
        raise AnalysisInputError("missing must be 'wrong' or 'exclude'")
    data = prepare(df)
    if by not in data.attributes:
        raise AnalysisInputError(f"no column {by!r}")
    groups = pd.Series(data.attributes[by]).fillna("(none)").astype(str).to_numpy()
    names = sorted(set(groups) - {ALL})
    onehot = (groups[:, None] == np.array(names, dtype=object)[None, :]).astype(np.float64)
    onehot = np.hstack([onehot, np.ones((len(groups), 1))])  # the "All" column
    counted = data.present if missing == "exclude" else np.ones_like(data.present)
    n = onehot.T @ counted.astype(np.float64)  # groups x raters
    correct = onehot.T @ data.correct.astype(np.float64)
    labels = [*names, ALL]
    table = pd.DataFrame(
        {
            "rater": np.repeat(data.raters, len(labels)),
            by: labels * len(data.raters),
            "n": n.T.ravel().astype(int),
            "correct": correct.T.ravel().astype(int),
        }
    )
    nn, cc = n.T.ravel(), correct.T.ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accuracy"] = np.where(nn > 0, cc / np.where(nn > 0, nn, 1), np.nan)
    table["ci_low"], table["ci_high"] = _interval(cc, nn, method, alpha)
    return table


# --- Cohen's kappa, every pair at once ------------------------------------------------------


def _codes(data: Prepared, scale: str, task: str | None) -> tuple[np.ndarray, list[str], int]:
    """Questions x raters category codes (-1 = missing) and the number of levels."""
    rows = slice(None) if task is None else data.attributes["task"] == task
    if scale == "answer":
        return data.answers[rows], data.raters, len(LETTERS)
    if scale == "correct":
        codes = np.where(data.present, data.correct.astype(np.int8), np.int8(-1))
        return codes[rows], data.raters, 2
    raise AnalysisInputError("scale must be 'answer' or 'correct'")


def _pair_tables(codes: np.ndarray, levels: int) -> np.ndarray:
    """Contingency tables for every pair: T[r, s, k, l] = #questions r said k and s said l."""
    onehot = np.zeros((codes.shape[0], codes.shape[1], levels), dtype=np.float64)
    rows, cols = np.nonzero(codes >= 0)
    onehot[rows, cols, codes[rows, cols]] = 1.0
    flat = onehot.reshape(codes.shape[0], -1)
    tables = flat.T @ flat  # (R*K) x (R*K): one BLAS call for all pairs
    r = codes.shape[1]
    return tables.reshape(r, levels, r, levels).transpose(0, 2, 1, 3)


@dataclass(frozen=True)
class KappaResult:
    kappa: pd.DataFrame
    se: pd.DataFrame
    ci_low: pd.DataFrame
    ci_high: pd.DataFrame
    n: pd.DataFrame


def _kappa_from_tables(tables: np.ndarray, with_se: bool, alpha: float):
    n = tables.sum(axis=(2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = tables / n[:, :, None, None]
        row = probs.sum(axis=3)  # rater r's marginals, on the questions both answered
        col = probs.sum(axis=2)
        p_o = np.trace(probs, axis1=2, axis2=3)
        p_e = (row * col).sum(axis=2)
        kappa = (p_o - p_e) / (1.0 - p_e)
        kappa[(n == 0) | np.isclose(p_e, 1.0)] = np.nan
        self_pairs = np.eye(len(kappa), dtype=bool) & ~np.isnan(kappa)
        kappa[self_pairs] = 1.0  # exactly, not 0.9999999999999999
        if not with_se:
            return kappa, n, None
        # Fleiss, Cohen & Everitt (1969) asymptotic variance, as statsmodels' cohens_kappa.
        diag = np.diagonal(probs, axis1=2, axis2=3)
        k = kappa[:, :, None]
        term_a = (diag * (1 - (row + col) * (1 - k)) ** 2).sum(axis=2)
        spread = (col[:, :, :, None] + row[:, :, None, :]) ** 2  # cell (k, l): col_k + row_l
        off = probs * spread
        off_sum = off.sum(axis=(2, 3)) - np.trace(off, axis1=2, axis2=3)
        term_b = (1 - kappa) ** 2 * off_sum
        term_c = (kappa - p_e * (1 - kappa)) ** 2
        var = (term_a + term_b - term_c) / (1 - p_e) ** 2 / n
        se = np.sqrt(np.clip(var, 0, None))
    return kappa, n, se


def kappa_matrix_ci(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
    alpha: float = 0.05,
) -> KappaResult:
    """Kappa for every pair with the asymptotic SE and a Wald (1 - alpha) interval."""
    codes, raters, levels = _codes(prepare(df), scale, task)
    kappa, n, se = _kappa_from_tables(_pair_tables(codes, levels), True, alpha)
    z = sps.norm.ppf(1 - alpha / 2)

    def frame(values):
        return pd.DataFrame(values, index=raters, columns=raters)

    return KappaResult(
        frame(kappa), frame(se), frame(kappa - z * se), frame(kappa + z * se), frame(n.astype(int))
    )


def kappa_matrix(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
) -> pd.DataFrame:
    """Cohen's kappa between every pair of raters (pairwise deletion); NaN where undefined.

    scale="answer" compares the A-D answers; scale="correct" compares correct/incorrect.
    """
    codes, raters, levels = _codes(prepare(df), scale, task)
    kappa, _, _ = _kappa_from_tables(_pair_tables(codes, levels), False, 0.05)
    return pd.DataFrame(kappa, index=raters, columns=raters)


def kappa_matrices(
    df: pd.DataFrame | Prepared, scale: Literal["answer", "correct"] = "answer"
) -> dict[str, pd.DataFrame]:
    """ "All tasks" and one matrix per task, from one code matrix sliced by task."""
    data = prepare(df)
    out = {"All tasks": kappa_matrix(data, None, scale)}
    for task in sorted(set(data.attributes["task"]) - {None}):
        out[task] = kappa_matrix(data, task, scale)
    return out


# --- Panels and paired comparisons ----------------------------------------------------------


def fleiss_kappa(df: pd.DataFrame, raters: Sequence[str] | None = None, task: str | None = None):
    """Fleiss' kappa for a panel, on the questions every panel member answered.

    Categories are whatever values `answer` takes (A-D here; any labels in general).
    """
    data = df if task is None else df[df["task"] == task]
    wide = data.pivot(index="question_id", columns="rater", values="answer")
    if raters is not None:
        missing = set(raters) - set(wide.columns)
        if missing:
            raise AnalysisInputError(f"unknown rater(s): {sorted(missing)}")
        wide = wide[list(raters)]
    complete = wide.dropna()
    if complete.empty or complete.shape[1] < 2:
        return float("nan")
    codes, _ = pd.factorize(complete.to_numpy().ravel())
    counts, _ = aggregate_raters(codes.reshape(complete.shape))
    return float(_fleiss_kappa(counts, method="fleiss"))


def _correct_wide(df: pd.DataFrame | Prepared, missing: Missing) -> pd.DataFrame:
    data = prepare(df)
    values = data.correct.astype(float)
    if missing == "exclude":
        values[~data.present] = np.nan
    return pd.DataFrame(values, index=data.question_ids, columns=data.raters)


@dataclass(frozen=True)
class McNemarResult:
    table: pd.DataFrame
    statistic: float
    pvalue: float
    n: int


def mcnemar_table(df: pd.DataFrame, a: str, b: str, missing: Missing = "wrong") -> pd.DataFrame:
    """2x2 counts of correct/incorrect for raters a (rows) and b (columns), paired by question."""
    wide = _correct_wide(df, missing)[[a, b]].dropna()
    ca, cb = wide[a].astype(bool), wide[b].astype(bool)
    values = [
        [int((ca & cb).sum()), int((ca & ~cb).sum())],
        [int((~ca & cb).sum()), int((~ca & ~cb).sum())],
    ]
    labels = ["correct", "incorrect"]
    return pd.DataFrame(values, index=pd.Index(labels, name=a), columns=pd.Index(labels, name=b))


def mcnemar_test(df: pd.DataFrame, a: str, b: str, missing: Missing = "wrong") -> McNemarResult:
    """Exact McNemar test (binomial on the discordant pairs)."""
    table = mcnemar_table(df, a, b, missing)
    result = _mcnemar(table.to_numpy(), exact=True)
    return McNemarResult(
        table, float(result.statistic), float(result.pvalue), int(table.to_numpy().sum())
    )


@dataclass(frozen=True)
class BootstrapResult:
    difference: float
    ci_low: float
    ci_high: float
    n_boot: int


def bootstrap_accuracy_difference(
    df: pd.DataFrame,
    a: str,
    b: str,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    missing: Missing = "wrong",
) -> BootstrapResult:
    """Percentile bootstrap CI of accuracy(a) - accuracy(b), resampling cases.

    Questions on the same case (X-ray) move together when a `case_id` column is present.
    """
    data = prepare(df)
    wide = _correct_wide(data, missing)
    if "case_id" in data.attributes:
        wide.index = pd.Index(data.attributes["case_id"])
    wide = wide[[a, b]].dropna()
    clusters = pd.Series(wide.index, index=wide.index)
    diff = (wide[a] - wide[b]).groupby(clusters.to_numpy()).agg(["sum", "size"])
    sums, sizes = diff["sum"].to_numpy(), diff["size"].to_numpy()
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    boots = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(float(sums.sum() / sizes.sum()), float(low), float(high), n_boot)


def failed_extractions(df: pd.DataFrame | Prepared) -> pd.DataFrame:
    """Per rater: n questions, failed (missing answers), rate."""
    data = prepare(df)
    failed = (~data.present).sum(axis=0)
    n = np.full(len(data.raters), len(data.question_ids))
    return pd.DataFrame({"rater": data.raters, "n": n, "failed": failed, "rate": failed / n})


def panel_agreement(df: pd.DataFrame) -> dict:
    """Agreement of a panel on one categorical item per question (e.g. experts' decisions).

    df: question_id, rater, answer (any labels). Uses questions rated by two or more raters:
    mean pairwise percent agreement, and Fleiss' kappa over the questions that have the most
    common number of ratings (Fleiss needs the same number per question).
    """
    counts = df.groupby("question_id")["rater"].transform("size")
    shared = df[counts >= 2]
    if shared.empty:
        return {"questions": 0, "agreement": float("nan"), "fleiss_kappa": float("nan")}
    agree = []
    for _, group in shared.groupby("question_id"):
        values = group["answer"].tolist()
        pairs = [(a, b) for i, a in enumerate(values) for b in values[i + 1 :]]
        agree.append(sum(a == b for a, b in pairs) / len(pairs))
    per_q = shared.groupby("question_id")["rater"].size()
    modal = per_q.mode().iloc[0]
    subset = shared[shared["question_id"].isin(per_q[per_q == modal].index)]
    codes, _ = pd.factorize(subset["answer"])
    subset = subset.assign(code=codes, slot=subset.groupby("question_id").cumcount())
    table = subset.pivot(index="question_id", columns="slot", values="code").to_numpy()
    counts_table, _ = aggregate_raters(table)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = float(_fleiss_kappa(counts_table, method="fleiss"))
    return {"questions": int(per_q.size), "agreement": float(np.mean(agree)), "fleiss_kappa": kappa}
