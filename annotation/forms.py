from django import forms

from readerstudy.platform import json_input
from readerstudy.vocabulary import (
    ANSWER_FIELD_NAMES,
    ANSWER_FIELDS,
    PAGE_SHORTCUTS,
    SHORTCUTS,
    ConfidenceScale,
    Scale,
    answer_shortcuts,
    confidence_scale,
)


class ShortcutRadioSelect(forms.RadioSelect):
    """Radios that carry their keyboard shortcuts (`data-keys`), so the page's script reads
    the keys from the markup instead of keeping its own copy of the vocabulary."""

    def __init__(self, shortcuts: dict[str, tuple[str, ...]], attrs=None):
        super().__init__(attrs)
        self.shortcuts = shortcuts

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        keys = self.shortcuts.get(str(value), ())
        if keys:
            option["attrs"]["data-keys"] = " ".join(keys)
        option["shortcut"] = keys[0] if keys else ""
        return option


def _answer_fields() -> dict[str, forms.Field]:
    """One form field per answer field of the vocabulary, in its order: radios (with their
    shortcut keys) for a field with choices, a text box for free text."""
    out: dict[str, forms.Field] = {}
    for field in ANSWER_FIELDS:
        if field.scaled:  # the study's scale is the service's to check (AnswerForm.for_case)
            out[field.name] = forms.CharField(
                required=False,
                max_length=16,
                strip=True,
                label=field.label,
                widget=forms.NumberInput(attrs={"step": 1}),
            )
        elif field.choices is None:
            out[field.name] = forms.CharField(
                required=field.required,
                max_length=field.max_length,
                strip=True,
                label=field.label,
                widget=forms.Textarea(
                    attrs={"rows": 3, "data-keys": PAGE_SHORTCUTS.get(field.name, "")}
                ),
            )
        else:
            out[field.name] = forms.ChoiceField(
                choices=field.choices.choices,
                required=field.required,
                label=field.label,
                widget=ShortcutRadioSelect(SHORTCUTS.get(field.name, {})),
                error_messages={"required": field.error},
            )
    return out


class AnswerForm(type("AnswerFields", (forms.Form,), _answer_fields())):
    """A reader's answer to one case: the vocabulary's answer fields, then the page's own."""

    time_ms = forms.IntegerField(required=False, min_value=0, initial=0, widget=forms.HiddenInput)
    # What the page showed as saved when the reader changed it (JSON of the fields above),
    # sent by the reading page's script: a case answered elsewhere since is not overwritten.
    base = forms.CharField(required=False, max_length=20_000, widget=forms.HiddenInput)

    def __init__(
        self,
        *args,
        screen: dict[str, str] | None = None,
        scale: str = ConfidenceScale.NONE,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        # Screen letter -> canonical letter (shuffled options); the page speaks screen letters.
        self.screen = screen or {}
        self.scale: Scale | None = confidence_scale(scale)
        self._confidence_field(scale)

    def _confidence_field(self, scale_name: str) -> None:
        """The confidence field as the study's scale asks it: none without a scale; a radio
        per point with its key on an ordinal scale (the options then keep only their letter
        keys: vocabulary.answer_shortcuts); a number box (`s` moves into it) on a fine one.
        Whether a value is allowed is the answer service's to say (Scale.refusal)."""
        scale = self.scale
        if scale is None:
            del self.fields["confidence"]
            return
        keys = answer_shortcuts(scale_name)
        self.fields["choice"].widget.shortcuts = keys["choice"]
        if scale.ordinal:
            self.fields["confidence"] = forms.ChoiceField(
                choices=[(str(p), f"{p} {scale.labels[p]}") for p in scale.points],
                required=False,
                label=scale.prompt,
                widget=ShortcutRadioSelect(keys["confidence"]),
                error_messages={"invalid_choice": scale.refusal()},
            )
            return
        field = self.fields["confidence"]
        field.label = scale.prompt
        field.widget.attrs.update(
            min=scale.lowest,
            max=scale.highest,
            inputmode="numeric",
            **{"data-keys": PAGE_SHORTCUTS["confidence"]},
        )

    def clean_confidence(self) -> str:
        return str(self.cleaned_data.get("confidence") or "")

    def clean_choice(self) -> str:
        choice = self.cleaned_data["choice"]
        return self.screen.get(choice, choice)

    def clean_base(self) -> dict | None:
        raw = self.cleaned_data.get("base") or ""
        if not raw:
            return None
        try:
            value = json_input.loads(raw, max_depth=1)
        except json_input.JsonInputError:
            value = None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise forms.ValidationError("The page sent a malformed answer; reload it.")
        if value.get("choice") in self.screen:
            value["choice"] = self.screen[value["choice"]]
        return value

    def rating_fields(self) -> list[forms.BoundField]:
        """The radio groups under the options (an ordinal confidence, difficulty, fit, ...),
        in order."""
        return [
            self[name]
            for name, field in self.fields.items()
            if name != "choice" and isinstance(field.widget, ShortcutRadioSelect)
        ]

    def saved_ratings(self) -> list[tuple[str, str]]:
        """The saved answer's ratings in words, each named by its field's noun (a locked
        case's summary: "Confidence: 2 Unsure", "Fits the image: No", "Confidence: 73 %")."""
        nouns = {field.name: field.noun for field in ANSWER_FIELDS}
        said = [
            (nouns[field.name], radio.choice_label)
            for field in self.rating_fields()
            for radio in field
            if radio.data["selected"]
        ]
        fine = self.initial.get("confidence") if self.fine_scale() is not None else None
        if fine not in (None, ""):
            said.insert(0, (nouns["confidence"], f"{fine} %"))
        return said

    def fine_scale(self) -> forms.BoundField | None:
        """The confidence box of a fine scale (0-100), shown with its slider; else None."""
        if self.scale is None or self.scale.ordinal:
            return None
        return self["confidence"]

    @classmethod
    def for_case(cls, case, data=None) -> "AnswerForm":
        """The form for one reader case: its options as labels, the saved answer as initial."""
        initial = (
            {name: getattr(case.answer, name) for name in ANSWER_FIELD_NAMES} if case.answer else {}
        )
        if initial.get("confidence") is not None:
            initial["confidence"] = str(initial["confidence"])
        form = cls(data, initial=initial, scale=case.confidence_scale)
        form.fields["choice"].choices = [
            (letter, f"{letter}. {text}") for letter, text in case.options
        ]
        if not case.editable:
            for field in form.fields.values():
                field.disabled = True
        return form


class FinishForm(forms.Form):
    confirm = forms.BooleanField(
        required=True, error_messages={"required": "Tick the box to confirm."}
    )
