"""Creating a study from the browser, with its design, and the PI's design page (the design
changed until anyone answers). In the analysis layer because the design's aided arm reads the
AI model's predictions (analysis.design); the form and the sampling are readerstudy's, the same
services as `manage.py [import_questions +] create_study`. One design form (DesignForm) for
both pages.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from types import SimpleNamespace

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from analysis.design import DesignFrozen, DesignSet, design_frozen, study_design_set
from analysis.tasks import designed_study_create_task
from readerstudy.forms import StudyCreateForm
from readerstudy.jobs import JobRefused, job_progress, job_refresh
from readerstudy.models import BackgroundJob, JobStatus, ReaderStudy, Role
from readerstudy.predictions.models import AIModel
from readerstudy.selectors import design_sentence, roles_of, study_for_user
from readerstudy.services.design import (
    Design,
    DesignError,
    aid_mode_or_default,
    design_problems,
    study_design_problems,
)
from readerstudy.services.studies import unknown_users
from readerstudy.tasks import study_create_start
from readerstudy.vocabulary import AidMode


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

    DESIGN_FIELDS = ("arms", "aid_model", "aid_mode", "washout_days", "groups", "anchor")

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
)


def _problem_field(problem: str) -> str | None:
    return next((field for words, field in PROBLEM_FIELDS if words in problem), None)


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponse:
    """Create (and design) a study in a worker; the creator becomes its PI. All or nothing:
    the import, the sampling, the images and the design happen in one task
    (analysis.tasks.designed_study_create_task) whose progress the next page shows."""
    admin = request.user.is_staff
    if request.method == "POST":
        form = DesignedStudyCreateForm(request.POST, request.FILES, admin=admin)
    else:  # back from a dataset's predictions upload: that dataset and model chosen
        form = DesignedStudyCreateForm(admin=admin, initial=_create_initial(request))
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
            "random_order": data["random_order"],
            "allow_revision": data["allow_revision"],
            "show_indication": data["show_indication"],
            "lock_on_finish": data["lock_on_finish"],
            "draft_days": data["draft_days"] or 14,
            "default_window": data["default_window"] or "default",
            "break_minutes": 60 if data["break_minutes"] is None else data["break_minutes"],
            "instructions": data["instructions"],
            "closing_text": data["closing_text"],
        }
        upload = data["questions_file"]
        try:
            job = study_create_start(
                user=request.user,
                options=options,
                upload=upload,
                dataset=data["dataset"] if upload is None else None,
                dataset_name=data["dataset_name"],
                image_source=data["image_source"],
                design=asdict(form.design()),
                task=designed_study_create_task,
            )
        except JobRefused as exc:
            form.add_error(None, f"Nothing was created. {exc}")
            return render(request, "readerstudy/create.html", {"form": form}, status=429)
        if job.status == JobStatus.FAILED:  # run at once (immediate backend): on the form
            prefix = "Nothing was imported or created. " if upload is not None else ""
            form.add_error(None, prefix + job.error)
        elif job.status == JobStatus.DONE:
            messages.success(request, job.result["message"])
            return redirect("pi-dashboard", slug=job.result["slug"])
        else:
            return redirect("create-study-progress", job_id=job.pk)
    return render(request, "readerstudy/create.html", {"form": form, "admin": admin})


def _create_initial(request: HttpRequest) -> dict:
    """?dataset=ID&aid_model=NAME (the predictions upload sends the PI back so)."""
    initial = {}
    dataset = request.GET.get("dataset", "")
    if dataset.isdigit() and len(dataset) < 12:
        initial["dataset"] = int(dataset)
    model = request.GET.get("aid_model", "")[:200]
    if model:
        initial.update(aid_model=model, arms="unaided,aided")
    return initial


def _own_job(request: HttpRequest, job_id: int) -> BackgroundJob:
    """A study-creation job, to the user who started it only."""
    job = BackgroundJob.objects.filter(
        pk=job_id, requested_by=request.user, key__startswith="study-create:"
    ).first()
    if job is None:
        raise Http404
    return job


@login_required
@require_GET
def create_progress(request: HttpRequest, job_id: int) -> HttpResponse:
    """The study being created: a progress bar (htmx asks again every second), then the
    dashboard; a failure in words (nothing was written)."""
    job = job_refresh(_own_job(request, job_id), designed_study_create_task)
    if job.status == JobStatus.DONE:
        messages.success(request, job.result["message"])
        url = reverse("pi-dashboard", args=[job.result["slug"]])
        if request.htmx:
            response = HttpResponse(status=204)
            response["HX-Redirect"] = url
            return response
        return redirect(url)
    context = {"job": job, "progress": job_progress(job), "upload": "file" in job.params}
    template = "analysis/_create_progress.html" if request.htmx else "analysis/create_progress.html"
    return render(request, template, context)


@login_required
@require_http_methods(["GET", "POST"])
def design_page(request: HttpRequest, slug: str) -> HttpResponse:
    """A study's design, for its PI: changed as a whole by the design service (checked, all or
    nothing, audited) until anyone answers; from then on shown read-only with the refusal in
    words, and a POST is refused with it (409) and writes nothing."""
    study = study_for_user(request.user, slug, [Role.PI])
    frozen = design_frozen(study)
    posted = request.method == "POST"
    form = StudyDesignForm(request.POST if posted and not frozen else None, study=study)
    if posted and not frozen and form.is_valid():
        try:
            result = study_design_set(study=study, design=form.design(), actor=request.user)
        except DesignFrozen as exc:  # a reader answered meanwhile
            frozen = str(exc)
            form = StudyDesignForm(study=study)
        except DesignError as exc:
            form.refused(exc)
        else:
            messages.success(request, _design_saved(result))
            return redirect("pi-dashboard", slug=study.slug)
    if frozen:
        for field in form.fields.values():
            field.disabled = True
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "design": design_sentence(study),
        "form": form,
        "frozen": frozen,
    }
    status = 409 if posted and frozen else 200
    return render(request, "analysis/design.html", context, status=status)


def _design_saved(result: DesignSet) -> str:
    text = f"Design saved: {design_sentence(result.study)}."
    if result.aid_missing:
        text += (
            f" The AI gave no usable answer for {result.aid_missing} of the "
            f"{result.aid_missing + result.aid_usable} questions: the aided arm says so on those."
        )
    return text
