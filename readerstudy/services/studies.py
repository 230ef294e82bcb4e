"""Create reader studies, derive their display images, manage memberships."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from readerstudy.blinding import membership_conflict, reading_done
from readerstudy.design.assignments import assignment_for
from readerstudy.imaging import ImagingError, derive_display_image
from readerstudy.locks import design_lock
from readerstudy.models import (
    AuditEvent,
    Dataset,
    Image,
    Membership,
    Question,
    ReaderStudy,
    Role,
    StudyQuestion,
    Task,
)
from readerstudy.platform.accounts import username_normalized
from readerstudy.sampling import SEED_MAX, Candidate, SamplingError, sample
from readerstudy.signals import data_changed


class StudyError(ValueError):
    pass


@dataclass
class StudyCreated:
    study: ReaderStudy
    question_ids: list[str]
    per_task: dict[str, int]
    images_derived: int


def _users(usernames: list[str]) -> list:
    usernames = [username_normalized(name) for name in usernames]
    User = get_user_model()
    found = {u.username: u for u in User.objects.filter(username__in=usernames)}
    missing = [name for name in usernames if name not in found]
    if missing:
        raise StudyError(f"unknown user(s): {', '.join(missing)}")
    return [found[name] for name in usernames]


def _sample_rows(
    dataset: Dataset, rows: list[tuple], n: int, seed: int, stratify: str, one_per_case: bool
) -> list[str]:
    """The sample of `rows` (id, source_id, task, category, case_id), or StudyError why not."""
    if not rows:
        raise StudyError(f"dataset {dataset.name!r} has no questions")
    candidates = [
        Candidate(
            question_id=source_id,
            stratum=(task if stratify == "task" else category or "(none)"),
            case_id=str(case_id),
        )
        for _, source_id, task, category, case_id in rows
    ]
    try:
        return sample(
            candidates, n, seed=seed, stratified=stratify != "none", one_per_case=one_per_case
        )
    except SamplingError as exc:
        raise StudyError(str(exc)) from exc


def sample_problem(
    *, dataset: Dataset, n: int, seed: int = 0, stratify: str = "task", one_per_case: bool = False
) -> str:
    """Why `study_create` could not sample `n` questions from `dataset` ("" if it can): the
    same rules, run without writing, so the form says "asked for 500 questions but only 22
    are available" on the first submit, beside the field, with every other error."""
    rows = list(dataset.questions.values_list("id", "source_id", "task", "category", "case_id"))
    try:
        _sample_rows(dataset, rows, n, seed, stratify, one_per_case)
    except StudyError as exc:
        return str(exc)
    return ""


def unknown_users(usernames: list[str]) -> list[str]:
    """The names in `usernames` no account has (what `study_create` would refuse)."""
    usernames = [username_normalized(name) for name in usernames]
    User = get_user_model()
    found = set(User.objects.filter(username__in=usernames).values_list("username", flat=True))
    return [name for name in usernames if name not in found]


def _derived_already(image: Image, media_root: Path) -> bool:
    if not image.display or not (media_root / image.display).exists():
        return False
    if image.depth:
        return (media_root / image.depth).exists()
    # Derived before full depth existed: a deep source needs its full-depth PNG too.
    return not (image.bits_stored and image.bits_stored > 8)


def derive_images(images: list[Image], progress=None) -> int:
    """Derive display (and full-depth) PNGs for images that have none yet; return how many.

    A source that cannot be derived (changed or corrupt since the import checked it) raises
    StudyError naming the case and the file, never a raw decoder error.
    """
    media_root = Path(settings.MEDIA_ROOT)
    derived = 0
    for done, image in enumerate(images):
        if progress is not None:  # a task's report: (done, total, stage)
            progress(done, len(images), "deriving the display images")
        if _derived_already(image, media_root):
            continue
        try:
            result = derive_display_image(
                Path(image.source_path),
                media_root,
                max_size=settings.DISPLAY_MAX_SIZE,
                thumb_size=settings.THUMBNAIL_MAX_SIZE,
                max_pixels=settings.MAX_IMAGE_PIXELS,
            )
        except ImagingError as exc:
            raise StudyError(f"case {image.case.study_id!r}: {exc}") from exc
        fields = result.image_fields()
        for name, value in fields.items():
            setattr(image, name, value)
        image.save(update_fields=list(fields))
        derived += 1
    return derived


