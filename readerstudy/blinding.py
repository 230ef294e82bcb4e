"""Blinding by person and by X-ray: the one rule, asked by every path that adds a member or
changes a design, by the access function every page and API goes through, and by anything
that would show a person what answers a question (`may_see_answers`).

What answers a question is its X-ray: its report, the keys and explanations of its other
questions, other readers' answers on it, and the AI's answers. Studies on one dataset share
X-rays (and a dataset imported twice holds the same X-rays again), so the rule is about the
person and the X-ray, never the study or the question:

    While someone reads an X-ray blind (a reader of a study holding it, their reading not yet
    final and locked in every session), nothing shows them its answers. While they read it
    unaided (an unaided study, or the unaided session of a crossover, not yet final), no
    other study shows them the AI's answers on it; their own crossover's aided session does,
    by design, after their unaided one or behind the washout.

"The same X-ray" (`same_xrays`) is the same case, or a case of any dataset with the same DICOM
StudyInstanceUID or an image with the same pixels (display images are named by the hash of
their content).

We refuse rather than hide (the decision and its reasons are in docs/operations.md,
Security): an expert's or PI's page with holes would mislead them, and what a study shows its
readers is its design. So:

- `membership_conflict` refuses a role that would break the rule, in words naming the person
  and the X-rays (not the other study, which the study's PI may not belong to): an expert or
  PI role on a study holding X-rays the person reads blind; a reader role on a study holding
  X-rays the person sees the answers of as expert or PI; a reader role in an aided study on
  X-rays the person reads unaided elsewhere, and in a study with an unaided arm on X-rays the
  person is shown the AI's answers on as a reader elsewhere. Every path that adds a member
  asks it (the members form, invitations, study creation from the page, the API and the
  command, the admin, the demo seed), and so does a design change, which can give a study
  an aided or an unaided arm.
- `check_access` (readerstudy.selectors.study_for_user) refuses the expert and PI pages of a
  study holding X-rays the person reads blind, and `check_reading` the reader pages of a
  study showing the AI's answers on X-rays the person reads unaided elsewhere, so a
  membership made behind the rules' back (a shell, a data migration) opens nothing either.
- `may_see_answers(user, xray)` answers "may this person see the answers of this X-ray now?"
  for anything that would show them one X-ray's key, explanation, report or others' answers
  (a debrief or a correction once "their reading is final" asks this, not a study's role).

A PI or expert who reads nothing blind sees everything of their study. "Final" is the
reader's final submit with their answers locked, of every session (a crossover's second
session is read blind too), or a PI closing the study's reading (nobody reads it any more).
`completions` is the reverse name of annotation's ReaderCompletion, read here by name so the
core domain imports nothing above it.

Learning brings two more ways of seeing answers, and the rule takes them as it takes the
expert's and PI's roles: a practice set shows its reader the key after every answer, and a
research study's debrief shows a reader whose results are open (its setting, their reading
final) the keys of its X-rays. So a practice set's reader role is refused, and its reading
pages closed, while the person reads any of its X-rays blind; and someone who practised on an
X-ray, or whose debrief of it is open, cannot then read it blind (`answers_seen_studies`).
A practice set is never read blind: it is no `blind_studies`.
"""

from __future__ import annotations

from enum import StrEnum

from django.db.models import Exists, OuterRef, Q, QuerySet

from readerstudy.models import Case, Image, Membership, ReaderStudy, Role, StudyQuestion
from readerstudy.platform.errors import RefusedInWords
from readerstudy.vocabulary import ARM_LAYOUTS, Arm, ResultsVisibility, StudyKind

SEEING = (Role.EXPERT, Role.PI)
TWO_SESSIONS = [layout for layout, arms in ARM_LAYOUTS.items() if len(arms) > 1]
WITH_AIDED = [layout for layout, arms in ARM_LAYOUTS.items() if Arm.AIDED in arms]
WITH_UNAIDED = [layout for layout, arms in ARM_LAYOUTS.items() if Arm.UNAIDED in arms]
NAMED_XRAYS = 8  # X-rays a message names; the rest are counted


class Sight(StrEnum):
    """What a page would show of an X-ray."""

    ANSWERS = "answers"  # its report, keys, explanations, others' answers, the AI's answers
    AI = "ai"  # the AI's answers on it


class BlindingConflict(RefusedInWords):
    """A page or role would show this person the answers of an X-ray they read blind (the
    error page says which studies conflict)."""


