"""Proposed corrections of questions and the experts' votes on them.

A proposal is made in one study (on its item) against the question's version it was shown
(`base`), and holds only what it changes (`changes`: field -> new value, the fields of
readerstudy.vocabulary.VERSION_FIELDS). The study's rule decides it (annotation.corrections);
an accepted one points at the version it made. A reversal is a proposal too: to undo what one
of the study's versions changed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from readerstudy.models import StudyQuestion
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import ErrorType, ProposalKind, ProposalStatus


class Correction(models.Model):
    item = models.ForeignKey(StudyQuestion, on_delete=models.CASCADE, related_name="corrections")
    base = models.ForeignKey(
        QuestionVersion,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The version the proposer was shown and corrects.",
    )
    kind = models.CharField(
        max_length=12, choices=ProposalKind.choices, default=ProposalKind.CORRECTION
    )
    reverses = models.ForeignKey(
        QuestionVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="reversal_proposals",
        help_text="A reversal: the version whose changes it undoes.",
    )
    proposer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="corrections"
    )
    error_type = models.CharField(max_length=20, choices=ErrorType.choices, blank=True)
    changes = models.JSONField(help_text="Field -> proposed value; only what changes.")
    note = models.TextField(blank=True)
    status = models.CharField(
        max_length=10, choices=ProposalStatus.choices, default=ProposalStatus.OPEN
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision_note = models.TextField(blank=True)
    version = models.OneToOneField(
        QuestionVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="correction",
        help_text="The version its acceptance made.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ProposalStatus.values), name="correction_status"
            ),
            models.CheckConstraint(
                condition=Q(error_type__in=[*ErrorType.values, ""]), name="correction_error_type"
            ),
            models.CheckConstraint(
                condition=(Q(kind=ProposalKind.CORRECTION) & Q(reverses__isnull=True))
                | (Q(kind=ProposalKind.REVERSAL) & Q(reverses__isnull=False)),
                name="correction_reversal_names_its_version",
            ),
            models.CheckConstraint(
                condition=Q(status=ProposalStatus.ACCEPTED, version__isnull=False)
                | (~Q(status=ProposalStatus.ACCEPTED) & Q(version__isnull=True)),
                name="correction_accepted_made_a_version",
            ),
            models.UniqueConstraint(
                fields=["item", "proposer"],
                condition=Q(status=ProposalStatus.OPEN),
                name="correction_one_open_per_proposer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.item} by {self.proposer} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status == ProposalStatus.OPEN


class CorrectionVote(models.Model):
    """An expert's agreement (or not) with a proposal; the proposer's own is their proposal."""

    correction = models.ForeignKey(Correction, on_delete=models.CASCADE, related_name="votes")
    voter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    agree = models.BooleanField()
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["correction", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["correction", "voter"], name="vote_one_per_voter"),
        ]

    def __str__(self) -> str:
        return f"{self.voter} {'agrees' if self.agree else 'disagrees'} on {self.correction_id}"