def study_create(
    *,
    slug: str,
    dataset: Dataset,
    n: int,
    seed: int = 0,
    stratify: str = "task",
    one_per_case: bool = False,
    title: str = "",
    readers: list[str] = (),
    experts: list[str] = (),
    pis: list[str] = (),
    created_by=None,
    progress=None,
    pool: list[int] | None = None,
    **options,
) -> StudyCreated:
    """Sample `n` questions of `dataset` (of `pool`, question ids, when given) into a new
    study with its members, and derive the sampled cases' display images."""
    if ReaderStudy.objects.filter(slug=slug).exists():
        raise StudyError(f"a study with slug {slug!r} already exists")
    if stratify not in {"task", "category", "none"}:
        raise StudyError("stratify must be task, category or none")
    if not 0 <= seed <= SEED_MAX:
        raise StudyError(f"seed must be between 0 and {SEED_MAX}")
    members = [
        (user, role)
        for names, role in ((readers, Role.READER), (experts, Role.EXPERT), (pis, Role.PI))
        for user in _users(list(names))
    ]
    questions = dataset.questions.all() if pool is None else dataset.questions.filter(id__in=pool)
    rows = list(questions.values_list("id", "source_id", "task", "category", "case_id"))
    chosen = _sample_rows(dataset, rows, n, seed, stratify, one_per_case)
    pk_by_source = {source_id: pk for pk, source_id, *_ in rows}
    task_by_source = {source_id: task for _, source_id, task, *_ in rows}
    with transaction.atomic():
        study = ReaderStudy.objects.create(
            slug=slug,
            title=title or slug.replace("-", " ").title(),
            dataset=dataset,
            seed=seed,
            created_by=created_by,
            **options,
        )
        StudyQuestion.objects.bulk_create(
            StudyQuestion(study=study, question_id=pk_by_source[qid], position=i)
            for i, qid in enumerate(chosen)
        )
        for user, role in members:
            membership_add(study=study, user=user, role=role, actor=created_by)
        case_ids = Question.objects.filter(study_items__study=study).values("case_id")
        images = Image.objects.filter(case_id__in=case_ids).select_related("case")
        derived = derive_images(list(images), progress)
    per_task = Counter(Task(task_by_source[qid]).label for qid in chosen)
    return StudyCreated(study, chosen, dict(sorted(per_task.items())), derived)


@transaction.atomic
def membership_add(
    *, study: ReaderStudy, user, role: str, actor=None, seniority: str | None = None
) -> Membership:
    """Add a member (idempotent); StudyError if that would break blinding by person and
    X-ray (readerstudy.blinding: a blind reader of shared X-rays as expert/PI, or the reverse;
    a reader shown the AI's answers on X-rays they read unaided elsewhere, or the reverse).
    `seniority` (training year or seniority, optional) is set on a new membership, or changed
    on an existing one when given."""
    exists = Membership.objects.filter(study=study, user=user, role=role).exists()
    conflict = None if exists else membership_conflict(user=user, study=study, role=role)
    if conflict:
        raise StudyError(conflict)
    membership, created = Membership.objects.get_or_create(
        study=study, user=user, role=role, defaults={"seniority": (seniority or "").strip()}
    )
    if role == Role.READER:
        # A reader of a designed study gets their recorded, balancing place in it.
        assignment_for(study=study, reader=user)
    if created:
        AuditEvent.objects.create(
            study=study,
            actor=actor,
            action="membership.add",
            detail={"user": user.username, "role": role, "seniority": membership.seniority},
        )
    elif seniority is not None and seniority.strip() != membership.seniority:
        membership.seniority = seniority.strip()
        membership.save(update_fields=["seniority"])
        AuditEvent.objects.create(
            study=study,
            actor=actor,
            action="membership.seniority",
            detail={"user": user.username, "role": role, "seniority": membership.seniority},
        )
    return membership


@transaction.atomic
def membership_remove(*, study: ReaderStudy, user, role: str, actor=None) -> bool:
    """Remove `user`'s `role` in `study`. A study keeps at least one PI: removing the last one
    raises StudyError (the PI rows are locked, so two PIs removing each other cannot both
    succeed)."""
    if role == Role.PI:
        pis = list(
            Membership.objects.select_for_update()
            .filter(study=study, role=Role.PI)
            .values_list("user_id", flat=True)
        )
        if pis == [user.pk]:
            raise StudyError("A study needs at least one PI.")
    deleted, _ = Membership.objects.filter(study=study, user=user, role=role).delete()
    if deleted:
        AuditEvent.objects.create(
            study=study,
            actor=actor,
            action="membership.remove",
            detail={"user": user.username, "role": role},
        )
    return bool(deleted)


