"""The flow of questions through a study, like a CONSORT diagram: sampled, excluded by the PI
(with reasons), rejected by an expert, analysed; then per rater, what was answered and what
is missing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import prepare

STAGE_COLUMNS = ["stage", "detail", "questions", "x_rays"]
RATER_COLUMNS = ["rater", "analysed", "answered", "no_answer", "not_predicted", "too_fast"]


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


def analysed_rows(
    responses: pd.DataFrame, *, include_excluded: bool, exclude_rejected: bool = True
) -> pd.DataFrame:
    """The rows `analysed_mask` keeps: the frame itself when it keeps every row (a copy of
    ReXVQA's test split, 449,000 rows, is 52 MB)."""
    keep = analysed_mask(
        responses, include_excluded=include_excluded, exclude_rejected=exclude_rejected
    )
    return responses if keep.all() else responses[keep]


def drop_fast(responses: pd.DataFrame, fast: pd.Series) -> pd.DataFrame:
    """The policy `exclude_fast`: the answers `fast` marks (a boolean mask of `responses`:
    too fast to be a reading, by the reading rule the caller applies) are left out of that
    reader's n (as a question not presented, so neither "missing = wrong" nor "exclude" counts
    them), and out of the reading times."""
    if not fast.any():
        return responses
    out = responses.copy()
    out["presented"] = out.get("presented", pd.Series(True, index=out.index)).where(~fast, False)
    out["answer"] = out["answer"].where(~fast, None)
    if "time_ms" in out:
        out["time_ms"] = out["time_ms"].where(~fast, None)
    return out


def flow_tables(
    responses: pd.DataFrame,
    *,
    include_excluded: bool,
    exclude_rejected: bool = True,
    fast: pd.Series | None = None,
    fast_ms: int | None = None,
    exclude_fast: bool = False,
    questions: pd.DataFrame | None = None,
) -> Flow:
    """`responses`: the long frame with `excluded` (bool) and optionally `excluded_reason`
    and `rejected` (bool: an expert rejected the question). A question both excluded and
    rejected is counted once, under "Excluded by the PI".

    "no_answer" is a reader's missing answer or a model's failed extraction; "not_predicted"
    a question the model was never run on (or, split-plot, never shown to the reader).
    "too_fast": the answers `fast` marks (a boolean mask of `responses`: faster than
    `fast_ms` by the reading rule the caller applies), counted in every case; with
    `exclude_fast` they are not in "answered" (nor in any n), and a stage row (when `fast_ms`
    is set) says so.
    `questions` (one row per sampled question, the same question columns): what was sampled
    when nobody has answered yet; by default the responses' questions.
    """
    questions = (questions if questions is not None else responses).drop_duplicates("question_id")
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
    kept = analysed_mask(
        responses, include_excluded=include_excluded, exclude_rejected=exclude_rejected
    )
    everything = bool(kept.all())
    analysed = responses if everything else responses[kept]
    if fast is None:
        fast = pd.Series(False, index=analysed.index)
    elif not everything:
        fast = fast[kept]
    if fast_ms:
        fast_rows = analysed[fast]
        readers = fast_rows["rater"].nunique()
        what = "left out of each reader's n" if exclude_fast else "flagged, kept in the analysis"
        stages.append(
            {
                "stage": f"Answers faster than {fast_ms:g} ms",
                "detail": (
                    f"{len(fast_rows)} answers by {readers} reader{'s' if readers != 1 else ''}: "
                    f"{what} (policy exclude_fast {'on' if exclude_fast else 'off'})"
                ),
                "questions": int(fast_rows["question_id"].nunique()),
                "x_rays": int(
                    fast_rows["case_id" if "case_id" in fast_rows else "question_id"].nunique()
                ),
            }
        )
    fast_by_rater = analysed.loc[fast, "rater"].value_counts()
    rater_rows = []
    if not analysed.empty:
        data = prepare(analysed)
        for k, rater in enumerate(data.raters):
            codes = data.answers[:, k]
            too_fast = int(fast_by_rater.get(rater, 0))
            dropped = too_fast if exclude_fast else 0
            rater_rows.append(
                {
                    "rater": rater,
                    "analysed": len(codes),
                    "answered": int((codes >= 0).sum()) - dropped,
                    "no_answer": int((codes == -1).sum()),
                    "not_predicted": int((codes == -2).sum()),
                    "too_fast": too_fast,
                }
            )
    return Flow(
        pd.DataFrame(stages, columns=STAGE_COLUMNS),
        pd.DataFrame(rater_rows, columns=RATER_COLUMNS),
    )
