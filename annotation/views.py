"""Reader pages. Each view parses, authorises through `study_for_user`, calls the services and
selectors it needs and renders. Nothing here ever loads the correct answer."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotation import selectors
from annotation.forms import AnswerForm, FinishForm
from annotation.services import AnswerRejected, answer_submit, reader_finish
from readerstudy.models import Role
from readerstudy.selectors import studies_of, study_for_user


def _reader_study(request: HttpRequest, slug: str):
    return study_for_user(request.user, slug, [Role.READER])


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    rows = []
    for study, roles in studies_of(request.user):
        progress = selectors.progress_of(study, request.user) if Role.READER in roles else None
        rows.append({"study": study, "roles": roles, "progress": progress})
    return render(request, "annotation/home.html", {"rows": rows})


@login_required
@require_GET
def study_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Start or resume: always the first unanswered case, else the review screen."""
    study = _reader_study(request, slug)
    order = selectors.ordered_item_ids(study, request.user)
    number = selectors.first_unanswered(order, selectors.answered_item_ids(study, request.user))
    if number is None or selectors.completion_of(study, request.user):
        return redirect("reader-review", slug=slug)
    return redirect("reader-case", slug=slug, number=number)


def _render_case(
    request, study, number: int, *, order=None, data=None, error: str = "", status=200
):
    case = selectors.reader_case(study, request.user, number, order)
    if case is None:
        raise Http404("No such case.")
    form = AnswerForm.for_case(case, data)
    progress = selectors.progress_of(study, request.user, total=case.total)
    context = {"case": case, "progress": progress, "form": form, "error": error, "study": study}
    template = "annotation/_case.html" if request.htmx else "annotation/case.html"
    return render(request, template, context, status=status)


@login_required
@require_GET
def case_page(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    study = _reader_study(request, slug)
    return _render_case(request, study, number)


@login_required
@require_POST
def case_answer(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    study = _reader_study(request, slug)
    order = selectors.ordered_item_ids(study, request.user)
    item = selectors.item_at(study, request.user, number, order)
    if item is None:
        raise Http404("No such case.")
    form = AnswerForm(request.POST)
    if not form.is_valid():
        error = " ".join(e for errors in form.errors.values() for e in errors)
        return _render_case(
            request, study, number, order=order, data=request.POST, error=error, status=422
        )
    try:
        answer_submit(reader=request.user, item=item, **form.cleaned_data)
    except AnswerRejected as exc:
        return _render_case(request, study, number, order=order, error=str(exc), status=409)
    answered = selectors.answered_item_ids(study, request.user)
    next_number = selectors.first_unanswered(order, answered, after=number)
    if next_number is None:
        url = reverse("reader-review", kwargs={"slug": slug})
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    if not request.htmx:
        return redirect("reader-case", slug=slug, number=next_number)
    response = _render_case(request, study, next_number, order=order)
    response["HX-Push-Url"] = reverse("reader-case", kwargs={"slug": slug, "number": next_number})
    return response


@login_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, slug: str) -> HttpResponse:
    study = _reader_study(request, slug)
    rows = selectors.review_rows(study, request.user)
    completion = selectors.completion_of(study, request.user)
    form = FinishForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and completion is None and form.is_valid():
        reader_finish(reader=request.user, study=study)
        return redirect("reader-done", slug=slug)
    context = {
        "study": study,
        "rows": rows,
        "unanswered": [r for r in rows if not r.answered],
        "completion": completion,
        "form": form,
        "progress": selectors.progress_of(study, request.user, total=len(rows)),
    }
    return render(request, "annotation/review.html", context)


@login_required
@require_GET
def done(request: HttpRequest, slug: str) -> HttpResponse:
    study = _reader_study(request, slug)
    completion = selectors.completion_of(study, request.user)
    if completion is None:
        return redirect("reader-review", slug=slug)
    return render(request, "annotation/done.html", {"study": study, "completion": completion})


@login_required
@require_GET
def media_image(request: HttpRequest, path: str) -> FileResponse:
    """Display images, named by content hash: safe to cache for a year."""
    parts = Path(path).parts
    if len(parts) != 3 or parts[0] not in {"display", "thumbs", "depth"} or ".." in parts:
        raise Http404()
    root = Path(settings.MEDIA_ROOT).resolve()
    file = (root / path).resolve()
    if root not in file.parents or not file.is_file():
        raise Http404()
    handle = file.open("rb")  # FileResponse closes it once sent
    response = FileResponse(handle, content_type=mimetypes.guess_type(file.name)[0])
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
