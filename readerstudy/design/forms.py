"""The forms of a study's design and creation: the design (DesignForm, one form for the new
study and the design page) and the new study itself (StudyCreateForm: a dataset or an uploaded
question bank, the sample, the reading settings). The rules are the services' (`rules`,
readerstudy.services.studies): each form says the services' problems beside their fields.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from types import SimpleNamespace

from django import forms
from django.conf import settings

from readerstudy.design.rules import (
    Design,
    DesignError,
    aid_mode_or_default,
    design_problems,
    study_design_problems,
)
from readerstudy.forms import slug_from_title
from readerstudy.models import MAX_BREAK_MINUTES, Dataset, ReaderStudy
from readerstudy.predictions.models import AIModel
from readerstudy.sampling import SEED_MAX
from readerstudy.selectors import dataset_sizes
from readerstudy.services.studies import sample_problem, unknown_users
from readerstudy.vocabulary import AidMode, ConfidenceScale


def image_source_choices(admin: bool = True) -> list[tuple[str, str]]:
    """Where an uploaded question bank's images may come from: only what the server configures
    (its folder and PACS named to administrators only)."""
    choices = []
    if settings.IMPORT_IMAGES_ROOT:
        where = f"Files under {settings.IMPORT_IMAGES_ROOT}" if admin else "Image files"
        choices.append(("folder", f"{where} on the server"))
    if settings.DICOMWEB_URL:
        where = f"The PACS at {settings.DICOMWEB_URL}" if admin else "The hospital's PACS"
        choices.append(("dicomweb", f"{where} (DICOMweb)"))
    return choices


# Shown under the image-source list when the server configures none: why it is empty and
# which settings fill it (docs/operations.md, Configuration). The settings and commands are
# said to the server's administrators (staff) only; a PI is told whom to ask.
NO_IMAGE_SOURCE = (
    "Empty because this server has no image source for uploaded questions. The administrator "
    "sets one in the environment: IMPORT_IMAGES_ROOT (a folder of images on the server) or "
    "DICOMWEB_URL (a PACS over DICOMweb), then restarts. Until then: sample from a dataset "
    "above, or import with manage.py import_questions."
)
NO_IMAGE_SOURCE_PI = (
    "Empty because this server has no image source for uploaded questions yet: ask its "
    "administrator to set one up. Until then, sample from a dataset above."
)
NO_IMAGE_SOURCE_ERROR = {
    True: "This server has no image source for uploads (IMPORT_IMAGES_ROOT or DICOMWEB_URL); "
    "set one, or use manage.py import_questions.",
    False: "This server has no image source for uploaded questions yet: ask its administrator "
    "to set one up, or sample from a dataset above.",
}


class DatasetChoiceField(forms.ModelChoiceField):
    """A dataset named with its size, so the sample size can be chosen before submitting."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sizes: dict[int, dict] = {}

    def label_from_instance(self, obj) -> str:
        size = self.sizes.get(obj.pk)
        if not size:
            return f"{obj.name} (no questions)"
        return f"{obj.name} ({size['questions']} questions on {size['xrays']} X-rays)"


