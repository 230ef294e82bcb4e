"""The review form's correction (with "Revise"), the proposal page's vote and decision, and
the study's rule. Keys come from readerstudy.vocabulary (CORRECTION_SHORTCUTS), rendered into
`data-keys` as the review form's are; static/js/expert.js reads them from the markup."""

from __future__ import annotations

from django import forms

from annotation.forms import ShortcutRadioSelect
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import (
    CORRECTION_SHORTCUTS,
    LETTERS,
    VERSION_FIELD_LABELS,
    WORDING_FIELDS,
    AdjudicationRule,
    ErrorType,
    Letter,
)

WORDS_MAX = 10_000


class ShortcutCheckboxes(ShortcutRadioSelect, forms.CheckboxSelectMultiple):
    pass


def _words(name: str, rows: int = 0) -> forms.CharField:
    widget = forms.Textarea(attrs={"rows": rows}) if rows else forms.TextInput()
    return forms.CharField(
        label=VERSION_FIELD_LABELS[name], required=False, max_length=WORDS_MAX, widget=widget
    )


class CorrectionForm(forms.Form):
    """A proposed correction, filled with the question as it is now (`base`): what the expert
    changes is what they propose. Prefixed `fix` inside the review form."""

    base = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    error_type = forms.ChoiceField(
        label="What is wrong",
        choices=ErrorType.choices,
        required=False,
        widget=ShortcutRadioSelect(CORRECTION_SHORTCUTS["error_type"]),
    )
    correct = forms.ChoiceField(
        label="Key",
        choices=Letter.choices,
        widget=ShortcutRadioSelect(CORRECTION_SHORTCUTS["key"]),
    )
    accepted = forms.MultipleChoiceField(
        label="Also correct",
        choices=Letter.choices,
        required=False,
        widget=ShortcutCheckboxes(CORRECTION_SHORTCUTS["accepted"]),
    )
    text = _words("text", rows=2)
    option_a = _words("option_a")
    option_b = _words("option_b")
    option_c = _words("option_c")
    option_d = _words("option_d")
    explanation = _words("explanation", rows=2)
    note = forms.CharField(
        label="Why (optional)", required=False, max_length=WORDS_MAX, widget=forms.TextInput()
    )

    def __init__(self, *args, current: QuestionVersion, **kwargs):
        kwargs.setdefault("prefix", "fix")
        kwargs.setdefault("initial", initial_from(current))
        super().__init__(*args, **kwargs)
        self.current = current

    def option_fields(self):
        return [self[name] for name in WORDING_FIELDS[1:]]

    def values(self) -> dict:
        """The proposed content (every field; the service keeps what changed)."""
        data = self.cleaned_data
        values = {name: data[name] for name in WORDING_FIELDS if data.get(name, "").strip()}
        values["correct"] = data["correct"]
        values["accepted"] = [data["correct"], *data.get("accepted", [])]
        values["explanation"] = data.get("explanation", "")
        return values

    def proposes(self) -> bool:
        """Did the expert change anything, or name what is wrong? (Else "Revise" is a review
        without a correction, as before corrections existed.)"""
        if not self.is_bound or self.add_prefix("base") not in self.data:
            return False  # a form sent without the correction (a page from before it)
        if not self.is_valid():
            return True  # let the form say what is wrong
        data = self.cleaned_data
        accepted = "".join(
            letter for letter in LETTERS if letter in {data["correct"], *data["accepted"]}
        )
        changed = (
            any(data[name].strip() != getattr(self.current, name) for name in WORDING_FIELDS)
            or data["correct"] != self.current.correct
            or accepted != self.current.accepted
            or data["explanation"].strip() != self.current.explanation
        )
        return changed or bool(data["error_type"])


def initial_from(current: QuestionVersion) -> dict:
    return {
        "base": current.number,
        "correct": current.correct,
        "accepted": [letter for letter in current.accepted if letter != current.correct],
        **{name: getattr(current, name) for name in WORDING_FIELDS},
        "explanation": current.explanation,
    }


class DecisionForm(forms.Form):
    """A vote (experts) or a decision (a PI under the PI's rule) on one proposal."""

    choice = forms.ChoiceField(choices=[("yes", "Yes"), ("no", "No")])
    note = forms.CharField(required=False, max_length=WORDS_MAX)


class RuleForm(forms.Form):
    rule = forms.ChoiceField(
        label="Who decides", choices=AdjudicationRule.choices, widget=forms.RadioSelect
    )
    votes = forms.IntegerField(
        label="N (agreeing experts)", min_value=1, max_value=99, required=False
    )
