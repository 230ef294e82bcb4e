"""Reads of the core domain, and the one access function every view and API goes through."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.http import Http404

from readerstudy.blinding import check_access, check_reading
from readerstudy.models import Invitation, Membership, ReaderAssignment, ReaderStudy, Role
from readerstudy.vocabulary import AidMode, Arm


def roles_of(user, study: ReaderStudy) -> set[str]:
    if not user.is_authenticated:
        return set()
    return set(Membership.objects.filter(study=study, user=user).values_list("role", flat=True))


def study_for_user(user, slug: str, roles: Iterable[str]) -> ReaderStudy:
    """The study if `user` holds one of `roles` in it; otherwise 404, never 403.

    A 404 does not tell an outsider that the study exists. A page serving an expert or PI
    role (no reader role asked for) is refused with 403 while the person reads any of the
    study's X-rays blind, here or in another study; a reader's page of a study showing the
    AI's answers, while they read its X-rays unaided in another (readerstudy.blinding).
    """
    wanted = list(roles)
    if not user.is_authenticated:
        raise Http404("No such study.")
    study = (
        ReaderStudy.objects.select_related("dataset")
        .filter(slug=slug, memberships__user=user, memberships__role__in=wanted)
        .distinct()
        .first()
    )
    if study is None:
        raise Http404("No such study.")
    if Role.READER not in wanted:
        check_access(user, study)
    else:
        check_reading(user, study)
    return study


def studies_of(user) -> list[tuple[ReaderStudy, list[str]]]:
    """Every study the user belongs to, with their roles in it (for the home page)."""
    memberships = (
        Membership.objects.filter(user=user)
        .select_related("study")
        .order_by("-study__created_at", "role")
    )
    by_study: dict[int, tuple[ReaderStudy, list[str]]] = {}
    for m in memberships:
        by_study.setdefault(m.study_id, (m.study, []))[1].append(m.role)
    return list(by_study.values())


def design_sentence(study: ReaderStudy) -> str:
    """The study's design in one sentence, as the study page and create_study state it:
    "Crossover, 2 arms (unaided / aided by MedGemma, concurrent), washout 28 days, 6 readers
    balanced 3/3, 200 questions on 50 X-rays" (the names of docs/architecture.md:
    a sampled item is a question on an X-ray, as the analysis counts them)."""
    arms = study.arm_list
    names = [
        f"aided by {study.aid_model}, {AidMode(study.aid_mode).value}" if arm == Arm.AIDED else arm
        for arm in arms
    ]
    readers = Membership.objects.filter(study=study, role=Role.READER).count()
    parts = [
        f"Crossover, {len(arms)} arms ({' / '.join(names)})"
        if len(arms) > 1
        else f"Single arm ({names[0]})"
    ]
    if len(arms) > 1:
        parts.append(f"washout {study.washout_days} day{'s' if study.washout_days != 1 else ''}")
        first = Counter(
            ReaderAssignment.objects.filter(
                study=study, reader__memberships__study=study, reader__memberships__role=Role.READER
            ).values_list("first_arm", flat=True)
        )
        parts.append(
            f"{readers} reader{'s' if readers != 1 else ''} balanced "
            + "/".join(str(first[arm]) for arm in arms)
        )
    else:
        parts.append(f"{readers} reader{'s' if readers != 1 else ''}")
    if study.reader_groups:
        parts.append(
            f"{study.reader_groups} split-plot groups"
            + (f" + {study.anchor_size} anchor questions" if study.anchor_size else "")
        )
    if study.shuffle_options:
        parts.append("options shuffled per reader")
    if study.scale is not None:
        parts.append(
            f"confidence rated {study.scale.lowest}-{study.scale.highest} with each answer"
        )
    parts.append(sample_size_words(study))
    return ", ".join(parts)


def sample_xrays(study: ReaderStudy) -> int:
    """How many X-rays the study's sampled questions are on."""
    return study.items.values("question__case_id").distinct().count()


def sample_size_words(study: ReaderStudy) -> str:
    """The study's sample as every PI page says it: "200 questions on 50 X-rays"."""
    questions = study.items.count()
    x_rays = sample_xrays(study)
    return (
        f"{questions} question{'s' if questions != 1 else ''} on "
        f"{x_rays} X-ray{'s' if x_rays != 1 else ''}"
    )


def is_last_pi(membership: Membership) -> bool:
    """Whether `membership` is its study's only PI role: a study needs at least one PI."""
    return (
        membership.role == Role.PI
        and not Membership.objects.filter(study_id=membership.study_id, role=Role.PI)
        .exclude(pk=membership.pk)
        .exists()
    )


def pending_invitations(study: ReaderStudy) -> list[Invitation]:
    """Sign-in links of this study nobody has used or withdrawn yet, whose account is still
    only the link's (no usable password, never signed in: services.invitations.
    account_taken_up); expired ones included: the PI sees them and can send a new link."""
    return list(
        Invitation.objects.filter(
            study=study,
            used_at=None,
            revoked_at=None,
            user__last_login=None,
            user__password__startswith=UNUSABLE_PASSWORD_PREFIX,
        )
        .select_related("user")
        .order_by("user__username")
    )


def dataset_sizes() -> dict[int, dict]:
    """Per dataset: its questions and X-rays, in all and per task, so the new-study form can
    say how many questions a sample can take before anyone submits it. Two queries."""
    from django.db.models import Count

    from readerstudy.models import Question, Task

    labels = dict(Task.choices)
    out: dict[int, dict] = {}
    totals = Question.objects.values("dataset_id").annotate(
        questions=Count("id"), xrays=Count("case_id", distinct=True)
    )
    for row in totals:
        out[row["dataset_id"]] = {"questions": row["questions"], "xrays": row["xrays"], "tasks": []}
    per_task = (
        Question.objects.values("dataset_id", "task")
        .annotate(questions=Count("id"), xrays=Count("case_id", distinct=True))
        .order_by("dataset_id", "task")
    )
    for row in per_task:
        out[row["dataset_id"]]["tasks"].append(
            (labels.get(row["task"], row["task"]), row["questions"], row["xrays"])
        )
    return out
