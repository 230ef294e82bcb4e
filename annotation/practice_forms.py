"""The PI's practice-set form: a dataset, the tasks, category and difficulty to draw from, how
many questions, and the residents who practise (checked by annotation.practice)."""

from __future__ import annotations

from django import forms

from annotation.practice import DIFFICULTY_CHOICES
from readerstudy.forms import slug_from_title
from readerstudy.models import Dataset, Question, ReaderStudy, Task
from readerstudy.sampling import SEED_MAX
from readerstudy.vocabulary import MAX_UNSEEN_PER_MISS


class PracticeSetForm(forms.Form):
    title = forms.CharField(max_length=300)
    slug = forms.SlugField(
        max_length=100,
        required=False,
        help_text="Short name in URLs; made from the title when empty.",
    )
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    tasks = forms.MultipleChoiceField(
        choices=Task.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every task.",
    )
    category = forms.ChoiceField(required=False, help_text="Any when empty.")
    difficulty = forms.ChoiceField(
        choices=DIFFICULTY_CHOICES,
        required=False,
        help_text="As the experts' reviews judge it, else the research readers' votes.",
    )
    sample = forms.IntegerField(min_value=1, initial=10, label="Number of questions")
    seed = forms.IntegerField(min_value=0, max_value=SEED_MAX, initial=0)
    readers = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Usernames, separated by commas or new lines. Someone reading one of the "
        "set's X-rays blind in a research study is refused: a practice set shows keys at once.",
    )
    misses_unseen = forms.IntegerField(
        min_value=0,
        max_value=MAX_UNSEEN_PER_MISS,
        initial=0,
        label="Unseen questions per miss",
        help_text="“Practise my misses” adds up to this many unseen questions of the same task "
        "and category per missed question.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        categories = (
            Question.objects.exclude(category="")
            .order_by("category")
            .values_list("category", flat=True)
            .distinct()
        )
        self.fields["category"].choices = [("", "Any"), *((c, c) for c in categories)]

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug and ReaderStudy.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A study with this slug already exists.")
        return slug

    def clean(self):
        data = super().clean()
        if not data.get("slug") and data.get("title"):
            data["slug"] = slug_from_title(data["title"])
        names = (data.get("readers") or "").replace(",", "\n").split()
        data["readers"] = [name.strip() for name in names if name.strip()]
        return data
