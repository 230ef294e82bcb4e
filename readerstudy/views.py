"""PI study management: creation, members, exclusions. Nothing here imports or names a page of a
layer above the domain.

The dashboard that summarises answers and reviews lives a layer up, in annotation: these views
send the PI back to it through `readerstudy.links.site_link("pi-home", ...)`, which the
composition root wires (settings.SITE_LINKS), and `tools/check_url_layers.py` keeps it so.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from readerstudy.downloads import attachment
from readerstudy.forms import (
    ExclusionForm,
    MembershipForm,
    StudyCreateForm,
)
from readerstudy.jobs import job_progress, job_refresh
from readerstudy.links import site_link
from readerstudy.models import BackgroundJob, JobStatus, Membership, Role, StudyQuestion
from readerstudy.selectors import is_last_pi, study_for_user
from readerstudy.services.studies import (
    StudyError,
    membership_add,
    membership_remove,
    study_question_set_excluded,
)
from readerstudy.spreadsheets import XLSX
from readerstudy.tasks import study_create_start, study_create_task


def _pi_study(request: HttpRequest, slug: str):
    return study_for_user(request.user, slug, [Role.PI])


@login_required
@require_POST
def item_exclusion(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    study = _pi_study(request, slug)
    item = get_object_or_404(
        StudyQuestion.objects.select_related("question"), id=item_id, study=study
    )
    form = ExclusionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "To exclude or include a question, give a reason.")
    else:
        excluded = form.cleaned_data["action"] == "exclude"
        study_question_set_excluded(
            item=item, excluded=excluded, reason=form.cleaned_data["reason"], actor=request.user
        )
        verb = "excluded from" if excluded else "included again in"
        messages.success(request, f"{item.question.source_id} {verb} the analysis.")
    return redirect(site_link("pi-home", slug))


def _membership(study, membership_id) -> Membership:
    """A membership of this study by id; anything else (another study's, "abc") is a 404."""
    if not str(membership_id).isdigit() or len(str(membership_id)) > 18:
        raise Http404("No such member.")
    return get_object_or_404(
        Membership.objects.select_related("user"), id=int(membership_id), study=study
    )


@login_required
@require_GET
def member_remove_confirm(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    """ "Remove X as reader?": a page of its own, so the confirmation works without JavaScript."""
    study = _pi_study(request, slug)
    membership = _membership(study, membership_id)
    return render(
        request,
        "readerstudy/member_remove.html",
        {"study": study, "membership": membership, "last_pi": is_last_pi(membership)},
    )


@login_required
@require_POST
def members(request: HttpRequest, slug: str) -> HttpResponse:
    study = _pi_study(request, slug)
    if "remove" in request.POST:
        membership = _membership(study, request.POST["remove"])
        if request.POST.get("confirm") != "yes":  # removal is confirmed on its own page
            return redirect("pi-member-remove", slug=slug, membership_id=membership.id)
        try:
            membership_remove(
                study=study, user=membership.user, role=membership.role, actor=request.user
            )
        except StudyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Removed {membership.user} as {membership.role}.")
        return redirect(site_link("pi-home", slug))
    form = MembershipForm(request.POST)
    if form.is_valid():
        user, role = form.cleaned_data["username"], form.cleaned_data["role"]
        seniority = form.cleaned_data.get("seniority") or None
        try:
            membership_add(
                study=study, user=user, role=role, actor=request.user, seniority=seniority
            )
        except StudyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request,
                f"Added {user} as {role}."
                if seniority is None
                else f"Saved {user} as {role} ({seniority}).",
            )
    else:
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
    return redirect(site_link("pi-home", slug))


TEMPLATES = {
    "csv": ("question_bank_template.csv", "text/csv"),
    "xlsx": ("question_bank_template.xlsx", XLSX),
}


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponse:
    """The same services as `manage.py [import_questions +] create_study`; creator becomes PI."""
    form = StudyCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        options = {
            "slug": data["slug"],
            "n": data["sample"],
            "seed": data["seed"],
            "stratify": data["stratify"],
            "one_per_case": data["one_per_case"],
            "title": data["title"],
            "pis": [request.user.username],
            "created_by": request.user,
            "random_order": data["random_order"],
            "allow_revision": data["allow_revision"],
            "show_indication": data["show_indication"],
            "lock_on_finish": data["lock_on_finish"],
            "draft_days": data["draft_days"] or 14,
            "instructions": data["instructions"],
            "closing_text": data["closing_text"],
        }
        upload = data["questions_file"]
        # The task runs in a worker: the creator goes as the job's user, not in `options`.
        del options["created_by"]
        job = study_create_start(
            user=request.user,
            options=options,
            upload=upload,
            dataset=data["dataset"] if upload is None else None,
            dataset_name=data["dataset_name"],
            image_source=data["image_source"],
        )
        if job.status == JobStatus.FAILED:  # run at once (immediate backend): on the form
            prefix = "Nothing was imported or created. " if upload is not None else ""
            form.add_error(None, prefix + job.error)
        elif job.status == JobStatus.DONE:
            messages.success(request, job.result["message"])
            return redirect(site_link("pi-home", job.result["slug"]))
        else:
            return redirect("create-study-progress", job_id=job.pk)
    return render(request, "readerstudy/create.html", {"form": form})


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_GET
def question_bank_template(request: HttpRequest, ext: str) -> HttpResponse:
    if ext not in TEMPLATES:
        raise Http404
    name, content_type = TEMPLATES[ext]
    body = (Path(settings.BASE_DIR) / "docs" / name).read_bytes()
    return attachment(body, name, content_type)


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
    template = (
        "readerstudy/_create_progress.html" if request.htmx else "readerstudy/create_progress.html"
    )
    return render(request, template, context)
