"""Each reader's recorded place in a study's design: the arm they read first, their split-plot
group and the seed of their case and option orders, decided once, balanced across readers,
whenever they join."""

from __future__ import annotations

from collections import Counter

from django.db import transaction

from readerstudy.models import ReaderAssignment, ReaderStudy
from readerstudy.sampling import balanced_choice, order_seed_for


def assignment_for(*, study: ReaderStudy, reader) -> ReaderAssignment | None:
    """The reader's recorded place in the design, created on first need so that readers added
    later keep the arms (and groups) balanced within one. None for a study without a design.
    Every reading request asks: the common case is a plain read, outside any transaction."""
    if not study.designed:
        return None
    existing = ReaderAssignment.objects.filter(study=study, reader=reader).first()
    if existing is not None:
        return existing
    return _assign(study, reader)


@transaction.atomic
def _assign(study: ReaderStudy, reader) -> ReaderAssignment:
    existing = ReaderAssignment.objects.filter(study=study, reader=reader).first()
    if existing is not None:  # assigned meanwhile by another request
        return existing
    taken = list(
        ReaderAssignment.objects.select_for_update()
        .filter(study=study)
        .values_list("first_arm", "reader_group")
    )
    group = None
    if study.reader_groups >= 2:
        per_group = Counter(g for _, g in taken)
        group = balanced_choice({g: per_group[g] for g in range(1, study.reader_groups + 1)})
    arms = study.arm_list
    overall = Counter(a for a, _ in taken)
    in_group = Counter(a for a, g in taken if g == group)
    first_arm = balanced_choice({a: in_group[a] for a in arms}, {a: overall[a] for a in arms})
    return ReaderAssignment.objects.create(
        study=study,
        reader=reader,
        first_arm=first_arm,
        reader_group=group,
        order_seed=order_seed_for(study_seed=study.seed, study_id=study.id, reader_id=reader.pk),
    )
