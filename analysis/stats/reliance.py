"""Reliance on the AI in aided reading: agreement with the AI when it was right vs wrong, and
the second-read switches (the automation-bias table), per reader and pooled.

Unit: the reader's answer to one question; X-rays are the clusters. Every proportion's
interval is X-ray-clustered: the ratio estimator's cluster-robust variance (all of an X-ray's
rows, over every reader, move together) turned into a design effect, and a Wilson interval on
the effective n = n / max(design effect, 1). With one row per X-ray and no clustering it is
the Wilson interval. Letters are canonical (A-D), so "agreed with the AI" compares the same
option whatever order the reader saw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.design_frame import DesignTable
from analysis.stats.distributions import norm_ppf

POOLED = "All readers (pooled)"
METHOD = (
    "proportion with an X-ray-clustered Wilson interval (design effect from the cluster-robust "
    "variance of the ratio estimator, never below 1)"
)


def clustered_proportion(
    successes: np.ndarray, clusters: np.ndarray, alpha: float = 0.05
) -> tuple[int, int, float, float, float]:
    """(k, n, p, low, high) of 0/1 `successes` whose rows share `clusters` (X-ray ids)."""
    y = np.asarray(successes, dtype=float)
    n = len(y)
    if n == 0:
        nan = float("nan")
        return 0, 0, nan, nan, nan
    k = float(y.sum())
    p = k / n
    codes, _ = pd.factorize(pd.Series(clusters))
    c = codes.max() + 1
    totals = np.bincount(codes, weights=y, minlength=c)
    sizes = np.bincount(codes, minlength=c).astype(float)
    deff = 1.0
    if c > 1 and 0 < p < 1:
        robust = c / (c - 1) * ((totals - p * sizes) ** 2).sum() / n**2
        deff = max(robust / (p * (1 - p) / n), 1.0)
    n_eff = n / deff
    z = norm_ppf(1 - alpha / 2)
    centre = (p + z**2 / (2 * n_eff)) / (1 + z**2 / n_eff)
    half = z / (1 + z**2 / n_eff) * np.sqrt(p * (1 - p) / n_eff + z**2 / (4 * n_eff**2))
    return int(k), n, p, float(max(centre - half, 0.0)), float(min(centre + half, 1.0))


def _rate_columns(prefix: str, successes, clusters, alpha) -> dict:
    k, n, p, low, high = clustered_proportion(successes, clusters, alpha)
    return {
        f"{prefix}_n": n,
        f"{prefix}_k": k,
        prefix: p,
        f"{prefix}_ci_low": low,
        f"{prefix}_ci_high": high,
    }


def agreement_with_ai(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Aided arm: how often each reader's (final) answer equals the AI's, when the AI was right
    and when it was wrong. Reads where the AI gave no usable answer are left out (counted in
    `no_ai_answer`); unanswered reads are left out of both rates. With an unaided arm, the same
    questions read without the AI give the baseline agreement when the AI was wrong."""
    aided = frame[(frame["arm"] == "aided") & frame["answer"].notna()]
    unaided = frame[(frame["arm"] == "unaided") & frame["answer"].notna()]
    ai_of = (
        frame[frame["arm"] == "aided"].drop_duplicates("question_id").set_index("question_id")
    )["ai_answer"]
    rows = []
    for reader, part in [*aided.groupby("reader"), (POOLED, aided)]:
        has_ai = part["ai_answer"].notna()
        usable = part[has_ai]
        ai_right = usable["ai_answer"] == usable["correct_answer"]
        agree = (usable["answer"] == usable["ai_answer"]).to_numpy()
        row = {"reader": reader, "no_ai_answer": int((~has_ai).sum())}
        row |= _rate_columns(
            "agree_when_ai_right", agree[ai_right.to_numpy()], usable["case_id"][ai_right], alpha
        )
        row |= _rate_columns(
            "agree_when_ai_wrong",
            agree[~ai_right.to_numpy()],
            usable["case_id"][~ai_right],
            alpha,
        )
        base = unaided if reader == POOLED else unaided[unaided["reader"] == reader]
        base = base.assign(ai=base["question_id"].map(ai_of)).dropna(subset=["ai"])
        wrong = base[base["ai"] != base["correct_answer"]]
        row |= _rate_columns(
            "unaided_agree_when_ai_wrong",
            (wrong["answer"] == wrong["ai"]).to_numpy(),
            wrong["case_id"],
            alpha,
        )
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
    rows = []
    for reader, part in [*reads.groupby("reader"), (POOLED, reads)]:
        first, final, truth, ai = (
            part["first_answer"],
            part["answer"],
            part["correct_answer"],
            part["ai_answer"],
        )
        changed = (first != final).to_numpy()
        has_ai = ai.notna().to_numpy()
        cases = part["case_id"].to_numpy()
        row = {"reader": reader}
        events = {
            "changed": changed,
            "wrong_to_right": ((first != truth) & (final == truth)).to_numpy(),
            "right_to_wrong": ((first == truth) & (final != truth)).to_numpy(),
            "to_ai": changed & has_ai & (final == ai).to_numpy(),
            "away_from_ai": changed & has_ai & (first == ai).to_numpy(),
        }
        for name, values in events.items():
            row |= _rate_columns(name, values, cases, alpha)
        # Automation bias: when the first answer disagreed with the AI, did the reader adopt it?
        disagreed = has_ai & (first != ai).to_numpy()
        ai_right = (ai == truth).to_numpy()
        adopted = (final == ai).to_numpy()
        for label, mask in (
            ("ai_wrong", disagreed & ~ai_right),
            ("ai_right", disagreed & ai_right),
        ):
            row |= _rate_columns(f"adopted_ai_when_{label}", adopted[mask], cases[mask], alpha)
        rows.append(row)
    return pd.DataFrame(rows)


def reliance_tables(frame: pd.DataFrame, alpha: float, policy: str) -> dict:
    """The reliance tables as DesignTables (aided reads only; second read adds switches)."""
    unit = "a reader's aided answer to one question; X-rays are the clusters"
    tables = {}
    if "ai_answer" in frame.columns and (frame["arm"] == "aided").any():
        tables["reliance_agreement"] = DesignTable(
            agreement_with_ai(frame, alpha),
            unit,
            METHOD + "; answers compared in canonical letters; no AI answer: left out",
            policy + "; unanswered reads left out of the rates",
        )
    if "first_answer" in frame.columns and frame["first_answer"].notna().any():
        tables["second_read_switches"] = DesignTable(
            second_read_switches(frame, alpha),
            "a second read (first and final answer of one question); X-rays are the clusters",
            METHOD + "; denominators: every second read with both answers",
            policy + "; reads without a final answer left out",
        )
    return tables
