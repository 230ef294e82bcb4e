from __future__ import annotations

from django import forms
from django.conf import settings as django_settings

from analysis.key_version import KEY_POLICY_LABELS
from analysis.pipeline import AnalysisSettings
from analysis.rater_names import MAX_LABEL, Rater

NI_MARGIN_STEP = 0.005


class AnalysisSettingsForm(forms.Form):
    missing = forms.ChoiceField(
        choices=[("wrong", "count as wrong"), ("exclude", "exclude")],
        initial="wrong",
        required=False,
        label="Missing answers",
    )
    scale = forms.ChoiceField(
        choices=[("answer", "A–D answers"), ("correct", "correct / incorrect")],
        initial="answer",
        required=False,
        label="Kappa on",
    )
    excluded = forms.ChoiceField(
        choices=[("drop", "leave out"), ("keep", "include")],
        initial="drop",
        required=False,
        label="Excluded questions",
    )
    vrange = forms.ChoiceField(
        choices=[("-1,1", "−1 … 1"), ("0,1", "0 … 1")],
        initial="-1,1",
        required=False,
        label="Kappa colour scale",
    )
    ci = forms.ChoiceField(
        choices=[("wilson", "Wilson"), ("clopper-pearson", "Clopper–Pearson")],
        initial="wilson",
        required=False,
        label="Confidence intervals",
    )
    rejected = forms.ChoiceField(
        choices=[("drop", "leave out"), ("keep", "include")],
        initial="drop",
        required=False,
        label="Expert-rejected questions",
    )
    holm = forms.ChoiceField(
        choices=[("ai_vs_reader", "AI vs reader pairs"), ("all_pairs", "all pairs")],
        initial="ai_vs_reader",
        required=False,
        label="Holm family",
    )
    fast = forms.ChoiceField(
        choices=[("keep", "flag, keep"), ("drop", "leave out")],
        initial="keep",
        required=False,
        label="Too-fast answers",
        help_text="Answers given in less time on screen than the reading policy's minimum "
        "(FAST_ANSWER_MS).",
    )
    # The page's, the API's (`key`) and the export's (--key) switch, and their default.
    key = forms.ChoiceField(
        choices=list(KEY_POLICY_LABELS.items()),
        initial=AnalysisSettings.key_policy,
        required=False,
        label="Keys",
        help_text="Adjudicated: each accepted correction applied (until one is accepted, "
        "the imported keys); original: the keys as imported.",
    )
    # A multiple of half a percentage point: each value is a policy (a full analysis in the
    # background), so a margin is a declared step, not any float (issue 38).
    ni_margin = forms.FloatField(
        min_value=NI_MARGIN_STEP,
        max_value=0.5,
        step_size=NI_MARGIN_STEP,
        initial=AnalysisSettings.ni_margin,
        required=False,
        label="Non-inferiority margin (accuracy)",
        help_text="Aided vs unaided: e.g. 0.05 = 5 percentage points; in steps of 0.005.",
    )

    def settings(self) -> AnalysisSettings:
        data = self.cleaned_data if self.is_valid() else {}
        return AnalysisSettings(
            missing=data.get("missing") or "wrong",
            scale=data.get("scale") or "answer",
            include_excluded=data.get("excluded") == "keep",
            vrange=data.get("vrange") or "-1,1",
            ci_method=data.get("ci") or "wilson",
            exclude_rejected=data.get("rejected") != "keep",
            holm_family=data.get("holm") or "ai_vs_reader",
            time_cap_ms=django_settings.MAX_CASE_TIME_MS,
            fast_answer_ms=django_settings.FAST_ANSWER_MS,
            exclude_fast=data.get("fast") == "drop",
            key_policy=data.get("key") or AnalysisSettings.key_policy,
            # Rounded to the step: 0.015 and 0.015000000001 are one policy.
            ni_margin=round(data.get("ni_margin") or AnalysisSettings.ni_margin, 3),
        )


class PowerForm(forms.Form):
    """The power section's question: which effect (aided − unaided accuracy) with which power.
    The page, the API and `mrmc_power` take the same two values."""

    EFFECT = 0.05
    POWER = 0.8

    effect = forms.FloatField(
        min_value=0.005,
        max_value=0.5,
        initial=EFFECT,
        required=False,
        label="Effect to detect (accuracy)",
    )
    power = forms.FloatField(
        min_value=0.5, max_value=0.99, initial=POWER, required=False, label="Power"
    )

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