class StudyCreateForm(forms.Form):
    """A new study. `admin`: the user administers the server (staff), and is told its settings
    and commands; a PI is told what to ask for. Fields required only in some cases say when
    (`required_when`), instead of "(optional)"."""

    dataset = DatasetChoiceField(
        queryset=Dataset.objects.all(),
        required=False,
        help_text="Sample from this dataset; or upload a question bank below.",
    )
    questions_file = forms.FileField(
        required=False,
        label="Question bank (.csv or .xlsx)",
        help_text="Imported first, all or nothing, then sampled. Columns as in the template.",
    )
    dataset_name = forms.CharField(
        required=False,
        max_length=200,
        label="Import into the dataset named",
        help_text="A new name; empty: the dataset chosen above.",
    )
    image_source = forms.ChoiceField(required=False, label="Images of the uploaded questions")
    title = forms.CharField(max_length=300)
    slug = forms.SlugField(
        max_length=100,
        required=False,
        help_text="Short name used in URLs, e.g. pilot-2026; made from the title when empty.",
    )
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
    draft_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=365,
        initial=14,
        label="Keep unsubmitted drafts (days)",
        help_text="Drafts live in the browser; they also go at sign-out.",
    )
    default_window = forms.ChoiceField(
        required=False,
        choices=ReaderStudy._meta.get_field("default_window").choices,
        initial=ReaderStudy._meta.get_field("default_window").default,
        label="Window each case opens at",
        help_text=ReaderStudy._meta.get_field("default_window").help_text,
    )
    break_minutes = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_BREAK_MINUTES,
        initial=ReaderStudy._meta.get_field("break_minutes").default,
        label="Break reminder after (minutes of reading)",
        help_text=ReaderStudy._meta.get_field("break_minutes").help_text,
    )
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to readers before the first case.",
    )
    closing_text = forms.CharField(
        required=False,
        initial=ReaderStudy._meta.get_field("closing_text").default,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown to readers once they have finished.",
    )

    # Fields that are required in some cases only: said beside their label.
    REQUIRED_WHEN = {
        "dataset": "required unless you upload a question bank",
        "dataset_name": "with a question bank",
        "image_source": "with a question bank",
    }

    def __init__(self, *args, admin: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.admin = admin
        for name, when in self.REQUIRED_WHEN.items():
            if name in self.fields:
                self.fields[name].required_when = when
        source = self.fields["image_source"]
        source.choices = image_source_choices(admin)
        if not source.choices:
            source.help_text = NO_IMAGE_SOURCE if admin else NO_IMAGE_SOURCE_PI
            source.widget.attrs["disabled"] = True
        self.dataset_sizes = dataset_sizes()
        self.fields["dataset"].sizes = self.dataset_sizes

    def size_rows(self) -> list[dict]:
        """Each dataset's questions and X-rays per task (the table under the form's field)."""
        return [
            {"name": d.name, **self.dataset_sizes[d.pk]}
            for d in self.fields["dataset"].queryset
            if d.pk in self.dataset_sizes
        ]

    def clean_questions_file(self):
        upload = self.cleaned_data.get("questions_file")
        if upload is None:
            return None
        if not upload.name.lower().endswith((".csv", ".xlsx")):
            raise forms.ValidationError("Upload a .csv or .xlsx file (see the template).")
        if upload.size > settings.QUESTION_BANK_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is larger than {settings.QUESTION_BANK_MAX_BYTES} bytes."
            )
        return upload

    def clean(self):
        data = super().clean()
        upload, dataset = data.get("questions_file"), data.get("dataset")
        if upload is None:
            if dataset is None and "dataset" not in self.errors:
                self.add_error("dataset", "Choose a dataset, or upload a question bank.")
            elif dataset is not None and data.get("sample") and "seed" not in self.errors:
                # The sampling's own rules, now: "asked for 500 questions but only 22 are
                # available" beside the field on the first submit, not from the worker.
                problem = sample_problem(
                    dataset=dataset,
                    n=data["sample"],
                    seed=data.get("seed") or 0,
                    stratify=data.get("stratify") or "task",
                    one_per_case=bool(data.get("one_per_case")),
                )
                if problem:
                    self.add_error("sample", f"{problem[0].upper()}{problem[1:]}.")
            return data
        name = (data.get("dataset_name") or "").strip() or (dataset.name if dataset else "")
        if not name:
            self.add_error("dataset_name", "Name the dataset the uploaded questions go into.")
        data["dataset_name"] = name
        if not self.fields["image_source"].choices:
            self.add_error("questions_file", NO_IMAGE_SOURCE_ERROR[self.admin])
        elif not data.get("image_source"):
            self.add_error("image_source", "Choose where the images of the questions are.")
        return data

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug and ReaderStudy.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A study with this slug already exists.")
        if not slug and self.cleaned_data.get("title"):
            slug = slug_from_title(self.cleaned_data["title"])
        return slug


