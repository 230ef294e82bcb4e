"""When a reader may open a study's results (the debrief): the study's setting
(`ResultsVisibility`), then the one blinding rule (readerstudy.blinding), never a role.

A practice set shows its reader the key after every answer, so its results are open to its
reader as they go; a research study's only by its setting: never (the default), once the
reader's own reading is final, or once nobody reads it any more (every reader finished, or a
PI closed reading). Either way nothing opens while the person reads one of the study's X-rays
blind in another study.
"""

from __future__ import annotations

from readerstudy.blinding import blind_elsewhere, results_open_studies
from readerstudy.models import ReaderStudy, Role
from readerstudy.vocabulary import ResultsVisibility

NOT_YET = {
    ResultsVisibility.NEVER: "This study does not show its readers their results.",
    ResultsVisibility.OWN_FINAL: (
        "Your results open once your reading is final (your final submit on the review page)."
    ),
    ResultsVisibility.CLOSED: (
        "Your results open once the study's reading is closed: when every reader has "
        "finished, or a PI closes reading, so that no key can reach a colleague still reading."
    ),
}


def results_refusal(user, study: ReaderStudy) -> str:
    """Why `user` may not see `study`'s results now, in words; "" when they may. The caller
    has checked that `user` reads the study (readerstudy.selectors.study_for_user)."""
    if not study.memberships.filter(user=user, role=Role.READER).exists():
        return "Only the study's readers have results in it."
    if not study.practice and not results_open_studies(user).filter(pk=study.pk).exists():
        return NOT_YET[ResultsVisibility(study.results_visibility)]
    others = blind_elsewhere(user, study)
    if others:
        where = "; ".join(f"“{other.title}”" for other in others)
        return (
            f"You are reading X-rays of this study blind in another study ({where}). The "
            "results show their keys, so they open once that reading is final (your final "
            "submit, with answers locked)."
        )
    return ""
