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


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check the long format; normalise answers to A-D or NaN."""
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    dupes = df.duplicated(["question_id", "rater"])
    if dupes.any():
        first = df.loc[dupes, ["question_id", "rater"]].iloc[0].tolist()
        raise AnalysisInputError(f"more than one row for question/rater {first}")
    out = df.copy()
    answer = out["answer"].astype(object)
    odd = ~answer.isin(LETTERS) & answer.notna()
    if odd.any():  # only the unusual values pay for string normalisation
        answer.loc[odd] = answer.loc[odd].map(lambda v: str(v).strip().upper())
    out["answer"] = answer.where(answer.isin(LETTERS), None)
    return out


def _complete(df: pd.DataFrame) -> pd.DataFrame:
    """Give every rater a row for every question (absent rows become missing answers)."""
    questions = df.drop_duplicates("question_id").set_index("question_id")
    raters = pd.unique(df["rater"])
    grid = pd.MultiIndex.from_product([questions.index, raters], names=["question_id", "rater"])
    full = df.set_index(["question_id", "rater"])[["answer"]].reindex(grid).reset_index()
    extra = [c for c in ("correct_answer", "task", "category", "case_id") if c in questions]
    return full.join(questions[extra], on="question_id")


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
    df: pd.DataFrame,
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
    data = _complete(validate(df))
    if by not in data.columns:
        raise AnalysisInputError(f"no column {by!r}")
    if missing == "exclude":
        data = data[data["answer"].notna()]
    data = data.assign(is_correct=(data["answer"] == data["correct_answer"]).astype(int))
    per = data.groupby(["rater", by], sort=False)["is_correct"].agg(["size", "sum"])
    overall = data.groupby("rater", sort=False)["is_correct"].agg(["size", "sum"])
    overall.index = pd.MultiIndex.from_arrays([overall.index, [ALL] * len(overall)])
    table = pd.concat([per, overall]).rename(columns={"size": "n", "sum": "correct"})
    table.index.names = ["rater", by]
    table = table.reset_index()
    raters = list(pd.unique(df["rater"]))
    groups = [*sorted(set(table[by]) - {ALL}), ALL]
    table["_r"] = table["rater"].map({r: i for i, r in enumerate(raters)})
    table["_g"] = table[by].map({g: i for i, g in enumerate(groups)})
    table = table.sort_values(["_r", "_g"]).drop(columns=["_r", "_g"]).reset_index(drop=True)
    n = table["n"].to_numpy(dtype=float)
    correct = table["correct"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accuracy"] = np.where(n > 0, correct / np.where(n > 0, n, 1), np.nan)
    table["ci_low"], table["ci_high"] = _interval(correct, n, method, alpha)
    table["n"] = table["n"].astype(int)
    table["correct"] = table["correct"].astype(int)
    return table[["rater", by, "n", "correct", "accuracy", "ci_low", "ci_high"]]


# --- Cohen's kappa, every pair at once ------------------------------------------------------


def _codes(data: pd.DataFrame, scale: str, task: str | None) -> tuple[np.ndarray, list[str], int]:
    """Questions x raters matrix of category codes (-1 = missing), and the number of levels.

    `data` must have been through validate().
    """
    raters = list(pd.unique(data["rater"]))
    data = _complete(data)
    if task is not None:
        data = data[data["task"] == task]
    wide = data.pivot(index="question_id", columns="rater", values="answer").reindex(columns=raters)
    answers = wide.to_numpy(dtype=object)
    present = pd.notna(wide).to_numpy()
    if scale == "answer":
        lookup = {letter: i for i, letter in enumerate(LETTERS)}
        codes = np.full(answers.shape, -1, dtype=np.int8)
        for letter, code in lookup.items():
            codes[answers == letter] = code
        return codes, raters, len(LETTERS)
    if scale == "correct":
        truth = data.drop_duplicates("question_id").set_index("question_id")["correct_answer"]
        truth = truth.reindex(wide.index).to_numpy(dtype=object)[:, None]
        codes = np.where(present, (answers == truth).astype(np.int8), -1).astype(np.int8)
        return codes, raters, 2
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
    df: pd.DataFrame,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
    alpha: float = 0.05,
) -> KappaResult:
    """Kappa for every pair with the asymptotic SE and a Wald (1 - alpha) interval."""
    codes, raters, levels = _codes(validate(df), scale, task)
    kappa, n, se = _kappa_from_tables(_pair_tables(codes, levels), True, alpha)
    z = sps.norm.ppf(1 - alpha / 2)

    def frame(values):
        return pd.DataFrame(values, index=raters, columns=raters)

    return KappaResult(
        frame(kappa), frame(se), frame(kappa - z * se), frame(kappa + z * se), frame(n.astype(int))
    )


def kappa_matrix(
    df: pd.DataFrame,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
) -> pd.DataFrame:
    """Cohen's kappa between every pair of raters (pairwise deletion); NaN where undefined.

    scale="answer" compares the A-D answers; scale="correct" compares correct/incorrect.
    """
    codes, raters, levels = _codes(validate(df), scale, task)
    kappa, _, _ = _kappa_from_tables(_pair_tables(codes, levels), False, 0.05)
    return pd.DataFrame(kappa, index=raters, columns=raters)


def kappa_matrices(
    df: pd.DataFrame, scale: Literal["answer", "correct"] = "answer"
) -> dict[str, pd.DataFrame]:
    """ "All tasks" and one matrix per task: the code matrix is built once and sliced by task."""
    data = validate(df)
    codes, raters, levels = _codes(data, scale, None)
    question_ids = np.sort(pd.unique(data["question_id"]))
    tasks = data.drop_duplicates("question_id").set_index("question_id")["task"]
    tasks = tasks.reindex(question_ids).to_numpy()
    out = {}
    for name, rows in [("All tasks", slice(None))] + [
        (task, tasks == task) for task in sorted(pd.unique(data["task"].dropna()))
    ]:
        kappa, _, _ = _kappa_from_tables(_pair_tables(codes[rows], levels), False, 0.05)
        out[name] = pd.DataFrame(kappa, index=raters, columns=raters)
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


def _correct_wide(df: pd.DataFrame, missing: Missing) -> pd.DataFrame:
    data = _complete(validate(df))
    data["is_correct"] = (data["answer"] == data["correct_answer"]).astype(float)
    if missing == "exclude":
        data.loc[data["answer"].isna(), "is_correct"] = np.nan
    return data.pivot(index="question_id", columns="rater", values="is_correct")


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
    wide = _correct_wide(df, missing)[[a, b]].dropna()
    clusters = (
        validate(df)
        .drop_duplicates("question_id")
        .set_index("question_id")["case_id"]
        .reindex(wide.index)
        if "case_id" in df.columns
        else pd.Series(wide.index, index=wide.index)
    )
    diff = (wide[a] - wide[b]).groupby(clusters.to_numpy()).agg(["sum", "size"])
    sums, sizes = diff["sum"].to_numpy(), diff["size"].to_numpy()
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    boots = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(float(sums.sum() / sizes.sum()), float(low), float(high), n_boot)


def failed_extractions(df: pd.DataFrame) -> pd.DataFrame:
    """Per rater: n questions, failed (missing answers), rate."""
    data = _complete(validate(df))
    grouped = data.groupby("rater", sort=False)["answer"]
    out = pd.DataFrame({"n": grouped.size(), "failed": grouped.apply(lambda s: s.isna().sum())})
    out["rate"] = out["failed"] / out["n"]
    return out.reset_index()
