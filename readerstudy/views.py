"""PI study management that needs nothing above the domain: members, exclusions. Nothing here
imports or names a page of a layer above the domain. (Creating a study and its design:
readerstudy.design.views.)

The dashboard that summarises answers and reviews lives a layer up, in annotation: these views
send the PI back to it through `readerstudy.platform.links.site_link("pi-home", ...)`, which the
composition root wires (settings.SITE_LINKS), and `tools/check_url_layers.py` keeps it so.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from readerstudy.blinding import reading_done
from readerstudy.forms import (
    CloseReadingForm,
    ExclusionForm,
    MembershipForm,
    ReadingSettingsForm,
    ResultsSettingsForm,
)
from readerstudy.models import Membership, ReaderStudy, Role, StudyQuestion
from readerstudy.platform.downloads import attachment
from readerstudy.platform.links import site_link
from readerstudy.platform.spreadsheets import XLSX
from readerstudy.selectors import is_last_pi, study_for_user
from readerstudy.services.studies import (
    StudyError,
    membership_add,
    membership_remove,
    study_question_set_excluded,
    study_reading_close,
    study_reading_set,
    study_results_set,
)


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
@require_GET
def question_bank_template(request: HttpRequest, ext: str) -> HttpResponse:
    if ext not in TEMPLATES:
        raise Http404
    name, content_type = TEMPLATES[ext]
    body = (Path(settings.BASE_DIR) / "docs" / name).read_bytes()
    return attachment(body, name, content_type)


@login_required
@require_http_methods(["GET", "POST"])
def reading_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """How readers read the study: the window each case opens at and the break reminder. A
    change applies to the next case a reader opens."""
    study = _pi_study(request, slug)
    initial = {"default_window": study.default_window, "break_minutes": study.break_minutes}
    form = ReadingSettingsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            changed = study_reading_set(
                study=study,
                actor=request.user,
                default_window=data["default_window"],
                break_minutes=data["break_minutes"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)  # beside each field it names
        else:
            messages.success(request, "Reading settings saved." if changed else "Nothing changed.")
            return redirect(site_link("pi-home", slug))
    return render(request, "readerstudy/reading_settings.html", {"study": study, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def results_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """What the study's readers get back, and closing its reading."""
    study = _pi_study(request, slug)
    initial = {
        "results_visibility": study.results_visibility,
        "results_show_ai": study.results_show_ai,
        "misses_unseen": study.misses_unseen,
    }
    form = ResultsSettingsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            changed = study_results_set(
                study=study,
                actor=request.user,
                visibility=data["results_visibility"],
                show_ai=data["results_show_ai"],
                misses_unseen=data["misses_unseen"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, "Results settings saved." if changed else "Nothing changed.")
            return redirect(site_link("pi-home", slug))
    context = {
        "study": study,
        "form": form,
        "close_form": CloseReadingForm(),
        "everyone_finished": ReaderStudy.objects.filter(pk=study.pk)
        .filter(reading_done())
        .exists(),
    }
    return render(request, "readerstudy/results_settings.html", context)


@login_required
@require_POST
def close_reading(request: HttpRequest, slug: str) -> HttpResponse:
    """A PI closes the study's reading for everyone (confirmed; cannot be undone)."""
    study = _pi_study(request, slug)
    form = CloseReadingForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors["confirm"]))
        return redirect("pi-results", slug=slug)
    if study_reading_close(study=study, actor=request.user):
        messages.success(request, "Reading closed: nobody can answer any more.")
    else:
        messages.info(request, "Reading was closed already.")
    return redirect(site_link("pi-home", slug))
