"""Agreement within a panel of experts on their categorical verdicts (decision, each flag),
for the review queue's agreement table.

Fleiss' kappa is the statistics library's, so the review queue and the analysis count the
same questions for it: those every member of the panel rated. Fleiss' kappa needs the same
number of ratings of every question; taking the questions the whole panel rated meets that
without choosing which of them to drop. It lives in the analysis layer because it uses that
library; the reviews it reads are annotation's (`annotation.reviews`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats import fleiss_kappa, panel_answers
from annotation.reviews import reviews_frame, reviews_visible_to
from readerstudy.models import ReaderStudy
from readerstudy.vocabulary import ReviewFlag


def expert_agreement(study: ReaderStudy, user) -> list[dict]:
    """Agreement between experts on the decision and on each flag, over what `user` may see.

    An expert gets the agreement on the questions they have reviewed only: on any other
    question it would tell them what their colleagues decided.
    """
    frame = reviews_frame(reviews_visible_to(study, user))
    if frame.empty:
        return []
    frame = frame.rename(
        columns={"item__question__source_id": "question_id", "expert__username": "rater"}
    )
    out = [{"what": "Decision", **panel_agreement(frame.assign(answer=frame["decision"]))}]
    for value, label in ReviewFlag.choices:
        out.append({"what": label, **panel_agreement(frame.assign(answer=frame[f"flag_{value}"]))})
    return out


def panel_agreement(df: pd.DataFrame) -> dict:
    """Agreement of a panel on one categorical item per question (e.g. experts' decisions).

    df: question_id, rater, answer (any labels); the panel is every rater in `df`.
    `questions`, `agreement`: the questions rated by two or more raters and the mean pairwise
    percent agreement on them; `fleiss_kappa` and `kappa_questions`: Fleiss' kappa on the
    questions every panel member rated, and how many those are.
    """
    counts = df.groupby("question_id")["rater"].transform("size")
    shared = df[counts >= 2]
    if shared.empty:
        return {
            "questions": 0,
            "agreement": float("nan"),
            "fleiss_kappa": float("nan"),
            "kappa_questions": 0,
        }
    agree = []
    for _, group in shared.groupby("question_id"):
        values = group["answer"].tolist()
        pairs = [(a, b) for i, a in enumerate(values) for b in values[i + 1 :]]
        agree.append(sum(a == b for a, b in pairs) / len(pairs))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = fleiss_kappa(df)
    return {
        "questions": int(shared["question_id"].nunique()),
        "agreement": float(np.mean(agree)),
        "fleiss_kappa": kappa,
        "kappa_questions": len(panel_answers(df)),
    }