class DesignForm(forms.Form):
    """A study's design, parsed: the new-study form's design fields and the design page. The
    rules are the design service's (design_problems); the form says each beside its field."""

    arms = forms.ChoiceField(
        choices=[
            ("unaided", "Unaided only (readers alone)"),
            ("unaided,aided", "Crossover: unaided and aided"),
            ("aided", "Aided only"),
        ],
        initial="unaided",
        required=False,
        label="Reading arms",
        help_text="Crossover: each reader reads every question twice, alone and with the AI model "
        "below, in two sessions.",
    )
    aid_model = forms.ChoiceField(
        required=False,
        label="AI model shown in the aided arm",
        help_text="Its predictions must be imported.",
    )
    aid_mode = forms.ChoiceField(
        required=False,
        choices=[("", "—"), *AidMode.choices],
        label="How the AI is shown",
        help_text="With an aided arm, concurrent unless you choose otherwise.",
    )
    washout_days = forms.IntegerField(
        initial=0,
        required=False,
        label="Washout (days)",
        help_text="Between a reader's two sessions; 0 allowed.",
    )
    groups = forms.IntegerField(
        initial=0,
        required=False,
        label="Split-plot groups",
        help_text="0: every reader reads every sampled question.",
    )
    anchor = forms.IntegerField(
        initial=0,
        required=False,
        label="Anchor questions",
        help_text="Read by every group (needs groups).",
    )
    shuffle_options = forms.BooleanField(
        required=False, label="Shuffle the four options per reader"
    )

    confidence_scale = forms.ChoiceField(
        choices=ConfidenceScale.choices,
        initial=ConfidenceScale.NONE,
        required=False,
        label="Confidence with every answer",
        help_text="Readers also rate how sure they are of each answer: the ratings of binary "
        "questions make ROC curves and AUCs, all of them calibration.",
    )

    DESIGN_FIELDS = (
        "arms",
        "aid_model",
        "aid_mode",
        "washout_days",
        "groups",
        "anchor",
        "confidence_scale",
    )

    def __init__(self, *args, models=None, **kwargs):
        """`models`: the AI models to offer (default: every imported one, by name)."""
        super().__init__(*args, **kwargs)
        models = AIModel.objects.all() if models is None else models
        names = sorted(set(models.values_list("name", flat=True)))
        self.fields["aid_model"].choices = [("", "—"), *((n, n) for n in names)]

    def check_design(self, problems) -> None:
        """Say the design service's problems with this design, each beside its field: `problems`
        is called with the parsed design (not when a design field is already refused)."""
        if any(name in self.errors for name in self.DESIGN_FIELDS):
            return
        for problem in problems(self.design()):
            self.say(problem)

    def say(self, problem: str) -> None:
        """One problem in the design service's words, beside the field it names (else on top),
        without the command line's option names and as a sentence."""
        text = re.sub(r" \(--[^)]*\)", "", problem).strip().rstrip(".")
        self.add_error(_problem_field(text), f"{text[0].upper()}{text[1:]}.")

    def design(self) -> Design:
        data = self.cleaned_data
        return Design(
            arms=data["arms"] or "unaided",
            aid_model=data["aid_model"],
            aid_mode=aid_mode_or_default(data["arms"] or "unaided", data["aid_mode"]),
            washout_days=data["washout_days"] or 0,
            groups=data["groups"] or 0,
            anchor=data["anchor"] or 0,
            shuffle_options=data["shuffle_options"],
            confidence_scale=data["confidence_scale"] or ConfidenceScale.NONE,
        )


class DesignedStudyCreateForm(StudyCreateForm, DesignForm):
    """The create-study form plus the design (DesignForm), checked against the sample and the
    readers typed (the study does not exist yet)."""

    readers = forms.CharField(
        required=False,
        max_length=5000,
        help_text="Comma-separated usernames (you can add readers later; they keep the balance).",
    )
    field_order = [*StudyCreateForm.base_fields, "readers", *DesignForm.base_fields]

    def clean_readers(self) -> str:
        """Unknown usernames beside the field, with the form's other errors (not from the
        worker after the submit)."""
        names = [n.strip() for n in (self.cleaned_data.get("readers") or "").split(",")]
        missing = unknown_users([n for n in names if n])
        if missing:
            raise forms.ValidationError(
                f"No account named {', '.join(missing)}. Add readers later from the study's "
                "dashboard (invitations create accounts), or fix the spelling."
            )
        return self.cleaned_data.get("readers") or ""

    def clean(self):
        """The design service's rules (design_problems) checked now, each beside its field,
        together with the other fields' errors: the sample stands in for the study's items."""
        sample = self.cleaned_data.get("sample")  # before the sampling check may refuse it
        data = super().clean()
        if not sample:
            return data
        # The readers typed, also when one is misspelt (said beside Readers): the groups are
        # compared with them, not with none.
        typed = data.get("readers") or self.data.get(self.add_prefix("readers"), "")
        readers = [n for n in typed.split(",") if n.strip()]
        planned = SimpleNamespace(items=SimpleNamespace(count=lambda: sample))
        self.check_design(lambda design: design_problems(planned, design, readers=len(readers)))
        return data


class StudyDesignForm(DesignForm):
    """The design page: a study's design, checked against its items and readers now."""

    def __init__(self, *args, study: ReaderStudy, **kwargs):
        self.study = study
        kwargs.setdefault("initial", asdict(Design.of(study)))
        super().__init__(*args, models=AIModel.objects.filter(dataset=study.dataset), **kwargs)

    def clean(self):
        data = super().clean()
        self.check_design(lambda design: study_design_problems(self.study, design))
        return data

    def refused(self, exc: DesignError) -> None:
        """The service's refusal that the form could not foresee (the model's predictions, an
        anchor that would cut an X-ray's questions), beside its field."""
        self.say(str(exc))


# Which field a design problem is said beside (by the words of design_problems).
PROBLEM_FIELDS = (
    ("no AI model named", "aid_model"),
    ("has predictions for", "aid_model"),
    ("need an aided arm", "arms"),
    ("needs an AI model", "aid_model"),
    ("aid mode", "aid_mode"),
    ("arms must", "arms"),
    ("washout", "washout_days"),
    ("anchor", "anchor"),
    ("groups", "groups"),
    ("confidence scale", "confidence_scale"),
)


def _problem_field(problem: str) -> str | None:
    return next((field for words, field in PROBLEM_FIELDS if words in problem), None)
