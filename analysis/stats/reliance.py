"""Reliance on the AI in aided reading: agreement with the AI when it was right vs wrong, on
the same reads with and without the AI, and the second-read switches (the automation-bias
tables), per reader and for all readers.

Unit: the reader's answer to one question; X-rays are the clusters. With an unaided arm, the
agreement table compares like with like: only the reads a reader answered in both arms (the
same reader and question), so a reader without aided reads, or a question left unanswered in
one arm, is in neither rate. Its contrast, aided minus unaided agreement with a wrong AI, is
the automation-bias result.

Intervals, per reader: the X-ray-clustered Wilson interval of `clustered.clustered_proportion_ci`
(the accuracy table's, with Korn & Graubard's df factor) for a rate, Obuchowski's clustered
paired difference (`clustered.clustered_paired_difference`) for the contrast, its bounds
clipped to [-1, 1] (on few X-rays the t interval passes them).

All readers: the readers' mean rate, with readers and X-rays random, by the Obuchowski-Rockette
analysis with Hillis df that the accuracy comparison uses (`or_design`), the reader's rate in
place of accuracy: a rate's interval is OR's single-modality one, Var = (MS(R) + r max(Cov2,
0)) / r; the contrast's is the two-modality random-readers one (aided vs unaided as the
modalities). The bounds are clipped to the scale ([0, 1] for a rate, [-1, 1] for a contrast).
A pooled k / n with an X-ray-clustered interval would treat the readers as fixed: it covers
the reader population's rate far less often than its level says when readers differ.
Letters are canonical (A-D), so "agreed with the AI" compares the same option whatever order
the reader saw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.clustered import clustered_paired_difference, clustered_proportion_ci
from analysis.stats.design_frame import DesignTable
from analysis.stats.frame import ACCEPTED, right
from analysis.stats.jackknife import jackknife_covariance
from analysis.stats.or_accuracy import or_design
from analysis.stats.or_core import or_single

POOLED = "All readers (mean of readers)"
RATE_METHOD = (
    "per reader: proportion with an X-ray-clustered Wilson interval (design effect from the "
    "cluster-robust variance by X-ray; Rao & Scott 1992, Korn & Graubard 1998); all readers: "
    "the mean of the readers' rates with a random-readers, random-X-rays interval "
    "(Obuchowski–Rockette single-modality, Hillis df; bounds clipped to [0, 1])"
)
CHANGE_METHOD = (
    "aided − unaided on the same reads: per reader Obuchowski's (1998) clustered paired "
    "difference (t on X-rays − 1 df); all readers the two-modality Obuchowski–Rockette "
    "random-readers, random-X-rays comparison with Hillis df (as the accuracy comparison)"
)

# The columns of the tables, in plain words (the page's and the CSV's headers).
RATE_PARTS = {
    "_n": "reads",
    "_k": "agreed",
    "": "rate",
    "_ci_low": "CI low",
    "_ci_high": "CI high",
}
SWITCH_PARTS = RATE_PARTS | {"_k": "count"}
CHANGE_PARTS = {"": "aided − unaided", "_ci_low": "CI low", "_ci_high": "CI high", "_p": "p"}
AGREEMENT_RATES = {
    "agree_when_ai_wrong": "Aided: agreed with the AI when it was wrong",
    "unaided_agree_when_ai_wrong": "Unaided (same reads): chose the AI's wrong answer",
    "agree_when_ai_right": "Aided: agreed with the AI when it was right",
    "unaided_agree_when_ai_right": "Unaided (same reads): chose the AI's right answer",
}
AGREEMENT_CHANGES = {
    "agree_when_ai_wrong_change": "Agreement with a wrong AI, aided − unaided",
    "agree_when_ai_right_change": "Agreement with a right AI, aided − unaided",
}
SWITCH_RATES = {
    "changed": "Changed the first answer",
    "wrong_to_right": "Wrong to right",
    "right_to_wrong": "Right to wrong",
    "to_ai": "Changed to the AI's answer",
    "away_from_ai": "Changed away from the AI's answer",
    "adopted_ai_when_ai_wrong": "Adopted the AI's answer when it was wrong",
    "adopted_ai_when_ai_right": "Adopted the AI's answer when it was right",
}


def _labels(names: dict[str, str], parts: dict[str, str]) -> dict[str, str]:
    return {
        f"{name}{suffix}": f"{words}: {part}"
        for name, words in names.items()
        for suffix, part in parts.items()
    }


LABELS = {
    "reader": "Reader",
    "paired_reads": "Reads answered in both arms (AI answer known)",
    "reads": "Aided reads answered (AI answer known)",
    "no_ai_answer": "Reads without an AI answer (left out)",
    **_labels(AGREEMENT_RATES, RATE_PARTS),
    **_labels(AGREEMENT_CHANGES, CHANGE_PARTS),
    **_labels(SWITCH_RATES, SWITCH_PARTS),
}


def _grid(reads: pd.DataFrame, success: np.ndarray, readers: list, cases: list) -> tuple:
    """Readers x X-rays sums of `success` (0/1 per read) and of reads."""
    frame = pd.DataFrame(
        {"reader": reads["reader"].to_numpy(), "case_id": reads["case_id"].to_numpy()}
    ).assign(y=np.asarray(success, dtype=float), m=1.0)
    sums = frame.groupby(["reader", "case_id"])[["y", "m"]].sum()
    y = sums["y"].unstack().reindex(index=readers, columns=cases).fillna(0.0).to_numpy()
    m = sums["m"].unstack().reindex(index=readers, columns=cases).fillna(0.0).to_numpy()
    return y, m


def _nan_rate(prefix: str, n: int = 0, k: int = 0) -> dict:
    nan = float("nan")
    return {
        f"{prefix}_n": n,
        f"{prefix}_k": k,
        prefix: nan,
        f"{prefix}_ci_low": nan,
        f"{prefix}_ci_high": nan,
    }


def reader_rate(prefix: str, y: np.ndarray, m: np.ndarray, alpha: float) -> dict:
    """One reader's rate over X-rays (`y` successes, `m` reads per X-ray), clustered Wilson."""
    n, k = int(m.sum()), int(y.sum())
    if n == 0:
        return _nan_rate(prefix)
    ci = clustered_proportion_ci(y, m, alpha)
    return {
        f"{prefix}_n": n,
        f"{prefix}_k": k,
        prefix: k / n,
        f"{prefix}_ci_low": float(ci.ci_low[0]),
        f"{prefix}_ci_high": float(ci.ci_high[0]),
    }


