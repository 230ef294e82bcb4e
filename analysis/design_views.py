"""Creating a study from the browser, with its design. In the analysis layer because the
design's aided arm reads the AI model's predictions (analysis.design); the form and the
sampling are readerstudy's, the same services as `manage.py [import_questions +] create_study`.
"""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from analysis.design import designed_study_create
from analysis.models import AIModel
from readerstudy.dicomweb import DicomwebError
from readerstudy.forms import StudyCreateForm
from readerstudy.imaging import ImagingError
from readerstudy.rexvqa import RexvqaError
from readerstudy.selectors import design_sentence
from readerstudy.services.design import Design, DesignError
from readerstudy.services.importing import configured_dicomweb, question_bank_study_create
from readerstudy.services.studies import StudyError, study_create
from readerstudy.vocabulary import AidMode


class DesignedStudyCreateForm(StudyCreateForm):
    """The create-study form plus the design. The rules are the design service's; the form
    only parses."""

    readers = forms.CharField(
        required=False,
        max_length=5000,
        help_text="Comma-separated usernames (you can add readers later; they keep the balance).",
    )
    arms = forms.ChoiceField(
        choices=[
            ("unaided", "Unaided only (readers alone)"),
            ("unaided,aided", "Crossover: unaided and aided by an AI model"),
            ("aided", "Aided only"),
        ],
        initial="unaided",
        required=False,
        label="Reading arms",
    )
    aid_model = forms.ChoiceField(
        required=False,
        label="AI model shown in the aided arm",
        help_text="Its predictions must be imported.",
    )
    aid_mode = forms.ChoiceField(
        required=False, choices=[("", "—"), *AidMode.choices], label="How the AI is shown"
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
        help_text="0: every reader reads every case.",
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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = sorted(set(AIModel.objects.values_list("name", flat=True)))
        self.fields["aid_model"].choices = [("", "—"), *((n, n) for n in names)]

    def design(self) -> Design:
        data = self.cleaned_data
        return Design(
            arms=data["arms"] or "unaided",
            aid_model=data["aid_model"],
            aid_mode=data["aid_mode"] or (AidMode.CONCURRENT if data["aid_model"] else ""),
            washout_days=data["washout_days"] or 0,
            groups=data["groups"] or 0,
            anchor=data["anchor"] or 0,
            shuffle_options=data["shuffle_options"],
        )


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponse:
    """Create (and design) a study; the creator becomes its PI. All or nothing."""
    form = DesignedStudyCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        options = {
            "slug": data["slug"],
            "n": data["sample"],
            "seed": data["seed"],
            "stratify": data["stratify"],
            "one_per_case": data["one_per_case"],
            "title": data["title"],
            "readers": [n.strip() for n in data["readers"].split(",") if n.strip()],
            "pis": [request.user.username],
            "created_by": request.user,
            "random_order": data["random_order"],
            "allow_revision": data["allow_revision"],
            "show_indication": data["show_indication"],
            "lock_on_finish": data["lock_on_finish"],
            "instructions": data["instructions"],
            "closing_text": data["closing_text"],
        }
        upload = data["questions_file"]
        imported = ""

        def make():
            nonlocal imported
            if upload is None:
                return study_create(dataset=data["dataset"], **options)
            from_folder = data["image_source"] == "folder"
            summary, created = question_bank_study_create(
                handle=upload,
                filename=upload.name,
                dataset_name=data["dataset_name"],
                images_root=Path(settings.IMPORT_IMAGES_ROOT) if from_folder else None,
                dicomweb=None if from_folder else configured_dicomweb(),
                **options,
            )
            imported = (
                f"Imported {summary.questions_created} new questions "
                f"({summary.questions_unchanged} already there) into {summary.dataset}. "
            )
            return created

        try:
            created, _ = designed_study_create(
                design=form.design(), create=make, actor=request.user
            )
        except (StudyError, ImagingError, RexvqaError, DicomwebError, DesignError) as exc:
            prefix = "Nothing was imported or created. " if upload is not None else ""
            form.add_error(None, prefix + str(exc))
        else:
            messages.success(
                request,
                imported
                + f"Created {created.study.title} with {len(created.question_ids)} questions. "
                + design_sentence(created.study)
                + ".",
            )
            return redirect("pi-dashboard", slug=created.study.slug)
    return render(request, "readerstudy/create.html", {"form": form})