def _reader_studies(user) -> QuerySet[ReaderStudy]:
    return ReaderStudy.objects.filter(memberships__user=user, memberships__role=Role.READER)


def _research_read(user) -> QuerySet[ReaderStudy]:
    """The research studies `user` reads whose reading no PI has closed."""
    return _reader_studies(user).filter(kind=StudyKind.RESEARCH, reading_closed_at=None)


def _completions():
    """annotation's ReaderCompletion, through the relation's name (no import upwards)."""
    return ReaderStudy._meta.get_field("completions").related_model.objects


def _locked_member(session: int) -> Exists:
    """Inside a Membership query: its user finished `session` of its study, answers locked."""
    return Exists(
        _completions().filter(
            study=OuterRef("study"), reader=OuterRef("user"), locked=True, session=session
        )
    )


def reading_done() -> Q:
    """A filter on ReaderStudy: nobody reads it any more (a PI closed its reading, or every
    reader's reading is final: locked in every session). What the "closed" results setting
    waits for, so that no key can reach a colleague still reading."""
    unfinished = Membership.objects.filter(study=OuterRef("pk"), role=Role.READER).filter(
        ~_locked_member(1) | (Q(study__arms__in=TWO_SESSIONS) & ~_locked_member(2))
    )
    return Q(reading_closed_at__isnull=False) | ~Exists(unfinished)


def _final(user) -> Q:
    """A filter on ReaderStudy: `user`'s reading of it is final (locked in every session)."""
    return Q(id__in=_locked(user, 1)) & (~Q(arms__in=TWO_SESSIONS) | Q(id__in=_locked(user, 2)))


def results_open_studies(user) -> QuerySet[ReaderStudy]:
    """The research studies whose debrief is open to `user` as a reader now, by the study's
    setting (ResultsVisibility): their own reading final, or nobody reading any more. (The
    debrief also asks `may_see_answers` of every X-ray: readerstudy.results.)"""
    own = Q(results_visibility=ResultsVisibility.OWN_FINAL) & (
        _final(user) | Q(reading_closed_at__isnull=False)
    )
    closed = Q(results_visibility=ResultsVisibility.CLOSED) & reading_done()
    return _reader_studies(user).filter(kind=StudyKind.RESEARCH).filter(own | closed)


def _locked(user, session: int) -> QuerySet:
    """Ids of the studies whose `session` the user finished with answers locked."""
    return ReaderStudy.objects.filter(
        completions__reader=user, completions__locked=True, completions__session=session
    ).values("id")


def blind_studies(user) -> QuerySet[ReaderStudy]:
    """The studies `user` reads blind: research studies they read, their reading not yet
    final and locked in every session, and not closed by a PI. (A practice set shows the
    key after each answer: it is never read blind.)"""
    return _research_read(user).exclude(_final(user))


def unaided_studies(user) -> QuerySet[ReaderStudy]:
    """The studies whose unaided session `user` reads and has not finished (locked): session
    1 of an unaided study, and of a crossover unless they read it aided first (then 2)."""
    aided_first = ReaderStudy.objects.filter(
        assignments__reader=user, assignments__first_arm=Arm.AIDED
    ).values("id")
    crossover = Q(arms__in=TWO_SESSIONS)
    unaided_session_final = (
        (~crossover & Q(id__in=_locked(user, 1)))
        | (crossover & ~Q(id__in=aided_first) & Q(id__in=_locked(user, 1)))
        | (crossover & Q(id__in=aided_first) & Q(id__in=_locked(user, 2)))
    )
    return _research_read(user).filter(arms__in=WITH_UNAIDED).exclude(unaided_session_final)


def answers_seen_studies(user) -> QuerySet[ReaderStudy]:
    """The studies whose answers `user` sees: as expert or PI, as the reader of a practice
    set (the key after every answer), or in a research study's debrief open to them."""
    roles = Q(memberships__user=user, memberships__role__in=SEEING)
    practice = Q(id__in=_reader_studies(user).filter(kind=StudyKind.PRACTICE).values("id"))
    debrief = Q(id__in=results_open_studies(user).values("id"))
    return ReaderStudy.objects.filter(roles | practice | debrief).distinct()


def ai_seen_studies(user) -> QuerySet[ReaderStudy]:
    """The studies that show `user` the AI's answers as a reader (an aided arm)."""
    return _reader_studies(user).filter(kind=StudyKind.RESEARCH, arms__in=WITH_AIDED)


