"""Agreement within a panel of experts on their categorical verdicts (decision, each flag).

It lives here, beside the reviews it summarises, rather than in the analysis statistics:
annotation sits below analysis and must not import it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa


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
