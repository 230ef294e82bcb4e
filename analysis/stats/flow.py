"""The flow of questions through a study, like a CONSORT diagram: sampled, excluded by the PI
(with reasons), analysed; then per rater, what was answered and what is missing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import prepare

STAGE_COLUMNS = ["stage", "detail", "questions", "x_rays"]
RATER_COLUMNS = ["rater", "analysed", "answered", "no_answer", "not_predicted"]


@dataclass(frozen=True)
class Flow:
    stages: pd.DataFrame
    raters: pd.DataFrame


def flow_tables(responses: pd.DataFrame, *, include_excluded: bool) -> Flow:
    """`responses`: the long frame with `excluded` (bool) and optionally `excluded_reason`.

    "no_answer" is a reader's missing answer or a model's failed extraction; "not_predicted"
    a question the model was never run on.
    """
    questions = responses.drop_duplicates("question_id")
    case = questions["case_id"] if "case_id" in questions else questions["question_id"]
    excluded = questions["excluded"].fillna(False).astype(bool)
    reasons = (
        questions.get("excluded_reason", pd.Series("", index=questions.index))
        .fillna("")
        .astype(str)
        .str.strip()
        .replace("", "(no reason given)")
    )
    stages = [
        {
            "stage": "Sampled",
            "detail": "",
            "questions": len(questions),
            "x_rays": case.nunique(),
        },
        {
            "stage": "Excluded by the PI",
            "detail": "kept in the analysis (policy)" if include_excluded else "left out",
            "questions": int(excluded.sum()),
            "x_rays": case[excluded].nunique(),
        },
    ]
    for reason, part in questions[excluded].groupby(reasons[excluded], sort=True):
        stages.append(
            {
                "stage": "Excluded by the PI",
                "detail": f"reason: {reason}",
                "questions": len(part),
                "x_rays": case[part.index].nunique(),
            }
        )
    analysed_mask = np.ones(len(questions), bool) if include_excluded else ~excluded.to_numpy()
    stages.append(
        {
            "stage": "Analysed",
            "detail": "",
            "questions": int(analysed_mask.sum()),
            "x_rays": case[analysed_mask].nunique(),
        }
    )
    analysed = responses if include_excluded else responses[~responses["excluded"].astype(bool)]
    rater_rows = []
    if not analysed.empty:
        data = prepare(analysed)
        for k, rater in enumerate(data.raters):
            codes = data.answers[:, k]
            rater_rows.append(
                {
                    "rater": rater,
                    "analysed": len(codes),
                    "answered": int((codes >= 0).sum()),
                    "no_answer": int((codes == -1).sum()),
                    "not_predicted": int((codes == -2).sum()),
                }
            )
    return Flow(
        pd.DataFrame(stages, columns=STAGE_COLUMNS),
        pd.DataFrame(rater_rows, columns=RATER_COLUMNS),
    )