def _cases_of(studies: QuerySet[ReaderStudy]) -> QuerySet:
    return StudyQuestion.objects.filter(study__in=studies.values("id")).values("question__case_id")


def same_xrays(cases: QuerySet) -> Q:
    """A filter on Case for the X-rays that are `cases` (a query of case ids), in any
    dataset: the same case, the same StudyInstanceUID, or an image with the same pixels."""
    uids = Case.objects.filter(pk__in=cases).exclude(study_instance_uid="")
    pixels = Image.objects.filter(case_id__in=cases).exclude(display="")
    return (
        Q(pk__in=cases)
        | Q(study_instance_uid__in=uids.values("study_instance_uid"))
        | Q(images__display__in=pixels.values("display"))
    )


def hidden_xrays(user, sight: Sight = Sight.ANSWERS, *, besides: ReaderStudy | None = None) -> Q:
    """A filter on Case: the X-rays whose `sight` `user` may not be shown now (by a study
    other than `besides`, for the AI: a crossover shows its own readers the AI by design)."""
    studies = blind_studies(user) if sight == Sight.ANSWERS else unaided_studies(user)
    if besides is not None:
        studies = studies.exclude(pk=besides.pk)
    return same_xrays(_cases_of(studies))


def may_see_answers(user, xray: Case, sight: Sight = Sight.ANSWERS) -> bool:
    """May `user` be shown `sight` of this X-ray now? No while they read it blind (the
    answers) or unaided (the AI's answers), in any study."""
    return not Case.objects.filter(hidden_xrays(user, sight), pk=xray.pk).exists()


def _study_xrays(study: ReaderStudy, within: Q) -> list[str]:
    """The study's X-rays (their ids in the dataset) that `within` (a filter on Case) holds."""
    cases = Case.objects.filter(questions__study_items__study=study).filter(within)
    return sorted(set(cases.values_list("study_id", flat=True)))


def _studies_sharing(study: ReaderStudy, studies: QuerySet[ReaderStudy]) -> list[ReaderStudy]:
    """Those of `studies` holding one of `study`'s X-rays."""
    mine = StudyQuestion.objects.filter(study=study).values("question__case_id")
    shared = Case.objects.filter(same_xrays(mine)).values("pk")
    return list(studies.filter(items__question__case__in=shared).distinct().order_by("title"))


def named(xrays: list[str]) -> str:
    """The X-rays of a study a conflict is about, counted and named (at most NAMED_XRAYS
    names): "3 of this study's X-rays (a, b, c)". Counted in this study, once each."""
    n = len(xrays)
    shown = ", ".join(xrays[:NAMED_XRAYS])
    more = f" and {n - NAMED_XRAYS} more" if n > NAMED_XRAYS else ""
    return f"{n} of this study's X-ray{'s' if n != 1 else ''} ({shown}{more})"


def _where(study: ReaderStudy, sharing: list[ReaderStudy]) -> str:
    """Where the conflicting role is, without naming another study: " here", " in another
    study" or " here and in another study"."""
    here = any(other.pk == study.pk for other in sharing)
    elsewhere = any(other.pk != study.pk for other in sharing)
    if here and elsewhere:
        return " here and in another study"
    return " here" if here else " in another study"


def _conflict(study: ReaderStudy, studies: QuerySet[ReaderStudy]) -> tuple[list[str], str]:
    """`study`'s X-rays that `studies` hold (by `same_xrays`) and where they are."""
    xrays = _study_xrays(study, same_xrays(_cases_of(studies)))
    return xrays, _where(study, _studies_sharing(study, studies)) if xrays else ""


