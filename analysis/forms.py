from __future__ import annotations

import functools

from django import forms

from analysis import policy
from analysis.rater_names import MAX_LABEL, Rater
from analysis.switches import Switch


class AnalysisSettingsForm(forms.Form):
    """The policy's switches the page and the API take (analysis.policy.SWITCHES with a
    `param`), made from the declaration as it is when the form is made: each field optional,
    its initial value the switch's default. `settings()` is the policy asked for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        default = policy.default()
        for switch in policy.asked():
            self.fields[switch.param] = switch_field(switch, getattr(default, switch.name))

    def settings(self):
        """The policy asked for; the default for whatever is not asked, or all of it when
        the form is invalid."""
        data = self.cleaned_data if self.is_valid() else {}
        asked = {
            switch.name: switch.normalise(data[switch.param])
            for switch in policy.asked()
            if data.get(switch.param) is not None
        }
        return policy.settings_class()(**asked)


def switch_field(switch: Switch, default) -> forms.Field:
    """The form field of one switch: its choices by the words of the form, or a number within
    its bounds (and on its step)."""
    common = {
        "required": False,
        "label": switch.label,
        "help_text": switch.help,
        "initial": switch.spell(default) if switch.choices else default,
    }
    if switch.choices:
        return forms.TypedChoiceField(
            choices=[(choice.spelt, choice.label) for choice in switch.choices],
            coerce=switch.parse,
            empty_value=None,
            **common,
        )
    # Validated by the switch itself (the words the CLI and the API's message use); the
    # bounds and the step go to the browser's number input too.
    number = forms.IntegerField if switch.type is int else forms.FloatField
    step = switch.step or (1 if switch.type is int else "any")
    bounds = {"min": switch.minimum, "max": switch.maximum, "step": step}
    return number(
        widget=forms.NumberInput(attrs={k: v for k, v in bounds.items() if v is not None}),
        validators=[functools.partial(_check, switch)],
        **common,
    )


def _check(switch: Switch, value) -> None:
    try:
        switch.check(value)
    except ValueError as error:
        raise forms.ValidationError(str(error)) from None


class PowerForm(forms.Form):
    """The power section's question: which effect (aided − unaided accuracy) with which power.
    The page, the API and `mrmc_power` take the same two values."""

    QUESTION = (
        Switch(
            "effect",
            float,
            0.05,
            label="Effect to detect (accuracy)",
            help="Power section: aided − unaided accuracy.",
            minimum=0.005,
            maximum=0.5,
            param="effect",
            flag="--effect",
        ),
        Switch(
            "power",
            float,
            0.8,
            label="Power",
            help="Power section: the power to detect it with.",
            minimum=0.5,
            maximum=0.99,
            param="power",
            flag="--power",
        ),
    )
    EFFECT, POWER = (switch.default for switch in QUESTION)

    effect = switch_field(QUESTION[0], EFFECT)
    power = switch_field(QUESTION[1], POWER)

    @classmethod
    def of(cls, query) -> PowerForm:
        """The form for a page's query: bound when the query asks for an effect or a power,
        else unbound, so that its fields show the defaults the table is computed for."""
        return cls(query if any(name in query for name in cls.base_fields) else None)

    def values(self) -> tuple[float, float]:
        """(effect, power); the defaults when the form is empty or invalid."""
        data = self.cleaned_data if self.is_valid() else {}
        return data.get("effect") or self.EFFECT, data.get("power") or self.POWER


class RaterNamesForm(forms.Form):
    """One text field per rater: the name figures and tables show (blank: the default)."""

    def __init__(self, *args, raters: list[Rater], **kwargs):
        super().__init__(*args, **kwargs)
        self.raters = raters
        for rater in raters:
            self.fields[self.field_name(rater)] = forms.CharField(
                required=False,
                max_length=MAX_LABEL,
                label=rater.source,
                widget=forms.TextInput(attrs={"placeholder": rater.name}),
            )

    @staticmethod
    def field_name(rater: Rater) -> str:
        return f"name-{rater.rater_id}"

    def rows(self):
        return [(rater, self[self.field_name(rater)]) for rater in self.raters]

    def labels(self) -> dict[str, str]:
        return {r.rater_id: self.cleaned_data.get(self.field_name(r), "") for r in self.raters}
