from django import forms
from django.contrib.auth import get_user_model

from readerstudy.models import Dataset, ReaderStudy, Role
from readerstudy.sampling import SEED_MAX


class ExclusionForm(forms.Form):
    action = forms.ChoiceField(choices=[("exclude", "Exclude"), ("include", "Include again")])
    reason = forms.CharField(max_length=1000, error_messages={"required": "Give a reason."})


class MembershipRemoveForm(forms.Form):
    remove = forms.IntegerField(min_value=1, error_messages={"invalid": "Not a membership id."})


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        try:
            return get_user_model().objects.get(username=name)
        except get_user_model().DoesNotExist as exc:
            raise forms.ValidationError(f"No user named {name!r}.") from exc


class StudyCreateForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    slug = forms.SlugField(max_length=100, help_text="Short name used in URLs, e.g. pilot-2026.")
    title = forms.CharField(max_length=300)
    sample = forms.IntegerField(min_value=1, label="Number of questions")
    seed = forms.IntegerField(initial=0, min_value=0, max_value=SEED_MAX)
    stratify = forms.ChoiceField(
        choices=[("task", "by task"), ("category", "by category"), ("none", "none")],
        initial="task",
    )
    one_per_case = forms.BooleanField(required=False, label="At most one question per X-ray")
    random_order = forms.BooleanField(required=False, initial=True)
    allow_revision = forms.BooleanField(required=False, initial=True)
    show_indication = forms.BooleanField(required=False, initial=True)
    lock_on_finish = forms.BooleanField(required=False, initial=True)
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if ReaderStudy.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A study with this slug already exists.")
        return slug
