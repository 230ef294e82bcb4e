from django import forms

from annotation.models import Alignment, Difficulty
from readerstudy.models import LETTERS


class AnswerForm(forms.Form):
    choice = forms.ChoiceField(
        choices=[(letter, letter) for letter in LETTERS],
        error_messages={"required": "Choose one of the options A-D."},
    )
    difficulty = forms.ChoiceField(choices=[("", "—"), *Difficulty.choices], required=False)
    alignment = forms.ChoiceField(choices=[("", "—"), *Alignment.choices], required=False)
    comment = forms.CharField(required=False, max_length=10_000, strip=True)
    time_ms = forms.IntegerField(required=False, min_value=0)


class FinishForm(forms.Form):
    confirm = forms.BooleanField(
        required=True, error_messages={"required": "Tick the box to confirm."}
    )
