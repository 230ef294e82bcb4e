"""The expert's review form. Every control carries its keyboard shortcut (`data-keys`) and,
where one applies, the default that "accept defaults" fills in: the page's script reads both
from the markup, so the vocabulary is stated once (readerstudy.vocabulary)."""

import json

from django import forms

from annotation.forms import ShortcutRadioSelect
from readerstudy.vocabulary import (
    FLAG_RATING_DEFAULTS,
    RATING_FIELDS,
    RATING_RANGE,
    REVIEW_SHORTCUTS,
    Decision,
    Difficulty,
    ReviewFlag,
)

# An explicit "not rated" is a choice of its own: with "" it would match an unbound field's
# empty value and be shown already checked, so digits and `d` would see every rating as set.
NOT_RATED = "none"
RATING_CHOICES = [(str(i), str(i)) for i in RATING_RANGE] + [(NOT_RATED, "not rated")]


class ShortcutCheckboxes(ShortcutRadioSelect, forms.CheckboxSelectMultiple):
    """Checkboxes with `data-keys`, and the ratings a checked flag lowers by default."""

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        lowered = FLAG_RATING_DEFAULTS.get(str(value))
        if lowered:
            option["attrs"]["data-rating-defaults"] = json.dumps(lowered)
        return option


def _rating(label: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        choices=RATING_CHOICES,
        required=False,
        widget=ShortcutRadioSelect(REVIEW_SHORTCUTS["rating"]),
    )


class ReviewForm(forms.Form):
    flags = forms.MultipleChoiceField(
        choices=ReviewFlag.choices,
        required=False,
        widget=ShortcutCheckboxes(REVIEW_SHORTCUTS["flags"]),
    )
    other_text = forms.CharField(required=False, max_length=500, label="Other problem")
    decision = forms.ChoiceField(
        choices=Decision.choices, widget=ShortcutRadioSelect(REVIEW_SHORTCUTS["decision"])
    )
    clinical_quality = _rating("Clinical quality")
    explanation_clarity = _rating("Explanation clarity")
    factual_correctness = _rating("Factual correctness")
    image_alignment = _rating("Image alignment")
    difficulty = forms.ChoiceField(
        choices=Difficulty.choices, widget=ShortcutRadioSelect(REVIEW_SHORTCUTS["difficulty"])
    )
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        if ReviewFlag.OTHER in data.get("flags", []) and not data.get("other_text", "").strip():
            self.add_error("other_text", "Describe the 'other' problem.")
        return data

    def ratings(self) -> dict[str, int | None]:
        values = {name: self.cleaned_data.get(name, NOT_RATED) for name in RATING_FIELDS}
        return {name: None if v in (NOT_RATED, "") else int(v) for name, v in values.items()}

    def rating_fields(self):
        return [self[name] for name in RATING_FIELDS]

    @classmethod
    def initial_from(cls, review) -> dict:
        if review is None:
            return {}
        return {
            "flags": review.flags,
            "other_text": review.other_text,
            **{
                name: NOT_RATED if getattr(review, name) is None else str(getattr(review, name))
                for name in RATING_FIELDS
            },
            "difficulty": review.difficulty,
            "decision": review.decision,
            "comment": review.comment,
        }
