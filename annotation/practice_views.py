"""Practice pages: a PI builds a practice set from a dataset; a person's own
"practise my misses" plans and their next sittings. The practice set is then read on the
ordinary reading pages (annotation.views), with the key and explanation after each answer."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from annotation import practice
from annotation.practice_forms import PracticeSetForm
from readerstudy.models import PracticePlan
from readerstudy.platform.links import site_link
from readerstudy.services.studies import StudyError


@login_required
@permission_required("readerstudy.add_readerstudy", raise_exception=True)
@require_http_methods(["GET", "POST"])
def practice_new(request: HttpRequest) -> HttpResponse:
    """Build a practice set: the form says how many questions the filters leave, and why
    some are left out, before anything is created."""
    form = PracticeSetForm(request.POST or None)
    pool = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        filters = {
            "dataset": data["dataset"],
            "tasks": data["tasks"],
            "category": data["category"],
            "difficulty": data["difficulty"],
        }
        pool = practice.practice_pool(**filters)
        if "count" not in request.POST:
            try:
                created = practice.practice_set_create(
                    slug=data["slug"],
                    title=data["title"],
                    n=data["sample"],
                    seed=data["seed"],
                    readers=data["readers"],
                    misses_unseen=data["misses_unseen"],
                    creator=request.user,
                    **filters,
                )
            except StudyError as exc:
                form.add_error(None, f"{str(exc)[0].upper()}{str(exc)[1:]}")
            else:
                messages.success(
                    request,
                    f"Practice set “{created.study.title}” created: "
                    f"{len(created.question_ids)} questions.",
                )
                return redirect(site_link("pi-home", created.study.slug))
    return render(request, "annotation/practice_new.html", {"form": form, "pool": pool})


@login_required
@require_POST
def plan_start(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Open the plan's next sitting once it is due (only its owner's plan)."""
    plan = get_object_or_404(PracticePlan, pk=plan_id, owner=request.user)
    try:
        study = practice.plan_sitting_start(plan=plan, now=timezone.now())
    except StudyError as exc:
        messages.error(request, str(exc))
        return redirect("home")
    return redirect("reader-start", slug=study.slug)
