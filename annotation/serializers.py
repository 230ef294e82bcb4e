"""API representations of what readers and experts see and record.

The reader case serializer is built from the same blinded view-model as the reader pages
(annotation.selectors.ReaderCase): there is no field for the truth to leak from.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from readerstudy.serializers import ConfidenceScaleSerializer
from readerstudy.vocabulary import (
    ANSWER_FIELDS,
    RATING_FIELDS,
    RATING_RANGE,
    Decision,
    Difficulty,
    ReviewFlag,
)


class ReaderImageSerializer(serializers.Serializer):
    url = serializers.CharField()
    label = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()


CONFIDENCE_HELP = (
    "How sure the reader is of the answer, a whole number on the study's `confidence_scale` "
    "(1-5 or 0-100): required when the study has a scale, refused (400) when it has none or "
    "off the scale."
)


@extend_schema_field(OpenApiTypes.INT)
class ConfidenceInput(serializers.Field):
    """A confidence as sent, judged by the answer service against the study's scale alone
    (Scale.refusal): a fraction, a boolean, text or a list gets that rule's words in the
    field's documented shape, as an off-scale number does, not a parser's message of its own.
    A whole float (3.0) is the whole number."""

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, default=None, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, float) and data.is_integer():
            return int(data)
        if isinstance(data, int | str) and not isinstance(data, bool):
            return data
        return str(data)  # not a whole number: refused by the service in the scale's words

    def to_representation(self, value):
        return value


def answer_output_fields() -> dict[str, serializers.Field]:
    """The answer's fields as the API shows them (readerstudy.vocabulary.ANSWER_FIELDS)."""
    return {
        f.name: serializers.IntegerField(allow_null=True, help_text=CONFIDENCE_HELP)
        if f.scaled
        else serializers.CharField(allow_blank=not f.required)
        for f in ANSWER_FIELDS
    }


def answer_input_fields() -> dict[str, serializers.Field]:
    """The answer's fields as the API takes them: a choice field checks its values (blank
    allowed unless required), free text its length."""
    out: dict[str, serializers.Field] = {}
    for f in ANSWER_FIELDS:
        if f.scaled:  # checked against the study's scale by the answer service
            out[f.name] = ConfidenceInput(help_text=CONFIDENCE_HELP)
        elif f.choices is None:
            out[f.name] = serializers.CharField(
                required=f.required, allow_blank=True, max_length=f.max_length, default=""
            )
        elif f.required:
            out[f.name] = serializers.ChoiceField(choices=f.choices.values)
        else:
            out[f.name] = serializers.ChoiceField(
                choices=[*f.choices.values, ""], required=False, default=""
            )
    return out


class ReaderAnswerSerializer(serializers.Serializer):
    def get_fields(self):
        return {**answer_output_fields(), **super().get_fields()}


class ReaderAidSerializer(serializers.Serializer):
    model_name = serializers.CharField()
    usable = serializers.BooleanField()
    letter = serializers.CharField(allow_blank=True, help_text="On this reader's screen.")
    option_text = serializers.CharField(allow_blank=True)
    rationale = serializers.CharField(allow_blank=True)
    message = serializers.CharField(
        allow_blank=True,
        help_text="What to show instead of an answer when the AI gave no usable answer; "
        "empty when `usable` is true.",
    )


class FeedbackSerializer(serializers.Serializer):
    right = serializers.BooleanField()
    choice = serializers.CharField(help_text="Your answer, on your screen's letters.")
    key = serializers.CharField(help_text="The key, on your screen's letters.")
    key_text = serializers.CharField()
    explanation = serializers.CharField(allow_blank=True)
    key_version = serializers.CharField()


class ReaderCaseSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    total = serializers.IntegerField()
    question = serializers.CharField()
    options = serializers.SerializerMethodField()
    images = ReaderImageSerializer(many=True)
    indication = serializers.CharField(allow_null=True)
    age = serializers.IntegerField(allow_null=True)
    sex = serializers.CharField(allow_null=True)
    answer = ReaderAnswerSerializer(allow_null=True)
    editable = serializers.BooleanField()
    layout = serializers.CharField(
        help_text="The design this case was shown under (its number and letters): send it "
        "back with the answer; one made under an earlier design is refused (409).",
    )
    words = serializers.CharField(
        help_text="A stamp of the question's words as shown: send it back with the answer, "
        "which is recorded against the version of the question with these words.",
    )
    # Only in a designed study (arms, sessions): absent from single-arm studies' cases, so
    # not required in the schema.
    session = serializers.IntegerField(required=False)
    arm = serializers.CharField(required=False)
    aid = ReaderAidSerializer(allow_null=True, required=False)
    first_choice = serializers.CharField(
        allow_blank=True,
        required=False,
        help_text="Second read: your answer before the AI was shown.",
    )
    first_confidence = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="Second read on a rated study: your confidence with that first answer.",
    )

    # Only in a practice set: right or wrong, the key and the explanation, once answered.
    feedback = FeedbackSerializer(allow_null=True, required=False)
    # Only in a study that asks for confidence: the scale `answer.confidence` is rated on.
    confidence = ConfidenceScaleSerializer(
        source="confidence_scale", allow_null=True, required=False
    )

    DESIGN_FIELDS = ("session", "arm", "aid", "first_choice", "first_confidence")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not instance.designed:  # a study read in one unaided arm: the API as it always was
            for name in self.DESIGN_FIELDS:
                data.pop(name, None)
        if not instance.practice:  # a research study's case has no feedback field at all
            data.pop("feedback", None)
        if data.get("confidence") is None:  # a study without a scale: no rating of any kind
            data.pop("confidence", None)
            data.pop("first_confidence", None)
        return data

    def get_options(self, case) -> list[dict[str, str]]:
        return [{"letter": letter, "text": text} for letter, text in case.options]


class AnswerInputSerializer(serializers.Serializer):
    time_ms = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1, default=0)
    session = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2,
        default=None,
        allow_null=True,
        help_text="The session (arm) the case was shown in; an answer for another is refused.",
    )
    layout = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=64,
        help_text="The case's `layout` as it was shown: refused (409) if the PI changed the "
        "design since, as its number or letters may now stand for another case or option.",
    )
    words = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=64,
        help_text="The case's `words` as shown: the answer is recorded against that version "
        "of the question (empty: the current one).",
    )
    scale = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=16,
        help_text="The confidence scale the rating was given on (the case's `confidence.scale`; "
        "`none` when the study asked none): refused (409) if the PI changed the scale since, "
        "as the same number would mean something else (empty: not checked).",
    )

    def get_fields(self):
        return {**answer_input_fields(), **super().get_fields()}


class AnswerResultSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=["created", "revised", "unchanged"])
    # Designed studies only (absent for a study read in one unaided arm); a second read's
    # first submit leaves `choice` empty until the final answer.
    first_choice = serializers.CharField(allow_blank=True, required=False)
    first_confidence = serializers.IntegerField(allow_null=True, required=False)
    stage = serializers.CharField(allow_blank=True, required=False)
    session = serializers.IntegerField(required=False)
    arm = serializers.CharField(required=False)
    time_ms = serializers.IntegerField()
    revisions_count = serializers.IntegerField()

    def get_fields(self):
        fields = super().get_fields()
        head = {name: fields.pop(name) for name in ("number", "outcome")}
        return {**head, **answer_output_fields(), **fields}


class ReviewSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    item_id = serializers.IntegerField()
    question_id = serializers.CharField(source="item.question.source_id", read_only=True)
    expert = serializers.CharField(source="expert.username", read_only=True)
    flags = serializers.MultipleChoiceField(choices=ReviewFlag.values, required=False)
    other_text = serializers.CharField(required=False, allow_blank=True, max_length=500)
    difficulty = serializers.ChoiceField(choices=Difficulty.values)
    decision = serializers.ChoiceField(choices=Decision.values)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    updated_at = serializers.DateTimeField(read_only=True)

    def get_fields(self):
        fields = super().get_fields()
        for name in RATING_FIELDS:
            fields[name] = serializers.IntegerField(
                min_value=RATING_RANGE.start,
                max_value=RATING_RANGE.stop - 1,
                allow_null=True,
                required=False,
                help_text="1-5; null = not rated (allowed only with a flag or a reject).",
            )
        return fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["flags"] = sorted(instance.flags)
        return data

    def ratings(self) -> dict[str, int]:
        return {name: self.validated_data.get(name) for name in RATING_FIELDS}
