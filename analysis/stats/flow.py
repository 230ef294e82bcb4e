"""The flow of questions through a study, like a CONSORT diagram: sampled, excluded by the PI
(with reasons), rejected by an expert, analysed; then per rater, what was answered and what
is missing."""

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


def analysed_mask(
    responses: pd.DataFrame, *, include_excluded: bool, exclude_rejected: bool = True
) -> pd.Series:
    """Rows of the long frame the analysis keeps under the policy: questions a PI excluded
    are left out unless included; questions an expert rejected (`rejected`, optional) are
    left out when `exclude_rejected`."""
    keep = pd.Series(True, index=responses.index)
    if not include_excluded and "excluded" in responses:
        keep &= ~responses["excluded"].fillna(False).astype(bool)
    if exclude_rejected and "rejected" in responses:
        keep &= ~responses["rejected"].fillna(False).astype(bool)
    return keep


def flow_tables(
    responses: pd.DataFrame, *, include_excluded: bool, exclude_rejected: bool = True
) -> Flow:
    """`responses`: the long frame with `excluded` (bool) and optionally `excluded_reason`
    and `rejected` (bool: an expert rejected the question). A question both excluded and
    rejected is counted once, under "Excluded by the PI".

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
    rejected = (
        questions["rejected"].fillna(False).astype(bool)
        if "rejected" in questions
        else pd.Series(False, index=questions.index)
    )
    rejected_only = rejected & ~excluded
    stages.append(
        {
            "stage": "Rejected by an expert",
            "detail": (
                "left out (policy exclude_rejected)"
                if exclude_rejected
                else "kept in the analysis (policy exclude_rejected off)"
            ),
            "questions": int(rejected_only.sum()),
            "x_rays": case[rejected_only].nunique(),
        }
    )
    keep = np.ones(len(questions), bool)
    if not include_excluded:
        keep &= ~excluded.to_numpy()
    if exclude_rejected:
        keep &= ~rejected.to_numpy()
    stages.append(
        {
            "stage": "Analysed",
            "detail": "",
            "questions": int(keep.sum()),
            "x_rays": case[keep].nunique(),
        }
    )
    analysed = responses[
        analysed_mask(
            responses, include_excluded=include_excluded, exclude_rejected=exclude_rejected
        )
    ]
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
