from django import forms
from django.contrib.auth import get_user_model
from django.forms.models import fields_for_model
from django.utils.text import slugify

from readerstudy.models import ReaderStudy, Role
from readerstudy.platform.accounts import username_normalized


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