@transaction.atomic
def study_question_set_excluded(
    *, item: StudyQuestion, excluded: bool, reason: str, actor
) -> StudyQuestion:
    """Exclude a question from analysis (or include it again); the reason is required."""
    reason = reason.strip()
    if not reason:
        raise StudyError("a reason is required")
    item.excluded = excluded
    item.excluded_reason = reason
    item.excluded_by = actor
    item.excluded_at = timezone.now()
    item.save(update_fields=["excluded", "excluded_reason", "excluded_by", "excluded_at"])
    AuditEvent.objects.create(
        study=item.study,
        actor=actor,
        action="question.exclude" if excluded else "question.include",
        detail={"question": item.question.source_id, "reason": reason},
    )
    data_changed(item.study)
    return item


@transaction.atomic
def study_reading_set(
    *, study: ReaderStudy, actor, default_window: str, break_minutes: int
) -> list[str]:
    """Set how readers read the study (the window each case opens at, the break reminder);
    checked by the model's validators (ValidationError by field), audited. Returns the fields
    that changed."""
    before = {"default_window": study.default_window, "break_minutes": study.break_minutes}
    study.default_window, study.break_minutes = default_window, break_minutes
    others = [f.name for f in ReaderStudy._meta.fields if f.name not in before]
    try:
        study.clean_fields(exclude=others)  # ValidationError by field, for the form
    except ValidationError:
        study.default_window, study.break_minutes = before.values()
        raise
    changed = [name for name, value in before.items() if getattr(study, name) != value]
    if changed:
        study.save(update_fields=changed)
        AuditEvent.objects.create(
            study=study,
            actor=actor,
            action="study.reading",
            detail={name: getattr(study, name) for name in changed},
        )
    return changed


@transaction.atomic
def study_results_set(
    *, study: ReaderStudy, actor, visibility: str, show_ai: bool, misses_unseen: int
) -> list[str]:
    """Set what the study's readers get back (when their debrief opens, whether it shows the
    AI's answers, what "practise my misses" adds); checked by the model's validators
    (ValidationError by field), audited. Returns the fields that changed."""
    before = {
        "results_visibility": study.results_visibility,
        "results_show_ai": study.results_show_ai,
        "misses_unseen": study.misses_unseen,
    }
    study.results_visibility, study.results_show_ai, study.misses_unseen = (
        visibility,
        show_ai,
        misses_unseen,
    )
    others = [f.name for f in ReaderStudy._meta.fields if f.name not in before]
    try:
        study.clean_fields(exclude=others)
    except ValidationError:
        study.results_visibility, study.results_show_ai, study.misses_unseen = before.values()
        raise
    changed = [name for name, value in before.items() if getattr(study, name) != value]
    if changed:
        study.save(update_fields=changed)
        AuditEvent.objects.create(
            study=study,
            actor=actor,
            action="study.results",
            detail={name: getattr(study, name) for name in changed},
        )
    return changed


@transaction.atomic
def study_reading_close(*, study: ReaderStudy, actor) -> bool:
    """A PI closes the study's reading: from now on nobody answers or finishes, and nobody
    reads its X-rays blind any more (readerstudy.blinding), so a "closed" results setting
    opens every reader's debrief. Final: it cannot be opened again. Audited, with how many
    readers had not finished. Returns False when it was closed already."""
    design_lock(study.pk, shared=False)  # answers in flight first; later ones see it closed
    locked = ReaderStudy.objects.select_for_update().get(pk=study.pk)
    if locked.reading_closed_at is not None:
        return False
    done = ReaderStudy.objects.filter(pk=study.pk).filter(reading_done()).exists()
    locked.reading_closed_at, locked.reading_closed_by = timezone.now(), actor
    locked.save(update_fields=["reading_closed_at", "reading_closed_by"])
    study.reading_closed_at, study.reading_closed_by = locked.reading_closed_at, actor
    AuditEvent.objects.create(
        study=study,
        actor=actor,
        action="study.reading_closed",
        detail={"every_reader_finished": done},
    )
    data_changed(study)
    return True
