"""Versions of a bank question: nothing is overwritten, every answer keeps the version its
reader was shown (annotation.models.Answer.question_version).

Version 1 is the question as imported (the `Question` row, which never changes); each accepted
correction adds the next version, whole. A version belongs to the question (one history per
question, whichever studies hold it); the decision that made it is recorded with the study
whose rule decided (`study`, `decided_by`, `rule`). `wording` is the number of the first
version with the same words shown to readers (stem and options): a version that changes only
the key or the accepted answers keeps its predecessor's wording, so answers given to those
words are scored against it; one that changes the words starts a new wording
(readerstudy.keys).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from readerstudy.vocabulary import (
    ACCEPTED_SETS,
    LETTERS,
    VERSION_FIELDS,
    WORDING_FIELDS,
    ErrorType,
    VersionChange,
)


class QuestionVersion(models.Model):
    question = models.ForeignKey(
        "readerstudy.Question", on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField(help_text="1: as imported; each accepted correction +1.")
    text = models.TextField()
    option_a = models.TextField()
    option_b = models.TextField()
    option_c = models.TextField()
    option_d = models.TextField()
    correct = models.CharField("key", max_length=1)
    accepted = models.CharField(
        max_length=4, help_text="Every option counted correct, the key among them ('BC')."
    )
    explanation = models.TextField(blank=True)
    wording = models.PositiveIntegerField(
        help_text="The number of the first version showing readers these words."
    )
    change = models.CharField(max_length=12, choices=VersionChange.choices)
    error_type = models.CharField(max_length=20, choices=ErrorType.choices, blank=True)
    study = models.ForeignKey(
        "readerstudy.ReaderStudy",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="question_versions",
        help_text="The study whose rule decided this version (none for an imported one).",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rule = models.CharField(
        max_length=200, blank=True, help_text="How it was decided, in words ('a PI's decision')."
    )
    note = models.TextField(blank=True, help_text="Why: the proposal's reason.")
    reverses = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversals"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["question", "number"]
        constraints = [
            models.UniqueConstraint(fields=["question", "number"], name="version_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="version_number_from_1"),
            models.CheckConstraint(
                condition=Q(correct__in=LETTERS), name="version_key_is_a_letter"
            ),
            models.CheckConstraint(
                condition=Q(accepted__in=ACCEPTED_SETS) & Q(accepted__contains=F("correct")),
                name="version_accepted_holds_the_key",
            ),
            models.CheckConstraint(
                condition=~Q(text="")
                & ~Q(option_a="")
                & ~Q(option_b="")
                & ~Q(option_c="")
                & ~Q(option_d=""),
                name="version_words_not_empty",
            ),
            models.CheckConstraint(
                condition=Q(wording__gte=1, wording__lte=F("number")),
                name="version_wording_not_later",
            ),
            models.CheckConstraint(
                condition=(Q(number=1) & Q(change=VersionChange.ORIGINAL) & Q(error_type=""))
                | (Q(number__gt=1) & ~Q(change=VersionChange.ORIGINAL)),
                name="version_1_is_the_original",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.question.source_id} v{self.number}"

    @property
    def options(self) -> list[str]:
        return [self.option_a, self.option_b, self.option_c, self.option_d]

    @property
    def labelled_options(self) -> list[tuple[str, str]]:
        return list(zip(LETTERS, self.options, strict=True))

    @property
    def accepted_letters(self) -> list[str]:
        return list(self.accepted)

    @property
    def accepted_set(self) -> frozenset[str]:
        return frozenset(self.accepted)

    def content(self) -> dict[str, str]:
        """The fields a correction may change (readerstudy.vocabulary.VERSION_FIELDS)."""
        return {name: getattr(self, name) for name in VERSION_FIELDS}

    @property
    def words_stamp(self) -> str:
        """A short digest of the words readers see: the reading page sends it back with an
        answer, so the answer is recorded against the version whose words were on screen.
        It changes only when the words do, so it tells a reader nothing they cannot see."""
        return words_stamp(*(getattr(self, name) for name in WORDING_FIELDS))


def words_stamp(*words: str) -> str:
    return hashlib.sha256("\x1f".join(words).encode()).hexdigest()[:16]
