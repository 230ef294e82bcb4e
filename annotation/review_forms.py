from django import forms

from readerstudy.vocabulary import RATING_FIELDS, RATING_RANGE, Decision, Difficulty, ReviewFlag

RATING_CHOICES = [(str(i), str(i)) for i in RATING_RANGE]


class ReviewForm(forms.Form):
    flags = forms.MultipleChoiceField(
        choices=ReviewFlag.choices, required=False, widget=forms.CheckboxSelectMultiple
    )
    other_text = forms.CharField(required=False, max_length=500, label="Other problem")
    clinical_quality = forms.ChoiceField(choices=RATING_CHOICES, widget=forms.RadioSelect)
    explanation_clarity = forms.ChoiceField(choices=RATING_CHOICES, widget=forms.RadioSelect)
    factual_correctness = forms.ChoiceField(choices=RATING_CHOICES, widget=forms.RadioSelect)
    image_alignment = forms.ChoiceField(choices=RATING_CHOICES, widget=forms.RadioSelect)
    difficulty = forms.ChoiceField(choices=Difficulty.choices, widget=forms.RadioSelect)
    decision = forms.ChoiceField(choices=Decision.choices, widget=forms.RadioSelect)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean(self):
        data = super().clean()
        if ReviewFlag.OTHER in data.get("flags", []) and not data.get("other_text", "").strip():
            self.add_error("other_text", "Describe the 'other' problem.")
        return data

    def ratings(self) -> dict[str, int]:
        return {name: int(self.cleaned_data[name]) for name in RATING_FIELDS}

    @classmethod
    def initial_from(cls, review) -> dict:
        if review is None:
            return {}
        return {
            "flags": review.flags,
            "other_text": review.other_text,
            **{name: str(getattr(review, name)) for name in RATING_FIELDS},
            "difficulty": review.difficulty,
            "decision": review.decision,
            "comment": review.comment,
        }
