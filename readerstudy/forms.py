from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.forms.models import fields_for_model
from django.utils.text import slugify

from readerstudy.models import MAX_BREAK_MINUTES, Dataset, ReaderStudy, Role
from readerstudy.sampling import SEED_MAX
from readerstudy.selectors import dataset_sizes
from readerstudy.services.accounts import username_normalized
from readerstudy.services.studies import sample_problem


class ExclusionForm(forms.Form):
    action = forms.ChoiceField(choices=[("exclude", "Exclude"), ("include", "Include again")])
    reason = forms.CharField(max_length=1000, error_messages={"required": "Give a reason."})


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)
    seniority = forms.CharField(
        max_length=60,
        required=False,
        label="Training year / seniority (optional)",
        help_text="e.g. PGY-3, attending; reported in Methods and usable as a grouping.",
    )

    def clean_username(self):
        name = username_normalized(self.cleaned_data["username"])
        try:
            return get_user_model().objects.get(username=name)
        except get_user_model().DoesNotExist as exc:
            raise forms.ValidationError(f"No user named {name!r}.") from exc


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


_READING_FIELDS = fields_for_model(
    ReaderStudy,
    fields=["default_window", "break_minutes"],
    labels={
        "default_window": "Window each case opens at",
        "break_minutes": "Break reminder after (minutes of reading)",
    },
)


class ReadingSettingsForm(forms.Form):
    """How readers read a study: the window each case opens at, and when to suggest a break.
    The fields (and their validators) are the model's; the service writes them."""

    default_window = _READING_FIELDS["default_window"]
    break_minutes = _READING_FIELDS["break_minutes"]


_RESULTS_FIELDS = fields_for_model(
    ReaderStudy,
    fields=["results_visibility", "results_show_ai", "misses_unseen"],
    labels={
        "results_visibility": "Readers see their results",
        "results_show_ai": "The results show the AI models' answers and accuracy",
        "misses_unseen": "“Practise my misses” adds unseen questions per miss",
    },
)


class ResultsSettingsForm(forms.Form):
    """What a study's readers get back: when their debrief opens, whether it shows the AI's
    answers, what "practise my misses" adds. The model's fields; the service writes them."""

    results_visibility = _RESULTS_FIELDS["results_visibility"]
    results_show_ai = _RESULTS_FIELDS["results_show_ai"]
    misses_unseen = _RESULTS_FIELDS["misses_unseen"]


class CloseReadingForm(forms.Form):
    confirm = forms.BooleanField(
        error_messages={"required": "Tick the box to close reading: it cannot be undone."}
    )


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


def slug_from_title(title: str) -> str:
    """A free slug made from the title ("AI-assisted trial" -> "ai-assisted-trial", then
    "-2", "-3" … when taken)."""
    field = ReaderStudy._meta.get_field("slug")
    stem = slugify(title)[: field.max_length - 4].strip("-") or "study"
    taken = set(ReaderStudy.objects.filter(slug__startswith=stem).values_list("slug", flat=True))
    slug, n = stem, 1
    while slug in taken:
        n += 1
        slug = f"{stem}-{n}"
    return slug


class InviteForm(forms.Form):
    """People to bring into a study: pasted lines and/or a CSV file (checked by the service)."""

    people = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={
                "rows": 6,
                "placeholder": "Ben Okafor <ben.okafor@hospital.org>\njdoe, jane.doe@hospital.org",
            }
        ),
        help_text="One person per line: a username, an e-mail address, or both; a name "
        "before the address (Name <address>) becomes the account's name, and a username is "
        "made from the address when none is given.",
    )
    people_file = forms.FileField(
        required=False,
        label="…or a CSV file",
        help_text="Columns username and/or email (and name), with a header row.",
    )
    role = forms.ChoiceField(
        choices=[(Role.READER, Role.READER.label), (Role.EXPERT, Role.EXPERT.label)],
        initial=Role.READER,
    )

    MAX_FILE_BYTES = 256 * 1024

    def clean_people_file(self):
        upload = self.cleaned_data.get("people_file")
        if upload is not None and upload.size > self.MAX_FILE_BYTES:
            raise forms.ValidationError("The CSV file is larger than 256 KB.")
        return upload

    def clean(self):
        data = super().clean()
        if not (data.get("people") or "").strip() and not data.get("people_file"):
            raise forms.ValidationError("Give at least one person, pasted or in a CSV file.")
        return data
