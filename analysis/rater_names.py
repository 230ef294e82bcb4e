"""Who the raters of a study are, and what the figures call them.

Internally a rater is kind + id ("reader:12", "model:3"): a model called `reader2` can never
be confused with the user `reader2`. What a table or figure shows is the display name: the
PI's label, else "Reader 1", "Reader 2", ... for humans in the order they joined (user id, so
the numbers do not move when someone new starts) and the model's name for models. Display
names are unique within a study, so every statistic can be keyed by them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from analysis.confidence_analysis import PANEL, POOLED
from analysis.models import RaterLabel
from readerstudy.models import AuditEvent, Membership, ReaderStudy, Role
from readerstudy.signals import data_changed

HUMAN, MODEL = "human", "model"
MAX_LABEL = RaterLabel._meta.get_field("label").max_length


@dataclass(frozen=True)
class Rater:
    rater_id: str  # "reader:<user id>" or "model:<AI model id>"
    kind: str  # "human" or "model"
    source: str  # the username or the model's name
    name: str  # what figures and tables show


def reader_key(user_id: int) -> str:
    return f"reader:{user_id}"


def model_key(model_id: int) -> str:
    return f"model:{model_id}"


class RaterLabelError(ValueError):
    pass


# What the tables call their rows of several raters: no rater may be called so.
RESERVED = frozenset(name.casefold() for name in (PANEL, POOLED))


def display_names(
    readers: Iterable[tuple[int, str]],
    models: Iterable[tuple[int, str]],
    labels: dict[str, str],
    joined: Iterable[int] = (),
) -> list[Rater]:
    """Readers (user id, username) then models (id, name), each with a unique display name.

    The PI's labels win; defaults that would collide with a name already taken, or with what
    the tables call their rows of several raters (RESERVED), get a suffix (" (model)", then
    " (2)", ...), compared without regard to case. `joined`: the user ids of the study's
    readers who have not started yet; they hold their numbers, so a reader who joined early
    and starts late does not renumber the others.
    """
    readers = sorted(readers)
    numbers: dict[int, int] = {}
    for user_id in sorted({user_id for user_id, _ in readers} | set(joined)):
        if reader_key(user_id) not in labels:
            numbers[user_id] = len(numbers) + 1
    taken = {label.casefold() for label in labels.values()} | RESERVED
    out: list[Rater] = []

    def unique(wanted: str, suffixes: list[str]) -> str:
        for suffix in suffixes:
            name = wanted + suffix
            if name.casefold() not in taken:
                taken.add(name.casefold())
                return name
        n = 2
        while f"{wanted} ({n})".casefold() in taken:
            n += 1
        taken.add(f"{wanted} ({n})".casefold())
        return f"{wanted} ({n})"

    for user_id, username in readers:
        key = reader_key(user_id)
        if key in labels:
            out.append(Rater(key, HUMAN, username, labels[key]))
            continue
        out.append(Rater(key, HUMAN, username, unique(f"Reader {numbers[user_id]}", [""])))
    for model_id, name in sorted(models, key=lambda m: (m[1].casefold(), m[0])):
        key = model_key(model_id)
        if key in labels:
            out.append(Rater(key, MODEL, name, labels[key]))
            continue
        out.append(Rater(key, MODEL, name, unique(name, ["", " (model)"])))
    return out


def joined_readers(study: ReaderStudy) -> set[int]:
    """The user ids of the study's readers (members), started or not: what numbers them."""
    return set(
        Membership.objects.filter(study=study, role=Role.READER).values_list("user_id", flat=True)
    )


def study_labels(study: ReaderStudy) -> dict[str, str]:
    return dict(RaterLabel.objects.filter(study=study).values_list("rater", "label"))


@transaction.atomic
def rater_labels_set(
    *,
    study: ReaderStudy,
    actor,
    raters: list[Rater],
    labels: dict[str, str],
) -> None:
    """Store the PI's display names for `raters` (rater_id -> label; blank = the default).

    Refuses (RaterLabelError, nothing saved) a label that is too long, that another rater
    of the study would also be called, or that the tables give their rows of several raters.
    """
    known = {r.rater_id: r for r in raters}
    unknown = set(labels) - set(known)
    if unknown:
        raise RaterLabelError(f"Unknown rater(s): {', '.join(sorted(unknown))}.")
    wanted = study_labels(study)
    for key, label in labels.items():
        label = " ".join(str(label).split())
        if len(label) > MAX_LABEL:
            raise RaterLabelError(f"“{label[:20]}…” is longer than {MAX_LABEL} characters.")
        if label.casefold() in RESERVED:
            raise RaterLabelError(
                f"“{label}” names rows of several raters in the tables; choose another name."
            )
        if label:
            wanted[key] = label
        else:
            wanted.pop(key, None)
    wanted = {k: v for k, v in wanted.items() if k in known}
    seen: set[str] = set()
    for label in wanted.values():
        if label.casefold() in seen:
            raise RaterLabelError(f"Two raters would both be called “{label}”.")
        seen.add(label.casefold())
    # Delete and recreate: swapping two labels must not trip the unique constraint midway.
    RaterLabel.objects.filter(study=study).delete()
    RaterLabel.objects.bulk_create(
        RaterLabel(study=study, rater=key, label=label) for key, label in wanted.items()
    )
    AuditEvent.objects.create(
        study=study,
        actor=actor,
        action="analysis.rater_labels",
        detail={key: label for key, label in wanted.items()},
    )
    data_changed(study)  # the figures and tables name them: analysed again (debounced)
