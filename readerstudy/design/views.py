"""Creating a study from the browser, with its design, and the PI's design page (the design
changed until anyone answers): the same services as `manage.py [import_questions +]
create_study`. The creation runs in a worker (`tasks.study_create_task`); this page shows its
progress.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from readerstudy.design.forms import DesignedStudyCreateForm, StudyDesignForm
from readerstudy.design.rules import DesignError, DesignFrozen, design_frozen
from readerstudy.design.services import DesignSet, study_design_set
from readerstudy.design.tasks import study_create_start, study_create_task
from readerstudy.jobs import JobRefused, job_progress, job_refresh
from readerstudy.models import BackgroundJob, JobStatus, Role
from readerstudy.platform.links import site_link
from readerstudy.selectors import design_sentence, roles_of, study_for_user


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponse:
    """Create (and design) a study in a worker; the creator becomes its PI. All or nothing:
    the import, the sampling, the images and the design happen in one task
    (tasks.study_create_task) whose progress the next page shows."""
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
                design=form.design(),
            )
        except JobRefused as exc:
            form.add_error(None, f"Nothing was created. {exc}")
            return render(request, "design/create.html", {"form": form}, status=429)
        if job.status == JobStatus.FAILED:  # run at once (immediate backend): on the form
            prefix = "Nothing was imported or created. " if upload is not None else ""
            form.add_error(None, prefix + job.error)
        elif job.status == JobStatus.DONE:
            messages.success(request, job.result["message"])
            return redirect(site_link("pi-home", job.result["slug"]))
        else:
            return redirect("create-study-progress", job_id=job.pk)
    return render(request, "design/create.html", {"form": form, "admin": admin})


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
    job = job_refresh(_own_job(request, job_id), study_create_task)
    if job.status == JobStatus.DONE:
        messages.success(request, job.result["message"])
        url = site_link("pi-home", job.result["slug"])
        if request.htmx:
            response = HttpResponse(status=204)
            response["HX-Redirect"] = url
            return response
        return redirect(url)
    context = {"job": job, "progress": job_progress(job), "upload": "file" in job.params}
    template = "design/_create_progress.html" if request.htmx else "design/create_progress.html"
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
            return redirect(site_link("pi-home", study.slug))
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
    return render(request, "design/design.html", context, status=status)


def _design_saved(result: DesignSet) -> str:
    text = f"Design saved: {design_sentence(result.study)}."
    if result.aid_missing:
        text += (
            f" The AI gave no usable answer for {result.aid_missing} of the "
            f"{result.aid_missing + result.aid_usable} questions: the aided arm says so on those."
        )
    return text
