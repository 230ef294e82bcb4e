"""What people record: reader answers with their revision history, and reader completion.

One answer per reader per study question is a database constraint; every change of an answer
is kept as a revision so that the study's audit trail survives "I changed my mind" edits.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from readerstudy.models import ReaderStudy, StudyQuestion
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import (
    CONFIDENCE_BOUNDS,
    LETTERS,
    RATING_FIELDS,
    RATING_RANGE,
    Alignment,
    Arm,
    Decision,
    Difficulty,
    ReviewFlag,
    WindowPreset,
)


class Answer(models.Model):
    item = models.ForeignKey(StudyQuestion, on_delete=models.CASCADE, related_name="answers")
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="answers"
    )
    choice = models.CharField(max_length=1)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, blank=True)
    alignment = models.CharField(max_length=10, choices=Alignment.choices, blank=True)
    # How sure the reader is of this answer, on their study's confidence scale
    # (ReaderStudy.confidence_scale); null when the study asks for none.
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    comment = models.TextField(blank=True)
    time_ms = models.PositiveIntegerField(default=0, help_text="Total visible time on the case.")
    revisions_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The design: which session (1, or 2 of a crossover) and arm this answer was given in.
    session = models.PositiveSmallIntegerField(default=1)
    arm = models.CharField(max_length=10, choices=Arm.choices, default=Arm.UNAIDED)
    # Second-read aid: the reader's unaided answer, fixed once the AI was shown (ai_shown_at);
    # `choice` stays empty until the final answer. Empty in every other arm.
    first_choice = models.CharField(max_length=1, blank=True)
    # ... and its confidence, on a study with a confidence scale (null otherwise).
    first_confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    ai_shown_at = models.DateTimeField(null=True, blank=True)
    # Given in a practice set (the key shown after it): never data of a research analysis
    # (analysis.selectors.study_responses takes only the answers of its study's kind).
    practice = models.BooleanField(default=False)
    # The version of the question whose words the reader was shown (readerstudy.keys scores
    # the answer from it); set by the answer service, never changed by a correction.
    question_version = models.ForeignKey(
        QuestionVersion, on_delete=models.PROTECT, related_name="answers"
    )

    class Meta:
        ordering = ["item__study", "reader", "session", "item__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "reader", "session"], name="answer_one_per_reader_session"
            ),
            models.CheckConstraint(
                condition=Q(choice__in=LETTERS) | Q(choice="", first_choice__in=LETTERS),
                name="answer_choice_letter",
            ),
            models.CheckConstraint(
                condition=Q(first_choice="")
                | Q(first_choice__in=LETTERS, arm=Arm.AIDED, ai_shown_at__isnull=False),
                name="answer_first_choice_second_read",
            ),
            models.CheckConstraint(condition=Q(session__in=[1, 2]), name="answer_session"),
            models.CheckConstraint(condition=Q(arm__in=Arm.values), name="answer_arm"),
            models.CheckConstraint(
                condition=Q(difficulty__in=[*Difficulty.values, ""]), name="answer_difficulty"
            ),
            models.CheckConstraint(
                condition=Q(alignment__in=[*Alignment.values, ""]), name="answer_alignment"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True)
                | Q(confidence__gte=CONFIDENCE_BOUNDS[0], confidence__lte=CONFIDENCE_BOUNDS[1]),
                name="answer_confidence",
            ),
            models.CheckConstraint(
                condition=Q(first_confidence__isnull=True)
                | Q(
                    first_confidence__gte=CONFIDENCE_BOUNDS[0],
                    first_confidence__lte=CONFIDENCE_BOUNDS[1],
                    first_choice__in=LETTERS,
                ),
                name="answer_first_confidence",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reader} {self.item}: {self.choice}"


class AnswerRevision(models.Model):
    """One change of an answer: who, when, old and new values, time spent on the change."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="revisions")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    old = models.JSONField()
    new = models.JSONField()
    time_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["answer", "created_at"]

    def __str__(self) -> str:
        return f"revision of {self.answer_id} at {self.created_at:%Y-%m-%d %H:%M}"


