from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from readerstudy.keys import current_versions
from readerstudy.models import StudyQuestion
from readerstudy.vocabulary import ConfidenceScale, confidence_scale


class ProgressSerializer(serializers.Serializer):
    answered = serializers.IntegerField()
    total = serializers.IntegerField()
    finished = serializers.BooleanField()
    locked = serializers.BooleanField()
    session = serializers.IntegerField(help_text="The reader's current session (2 once 1 is done).")
    sessions = serializers.IntegerField(help_text="2 in a two-arm (crossover) study, else 1.")
    arm = serializers.CharField(help_text="The current session's arm: unaided or aided.")
    opens_at = serializers.DateTimeField(
        allow_null=True, help_text="While the session waits for its washout: when it opens."
    )
    washout = serializers.CharField(
        allow_blank=True, help_text="The same in words, with the date; empty once open."
    )


class ConfidenceScaleSerializer(serializers.Serializer):
    """A study's confidence scale (readerstudy.vocabulary.CONFIDENCE_SCALES): every answer
    carries a whole number from `lowest` to `highest`."""

    scale = serializers.ChoiceField(choices=ConfidenceScale.values)
    lowest = serializers.IntegerField()
    highest = serializers.IntegerField()
    labels = serializers.DictField(
        child=serializers.CharField(),
        help_text="Point -> label (every point of 1-5; 0-100's ends).",
    )
    prompt = serializers.CharField()

    def to_representation(self, instance):
        """A scale given by its name (a study's `confidence_scale`) is described; "none": null."""
        if isinstance(instance, str):
            instance = confidence_of(instance)
            if instance is None:
                return None
        return super().to_representation(instance)


def confidence_of(scale_name: str) -> dict | None:
    """A study's scale as the API shows it; None when the study asks for no confidence."""
    scale = confidence_scale(scale_name)
    if scale is None:
        return None
    labels = {str(point): label for point, label in scale.labels.items()}
    return {
        "scale": scale_name,
        "lowest": scale.lowest,
        "highest": scale.highest,
        "labels": labels,
        "prompt": scale.prompt,
    }


class StudySerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    dataset = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    instructions = serializers.CharField(allow_blank=True)
    progress = ProgressSerializer(allow_null=True, help_text="Only for readers of the study.")
    confidence = ConfidenceScaleSerializer(
        allow_null=True,
        help_text="The scale each answer's `confidence` is rated on; null: the study asks for "
        "no confidence rating.",
    )


class CaseReportSerializer(serializers.Serializer):
    study_id = serializers.CharField()
    indication = serializers.CharField(allow_blank=True)
    findings = serializers.CharField(allow_blank=True)
    impression = serializers.CharField(allow_blank=True)
    patient_age = serializers.IntegerField(allow_null=True)
    patient_sex = serializers.CharField(allow_blank=True)


class CurrentVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(source="number")
    text = serializers.CharField()
    options = serializers.ListField(child=serializers.CharField())
    key = serializers.CharField(source="correct")
    accepted = serializers.ListField(child=serializers.CharField(), source="accepted_letters")
    explanation = serializers.CharField(allow_blank=True)


class ExpertQuestionSerializer(serializers.ModelSerializer):
    """A study question with its truth: only for the study's experts and PIs. `text`,
    `options`, `correct` and `explanation` are as imported (version 1); `current` is the
    question at its current version, the key as adjudicated."""

    item_id = serializers.IntegerField(source="id")
    question_id = serializers.CharField(source="question.source_id")
    text = serializers.CharField(source="question.text")
    options = serializers.ListField(source="question.options", child=serializers.CharField())
    correct = serializers.CharField(source="question.correct")
    explanation = serializers.CharField(source="question.explanation")
    task = serializers.CharField(source="question.get_task_display")
    category = serializers.CharField(source="question.category")
    case = CaseReportSerializer(source="question.case")
    current = serializers.SerializerMethodField()

    class Meta:
        model = StudyQuestion
        fields = [
            "item_id",
            "position",
            "question_id",
            "text",
            "options",
            "correct",
            "explanation",
            "task",
            "category",
            "case",
            "excluded",
            "excluded_reason",
            "current",
        ]

    @extend_schema_field(CurrentVersionSerializer)
    def get_current(self, item) -> dict:
        versions = self.context.get("current_versions") or current_versions([item.question_id])
        return CurrentVersionSerializer(versions[item.question_id]).data