def readers_mean_rate(y: np.ndarray, m: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """(mean of the readers' rates, CI low, CI high), readers and X-rays random: the OR
    single-modality interval (Hillis df) over the readers with a read, clipped to [0, 1]."""
    keep = m.sum(axis=1) > 0
    y, m = y[keep], m[keep]
    cases = m.sum(axis=0) > 0
    y, m = y[:, cases], m[:, cases]
    nan = float("nan")
    if not keep.any():
        return nan, nan, nan
    rates = y.sum(axis=1) / m.sum(axis=1)
    r, c = y.shape
    if r < 2 or c < 2:
        return float(rates.mean()), nan, nan
    fom, cov = jackknife_covariance(y[None], m[None], np.zeros(c, int), np.zeros(r, int))
    if not np.isfinite(cov).all():  # a reader's reads all on one X-ray: no jackknife
        return float(rates.mean()), nan, nan
    mean = or_single(fom[0], cov, alpha=alpha).random
    return mean.estimate, _clip(mean.ci_low, 0.0, 1.0), _clip(mean.ci_high, 0.0, 1.0)


def readers_mean_change(
    aided: np.ndarray, unaided: np.ndarray, m: np.ndarray, alpha: float
) -> tuple[float, float, float, float]:
    """(mean aided − unaided rate, CI low, CI high, p) on the same reads, readers and X-rays
    random: the two-modality OR/Hillis comparison (`or_design`), bounds clipped to [-1, 1]."""
    keep = m.sum(axis=1) > 0
    cases = m[keep].sum(axis=0) > 0
    a, u, m = aided[keep][:, cases], unaided[keep][:, cases], m[keep][:, cases]
    nan = float("nan")
    if not keep.any():
        return nan, nan, nan, nan
    change = float((a.sum(axis=1) / m.sum(axis=1) - u.sum(axis=1) / m.sum(axis=1)).mean())
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            result = or_design(np.stack([u, a]), np.stack([m, m]), alpha=alpha).random
    except ValueError:  # fewer than two readers or two X-rays
        return change, nan, nan, nan
    return (
        change,
        _clip(result.ci_low, -1.0, 1.0),
        _clip(result.ci_high, -1.0, 1.0),
        float(result.p_value),
    )


def _clip(value: float, low: float, high: float) -> float:
    return float(min(max(value, low), high)) if np.isfinite(value) else float("nan")


def _pooled_rate(prefix: str, y: np.ndarray, m: np.ndarray, alpha: float) -> dict:
    rate, low, high = readers_mean_rate(y, m, alpha)
    return {
        f"{prefix}_n": int(m.sum()),
        f"{prefix}_k": int(y.sum()),
        prefix: rate,
        f"{prefix}_ci_low": low,
        f"{prefix}_ci_high": high,
    }


def _reader_change(prefix: str, a: np.ndarray, u: np.ndarray, m: np.ndarray, alpha) -> dict:
    """One reader's aided − unaided rate on the same reads (Obuchowski's clustered paired
    difference over X-rays), its bounds clipped to [-1, 1] as the all-readers contrast's: on
    few X-rays the t interval passes the range a difference of two rates can take."""
    d = clustered_paired_difference(a - u, m, alpha)
    return {
        prefix: d.difference,
        f"{prefix}_ci_low": _clip(d.ci_low, -1.0, 1.0),
        f"{prefix}_ci_high": _clip(d.ci_high, -1.0, 1.0),
        f"{prefix}_p": d.p_value,
    }


def _pooled_change(prefix: str, a: np.ndarray, u: np.ndarray, m: np.ndarray, alpha) -> dict:
    change, low, high, p = readers_mean_change(a, u, m, alpha)
    return {prefix: change, f"{prefix}_ci_low": low, f"{prefix}_ci_high": high, f"{prefix}_p": p}


def paired_reads(frame: pd.DataFrame) -> pd.DataFrame:
    """The reads answered in both arms by the same reader, one row per (reader, question):
    case_id, correct_answer (and `accepted`: the letters counted right, when given), ai (the
    AI's answer shown in the aided arm), aided, unaided."""
    keys = ["reader", "question_id"]
    answered = frame[frame["answer"].notna()]
    scored = [c for c in ("correct_answer", ACCEPTED) if c in frame.columns]
    aided = answered[answered["arm"] == "aided"][
        [*keys, "case_id", *scored, "ai_answer", "answer"]
    ].rename(columns={"ai_answer": "ai", "answer": "aided"})
    unaided = answered[answered["arm"] == "unaided"][[*keys, "answer"]].rename(
        columns={"answer": "unaided"}
    )
    return aided.merge(unaided, on=keys, how="inner")


def agreement_with_ai(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """How often each reader's answer equals the AI's, when the AI was right and when it was
    wrong. With an unaided arm: on the reads answered in both arms only (`paired_reads`), the
    same rates without the AI and the aided − unaided contrast; a second-read study (aided arm
    only): over the aided reads with a final answer. Reads where the AI gave no usable answer
    are left out (counted in `no_ai_answer`)."""
    two_arms = (frame["arm"] == "unaided").any()
    if two_arms:
        reads = paired_reads(frame)
    else:
        reads = frame[(frame["arm"] == "aided") & frame["answer"].notna()].rename(
            columns={"ai_answer": "ai", "answer": "aided"}
        )
    has_ai = reads["ai"].notna()
    missing_ai = reads[~has_ai].groupby("reader").size()
    reads = reads[has_ai]
    readers = sorted(reads["reader"].unique())
    cases = sorted(reads["case_id"].unique())
    ai_right = right(reads, "ai")  # one of the accepted letters (several valid answers)
    grids = {}
    for label, mask in (("wrong", ~ai_right), ("right", ai_right)):
        part = reads[mask]
        ya, m = _grid(part, part["aided"] == part["ai"], readers, cases)
        yu = _grid(part, part["unaided"] == part["ai"], readers, cases)[0] if two_arms else None
        grids[label] = (ya, yu, m)
    rows = []
    for j, reader in enumerate([*readers, POOLED]):
        pooled = reader == POOLED
        row = {
            "reader": reader,
            ("paired_reads" if two_arms else "reads"): (
                len(reads) if pooled else int((reads["reader"] == reader).sum())
            ),
            "no_ai_answer": int(missing_ai.sum() if pooled else missing_ai.get(reader, 0)),
        }
        for label in ("wrong", "right"):
            ya, yu, m = grids[label]
            prefix = f"agree_when_ai_{label}"
            if pooled:
                row |= _pooled_rate(prefix, ya, m, alpha)
            else:
                row |= reader_rate(prefix, ya[j], m[j], alpha)
            if not two_arms:
                continue
            if pooled:
                row |= _pooled_rate(f"unaided_{prefix}", yu, m, alpha)
                row |= _pooled_change(f"{prefix}_change", ya, yu, m, alpha)
            else:
                row |= reader_rate(f"unaided_{prefix}", yu[j], m[j], alpha)
                row |= _reader_change(f"{prefix}_change", ya[j], yu[j], m[j], alpha)
        rows.append(row)
    return pd.DataFrame(rows)


def second_read_switches(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Second read: of the reads with both a first and a final answer, how many changed, and
    how: wrong→right and right→wrong, to the AI's answer and away from it; and the automation
    bias pair: switched to the AI's answer when the AI was wrong (out of the reads where the
    first answer differed from a wrong AI) vs when it was right."""
    reads = frame[
        (frame["arm"] == "aided") & frame["first_answer"].notna() & frame["answer"].notna()
    ]
    first, final, ai = reads["first_answer"], reads["answer"], reads["ai_answer"]
    # Right: one of the letters the answer is scored against (several valid answers).
    first_right, final_right = right(reads, "first_answer"), right(reads, "answer")
    changed = (first != final).to_numpy()
    has_ai = ai.notna().to_numpy()
    adopted = (final == ai).to_numpy()
    disagreed = has_ai & (first != ai).to_numpy()
    ai_right = right(reads, "ai_answer")
    events = {
        "changed": (changed, None),
        "wrong_to_right": (~first_right & final_right, None),
        "right_to_wrong": (first_right & ~final_right, None),
        "to_ai": (changed & has_ai & adopted, None),
        "away_from_ai": (changed & has_ai & (first == ai).to_numpy(), None),
        # Automation bias: when the first answer disagreed with the AI, did the reader adopt it?
        "adopted_ai_when_ai_wrong": (adopted, disagreed & ~ai_right),
        "adopted_ai_when_ai_right": (adopted, disagreed & ai_right),
    }
    readers = sorted(reads["reader"].unique())
    cases = sorted(reads["case_id"].unique())
    grids = {}
    for name, (success, among) in events.items():
        among = np.ones(len(reads), bool) if among is None else among
        part = reads[among]
        grids[name] = _grid(part, success[among], readers, cases)
    rows = []
    for j, reader in enumerate([*readers, POOLED]):
        row = {"reader": reader}
        for name, (y, m) in grids.items():
            if reader == POOLED:
                row |= _pooled_rate(name, y, m, alpha)
            else:
                row |= reader_rate(name, y[j], m[j], alpha)
        rows.append(row)
    return pd.DataFrame(rows)


def _left_out(frame: pd.DataFrame, table: pd.DataFrame) -> str:
    """The readers with answers who have no row (no read in both arms), by name."""
    shown = set(table["reader"])
    missing = sorted(set(frame.loc[frame["answer"].notna(), "reader"]) - shown)
    if not missing:
        return ""
    return "; readers without a read in both arms left out: " + ", ".join(map(str, missing))


def reliance_tables(frame: pd.DataFrame, alpha: float, policy: str) -> dict:
    """The reliance tables as DesignTables (agreement on the same reads; second read adds
    switches)."""
    tables = {}
    if "ai_answer" in frame.columns and (frame["arm"] == "aided").any():
        two_arms = (frame["arm"] == "unaided").any()
        data = agreement_with_ai(frame, alpha)
        if two_arms:
            unit = (
                "a reader's answer to one question, read in both arms (the same reader and "
                "question, with and without the AI); X-rays are the clusters"
            )
            method = f"{RATE_METHOD}; {CHANGE_METHOD}"
            said = policy + "; only reads answered in both arms" + _left_out(frame, data)
        else:
            unit = "a reader's aided answer to one question; X-rays are the clusters"
            method = RATE_METHOD
            said = policy + "; unanswered reads left out of the rates"
        tables["reliance_agreement"] = DesignTable(
            data,
            unit,
            method + "; answers compared in canonical letters; no AI answer: left out",
            said,
        )
    if "first_answer" in frame.columns and frame["first_answer"].notna().any():
        tables["second_read_switches"] = DesignTable(
            second_read_switches(frame, alpha),
            "a second read (first and final answer of one question); X-rays are the clusters",
            RATE_METHOD + "; denominators: every second read with both answers",
            policy + "; reads without a final answer left out",
        )
    return tables
