from django import forms

from analysis.pipeline import AnalysisSettings


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

    def settings(self) -> AnalysisSettings:
        data = self.cleaned_data if self.is_valid() else {}
        return AnalysisSettings(
            missing=data.get("missing") or "wrong",
            scale=data.get("scale") or "answer",
            include_excluded=data.get("excluded") == "keep",
            vrange=data.get("vrange") or "-1,1",
            ci_method=data.get("ci") or "wilson",
        )
