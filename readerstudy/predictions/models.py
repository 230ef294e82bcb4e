"""AI models and their predictions on a dataset's questions."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from readerstudy.models import Dataset, Question
from readerstudy.vocabulary import LETTERS


class AIModel(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="ai_models")
    name = models.CharField(max_length=200)
    imported_at = models.DateTimeField(auto_now=True)
    source_file = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["dataset", "name"]
        verbose_name = "AI model"
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="aimodel_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Prediction(models.Model):
    """One model's answer to one question: the letter we extracted, or a failed extraction."""

    model = models.ForeignKey(AIModel, on_delete=models.CASCADE, related_name="predictions")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="predictions")
    letter = models.CharField(max_length=1, blank=True, help_text="Empty: failed extraction.")
    raw_response = models.TextField(blank=True)
    rule = models.CharField(max_length=40, blank=True, help_text="Extraction rule that matched.")
    # The model's probability that its answer is right, and its probability per option, when
    # the predictions file gives them (readerstudy.prediction_probabilities).
    probability = models.FloatField(null=True, blank=True)
    option_probabilities = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["model", "question"]
        constraints = [
            models.UniqueConstraint(fields=["model", "question"], name="prediction_unique"),
            models.CheckConstraint(
                condition=Q(letter__in=[*LETTERS, ""]), name="prediction_letter"
            ),
            models.CheckConstraint(
                condition=Q(probability__isnull=True)
                | Q(probability__gte=0.0, probability__lte=1.0),
                name="prediction_probability",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model}: {self.question} -> {self.letter or 'failed'}"

    @property
    def failed(self) -> bool:
        return not self.letter
