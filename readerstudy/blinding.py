"""Blinding by person, not by study: the one rule, used by membership changes and by the access
function every page and API goes through.

Studies on one dataset share questions. Blinding used to be per study, so the PI of study B
could add a blinded reader of study A as an expert of B, and they read the key, explanation and
report of A's questions through B (issue 25, finding 1). The rule now is about the person:

    While someone reads a question blind (a reader of a study holding it, whose reading is not
    yet final and locked), no study shows them that question's key.

It is enforced twice, in the same terms:
- `membership_conflict` refuses the membership that would break it, naming the conflict: an
  expert or PI role on a study sharing questions the person reads blind, and a reader role on
  a study sharing questions the person already sees the key of as expert or PI. We refuse
  rather than hide questions: a PI or expert page with holes would mislead its user, and the
  refusal can be undone by the reader's final submit (or by ending their reader role).
- `study_for_user` (readerstudy.selectors), for every page and API that serves an expert or PI
  role, refuses a study sharing questions the person reads blind, so memberships made some
  other way (the admin, a shell, a data migration) cannot open the key either.

"Final" is the reader's final submit with their answers locked, of every session: a reader of a
two-arm study whose first session is final still reads every case again (the other arm), blind.
`completions` is the reverse name of annotation's ReaderCompletion, read here by name so the
core domain imports nothing above it.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet

from readerstudy.models import ReaderStudy, Role, StudyQuestion
from readerstudy.vocabulary import ARM_LAYOUTS

SEEING = (Role.EXPERT, Role.PI)


class BlindingConflict(PermissionDenied):
    """A page or role would show this person the key of a question they read blind."""


def blind_reading_studies(user) -> QuerySet[ReaderStudy]:
    """The studies `user` reads blind: reader of them, reading not yet final and locked in
    every session (a crossover's second session is read blind too)."""
    two_sessions = [layout for layout, arms in ARM_LAYOUTS.items() if len(arms) > 1]
    locked = Count(
        "completions",
        filter=Q(completions__reader=user, completions__locked=True),
        distinct=True,
    )
    final = ReaderStudy.objects.annotate(locked=locked).filter(
        Q(locked__gte=2) | (Q(locked__gte=1) & ~Q(arms__in=two_sessions))
    )
    return ReaderStudy.objects.filter(
        memberships__user=user, memberships__role=Role.READER
    ).exclude(id__in=final.values("id"))


def key_seeing_studies(user) -> QuerySet[ReaderStudy]:
    """The studies whose keys `user` sees as expert or PI."""
    return ReaderStudy.objects.filter(memberships__user=user, memberships__role__in=SEEING)


def _shared(study: ReaderStudy, others: QuerySet[ReaderStudy]) -> QuerySet[StudyQuestion]:
    """`study`'s questions that are also in one of `others`."""
    in_others = StudyQuestion.objects.filter(study__in=others.values("id"))
    return StudyQuestion.objects.filter(study=study, question_id__in=in_others.values("question"))


def _counts(study: ReaderStudy, others: QuerySet[ReaderStudy]) -> list[tuple[ReaderStudy, int]]:
    """Per other study, how many of `study`'s questions it shares."""
    shared = _shared(study, others).values("question")
    rows = (
        StudyQuestion.objects.filter(study__in=others.values("id"), question__in=shared)
        .values("study")
        .annotate(n=Count("question", distinct=True))
        .order_by("study")
    )
    by_id = ReaderStudy.objects.in_bulk([r["study"] for r in rows])
    return [(by_id[r["study"]], r["n"]) for r in rows]


def membership_conflict(*, user, study: ReaderStudy, role: str) -> str | None:
    """Why `user` may not take `role` in `study`, or None. The message is for the study's PI:
    it names the person, the count and the kind of conflict, not the other study (which the
    PI may not belong to)."""
    if role in SEEING:
        counts = _counts(study, blind_reading_studies(user))
        if counts:
            n = sum(c for _, c in counts)
            return (
                f"{user.get_username()} is reading {n} of this study's questions blind as a "
                f"reader{' here' if any(s.pk == study.pk for s, _ in counts) else ''}"
                f"{'' if all(s.pk == study.pk for s, _ in counts) else ' (in another study)'}; "
                f"as {role} they would see those questions' key, explanation and report. Add "
                "them once their reading is final (their final submit, answers locked)."
            )
    elif role == Role.READER:
        counts = _counts(study, key_seeing_studies(user))
        if counts:
            n = sum(c for _, c in counts)
            return (
                f"{user.get_username()} sees the key of {n} of this study's questions as "
                "expert or PI (here or in another study), so they cannot read them blind."
            )
    return None


def check_access(user, study: ReaderStudy) -> None:
    """Raise BlindingConflict if `study`'s expert and PI views would show `user` the key of a
    question they read blind. The message names the study they read it in (they belong to it).
    One query when there is no conflict."""
    if not _shared(study, blind_reading_studies(user)).exists():
        return
    counts = _counts(study, blind_reading_studies(user))
    where = "; ".join(
        f"{n} in “{other.title}”{' (this study)' if other.pk == study.pk else ''}"
        for other, n in counts
    )
    raise BlindingConflict(
        f"You are reading questions of this study blind ({where}). Its expert and PI pages "
        "show their key, so they stay closed to you until that reading is final (your final "
        "submit, with answers locked)."
    )