class ReaderCompletion(models.Model):
    """A reader's final submit of a study; locks their answers when the study says so."""

    study = models.ForeignKey(ReaderStudy, on_delete=models.CASCADE, related_name="completions")
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="completions"
    )
    finished_at = models.DateTimeField(auto_now_add=True)
    locked = models.BooleanField(default=True)
    session = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "reader", "session"], name="completion_unique_session"
            ),
            models.CheckConstraint(condition=Q(session__in=[1, 2]), name="completion_session"),
        ]

    def __str__(self) -> str:
        return f"{self.reader} finished {self.study.slug}"


def _rating(label: str) -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(
        label, null=True, blank=True, help_text="1 (poor) to 5 (excellent); empty: not rated"
    )


class ExpertReview(models.Model):
    """One expert's structured review of one study question (one per expert, updatable)."""

    item = models.ForeignKey(StudyQuestion, on_delete=models.CASCADE, related_name="reviews")
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews"
    )
    flag_multiple_valid = models.BooleanField(default=False)
    flag_comparison = models.BooleanField(default=False)
    flag_clinically_invalid = models.BooleanField(default=False)
    flag_hallucinated = models.BooleanField(default=False)
    flag_image_mismatch = models.BooleanField(default=False)
    flag_other = models.BooleanField(default=False)
    other_text = models.CharField(max_length=500, blank=True)
    clinical_quality = _rating("clinical quality")
    explanation_clarity = _rating("explanation clarity")
    factual_correctness = _rating("factual correctness")
    image_alignment = _rating("image alignment")
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices)
    decision = models.CharField(max_length=10, choices=Decision.choices)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item", "expert"]
        constraints = [
            models.UniqueConstraint(fields=["item", "expert"], name="review_one_per_expert"),
            models.CheckConstraint(
                condition=Q(decision__in=Decision.values), name="review_decision"
            ),
            models.CheckConstraint(
                condition=Q(difficulty__in=Difficulty.values), name="review_difficulty"
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{name}__isnull": True})
                    | Q(
                        **{
                            f"{name}__gte": RATING_RANGE.start,
                            f"{name}__lte": RATING_RANGE.stop - 1,
                        }
                    ),
                    name=f"review_{name}_1_5",
                )
                for name in RATING_FIELDS
            ],
            models.CheckConstraint(
                condition=Q(flag_other=False) | ~Q(other_text=""), name="review_other_has_text"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.expert} on {self.item}: {self.decision}"

    @property
    def flags(self) -> list[str]:
        return [flag for flag in ReviewFlag.values if getattr(self, f"flag_{flag}")]

    @property
    def flag_labels(self) -> list[str]:
        """The flags as people read them ("Image does not match the question")."""
        return [label for value, label in ReviewFlag.choices if getattr(self, f"flag_{value}")]


class ReadingPreference(models.Model):
    """The window preset a reader last chose for images of one modality in a study: every
    case of the study, in every session and arm and on any computer, opens at it (the viewer's
    sticky preset). Kept on the server because sign-out empties the browser's storage, and the
    sessions of a crossover are weeks apart."""

    study = models.ForeignKey(
        ReaderStudy, on_delete=models.CASCADE, related_name="reading_preferences"
    )
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_preferences"
    )
    modality = models.CharField(max_length=16)  # the image's DICOM modality, "image" if none
    preset = models.CharField(max_length=8, choices=WindowPreset.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "reader", "modality"], name="reading_preference_one_per_modality"
            ),
            models.CheckConstraint(
                condition=Q(preset__in=WindowPreset.values), name="reading_preference_preset"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reader} in {self.study}: {self.modality} at {self.preset}"


# Corrections and votes live in their own module; imported here so Django finds the models.
from annotation.correction_models import Correction, CorrectionVote  # noqa: E402, F401