def membership_conflict(
    *, user, study: ReaderStudy, role: str, arms: str | None = None
) -> str | None:
    """Why `user` may not take `role` in `study` (with the arm layout `arms`, default the
    study's own), or None. The message is for the study's PI: it names the person and the
    X-rays, never the other study (which the PI may not belong to)."""
    name = user.get_username()
    layout = ARM_LAYOUTS.get(arms or study.arms, ())
    if role in SEEING or (role == Role.READER and study.practice):
        xrays, where = _conflict(study, blind_studies(user))
        if xrays:
            seeing = (
                "in this practice set they would see those X-rays' keys and explanations "
                "after each answer"
                if role == Role.READER
                else f"as {role} they would see those X-rays' report, keys, explanations "
                "and other readers' and the AI's answers"
            )
            return (
                f"{name} is reading {named(xrays)} blind as a reader{where}; {seeing}. Add "
                "them once their reading is final (their final submit, answers locked)."
            )
        return None
    if role != Role.READER:
        return None
    xrays, where = _conflict(study, answers_seen_studies(user))
    if xrays:
        return (
            f"{name} sees the answers of {named(xrays)} (as expert or PI, in a practice "
            f"set or a debrief){where}, so they cannot read them blind."
        )
    if Arm.AIDED in layout:
        xrays, _ = _conflict(study, unaided_studies(user).exclude(pk=study.pk))
        if xrays:
            return (
                f"{name} is reading {named(xrays)} unaided in another study; this study would "
                "show them the AI's answers on those X-rays. Add them once that reading is "
                "final (their final submit, answers locked)."
            )
    if Arm.UNAIDED in layout:
        xrays, _ = _conflict(study, ai_seen_studies(user).exclude(pk=study.pk))
        if xrays:
            return (
                f"{name} is shown the AI's answers on {named(xrays)} as a reader of an aided "
                "study, so they cannot read those X-rays unaided."
            )
    return None


def _refusal(study: ReaderStudy, others: list[ReaderStudy], what: str, until: str) -> str:
    where = "; ".join(
        f"“{other.title}”{' (this study)' if other.pk == study.pk else ''}" for other in others
    )
    return f"You are reading X-rays of this study {what} ({where}). {until}"


def check_access(user, study: ReaderStudy) -> None:
    """Raise BlindingConflict if `study`'s expert and PI views would show `user` the answers
    of an X-ray they read blind. The message names the study they read it in (they belong to
    it). One small query for someone who reads nothing blind (the common case), two when
    there is no conflict."""
    if not blind_studies(user).exists():
        return
    holding = StudyQuestion.objects.filter(study=study, question__case__in=_hidden(user))
    if not holding.exists():
        return
    raise BlindingConflict(
        _refusal(
            study,
            _studies_sharing(study, blind_studies(user)),
            "blind",
            "Its expert and PI pages show their report, keys and answers, so they stay closed "
            "to you until that reading is final (your final submit, with answers locked).",
        )
    )


def _hidden(user, sight: Sight = Sight.ANSWERS, besides: ReaderStudy | None = None) -> QuerySet:
    return Case.objects.filter(hidden_xrays(user, sight, besides=besides)).values("pk")


def check_reading(user, study: ReaderStudy) -> None:
    """Raise BlindingConflict if `study`'s reader pages would show `user` the AI's answers on
    an X-ray they read unaided in another study, or (a practice set) the keys of an X-ray they
    read blind. No query for a research study without an aided arm, one small one for a
    reader of no other study, two when there is no conflict."""
    if study.practice:
        _check_practice(user, study)
        return
    if Arm.AIDED not in study.arm_list:
        return
    if not unaided_studies(user).exclude(pk=study.pk).exists():
        return
    holding = StudyQuestion.objects.filter(
        study=study, question__case__in=_hidden(user, Sight.AI, besides=study)
    )
    if not holding.exists():
        return
    raise BlindingConflict(
        _refusal(
            study,
            _studies_sharing(study, unaided_studies(user).exclude(pk=study.pk)),
            "unaided in another study",
            "This study shows the AI's answers on them, so its reading stays closed to you "
            "until that reading is final (your final submit, with answers locked).",
        )
    )


def _check_practice(user, study: ReaderStudy) -> None:
    """A practice set shows the key after each answer: closed while `user` reads any of its
    X-rays blind (a membership made behind the rules' back)."""
    if not blind_studies(user).exists():
        return
    holding = StudyQuestion.objects.filter(study=study, question__case__in=_hidden(user))
    if not holding.exists():
        return
    raise BlindingConflict(
        _refusal(
            study,
            _studies_sharing(study, blind_studies(user)),
            "blind",
            "This practice set shows the key after each answer, so it stays closed to you "
            "until that reading is final (your final submit, with answers locked).",
        )
    )


def blind_elsewhere(user, study: ReaderStudy) -> list[ReaderStudy]:
    """The studies other than `study` in which `user` reads blind one of `study`'s X-rays
    (empty: every X-ray of it may show them its answers, as far as blinding goes)."""
    others = blind_studies(user).exclude(pk=study.pk)
    if not others.exists():
        return []
    return [s for s in _studies_sharing(study, others) if s.pk != study.pk]
