"""Reader pages. Each view parses, authorises through `study_for_user`, calls the services and
selectors it needs and renders. Nothing here ever loads the correct answer."""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import pacing, practice, selectors
from annotation.forms import AnswerForm, FinishForm
from annotation.preferences import PreferenceRejected, reading_preset_set, reading_presets
from annotation.services import (
    AnswerConflict,
    AnswerRejected,
    InvalidAnswerValue,
    SessionNotOpen,
    answer_submit,
    layout_check,
    reader_finish,
    scale_check,
)
from annotation.sessions import reading_of, washout_message
from readerstudy.models import Role
from readerstudy.platform.http import wants_json
from readerstudy.platform.links import site_link
from readerstudy.results import results_refusal
from readerstudy.selectors import studies_of, study_for_user
from readerstudy.vocabulary import ANSWER_FIELD_NAMES


def _reader_study(request: HttpRequest, slug: str):
    return study_for_user(request.user, slug, [Role.READER])


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    rows = []
    for study, roles in studies_of(request.user):
        if study.plan_id:  # a sitting of the person's own practice: listed under Practice
            continue
        progress = selectors.progress_of(study, request.user) if Role.READER in roles else None
        results = ""
        if progress and progress.answered and not results_refusal(request.user, study):
            results = site_link("reader-results", study.slug)
        rows.append(
            {
                "study": study,
                "roles": roles,
                "progress": progress,
                "focus": False,
                "results": results,
            }
        )
    # Start (or Resume) of the first study there is reading to do in has the focus: Enter.
    for row in rows:
        progress = row["progress"]
        if progress and not progress.waiting and not progress.finished:
            row["focus"] = True
            break
    context = {
        "rows": rows,
        "plans": practice.plans_of(request.user),
        "now": timezone.now(),
        "progress_url": site_link("my-progress"),
        "programme_url": site_link("programme")
        if any(Role.PI in roles for _, roles in studies_of(request.user))
        else "",
    }
    return render(request, "annotation/home.html", context)


@login_required
@require_GET
@never_cache
def study_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Start or resume: the instructions before a first case, then always the first
    unanswered case, else the review screen."""
    study = _reader_study(request, slug)
    reading = reading_of(study, request.user)
    order = selectors.ordered_item_ids(study, request.user, reading)
    answered = selectors.answered_item_ids(study, request.user, reading.session)
    number = selectors.first_unanswered(order, answered)
    if not reading.is_open:
        return redirect("reader-instructions", slug=slug)
    if study.reading_closed_at is not None:  # nothing to answer: your cases, as they stand
        return redirect("reader-review", slug=slug)
    if number is None or selectors.completion_of(study, request.user, reading.session):
        return redirect("reader-review", slug=slug)
    if not answered:
        return redirect("reader-instructions", slug=slug)
    return redirect("reader-case", slug=slug, number=number)


@login_required
@require_GET
@never_cache
def instructions(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's instructions and how the reading page works: shown before the first case,
    and at any time from the case page's menu."""
    study = _reader_study(request, slug)
    reading = reading_of(study, request.user)
    order = selectors.ordered_item_ids(study, request.user, reading)
    answered = selectors.answered_item_ids(study, request.user, reading.session)
    number = selectors.first_unanswered(order, answered)
    context = {
        "study": study,
        "form": AnswerForm(scale=study.confidence_scale),
        "next_number": number if reading.is_open else None,
        "reading": reading,
        "washout": "" if reading.is_open else washout_message(reading),
        "progress": selectors.progress_of(study, request.user, total=len(order)),
        "expected": pacing.expected_for(study, len(order)),
    }
    return render(request, "annotation/instructions.html", context)


def _render_case(
    request, study, number: int, *, order=None, data=None, error: str = "", status=200
):
    reading = reading_of(study, request.user)
    if not reading.is_open:
        # The second session before its washout has passed: the date, in words, and nothing
        # of the case (not even session 1's, which is over).
        context = {"study": study, "reading": reading, "washout": washout_message(reading)}
        return render(request, "annotation/washout.html", context, status=409)
    case = selectors.reader_case(study, request.user, number, order, reading)
    if case is None:
        raise Http404("No such case.")
    form = AnswerForm.for_case(case, data)
    progress = selectors.progress_of(study, request.user, total=case.total)
    context = {
        "case": case,
        "progress": progress,
        "form": form,
        "error": error,
        "study": study,
        "min_dwell_ms": settings.READER_MIN_DWELL_MS,
        "reading": reading,
        "pace": pacing.reader_pace(study, request.user, progress.left),
        "presets_json": json.dumps(reading_presets(study, request.user)),
    }
    template = "annotation/_case.html" if request.htmx else "annotation/case.html"
    response = render(request, template, context, status=status)
    # A case page is the reader's live state: Back and a prefetch must ask the server again.
    add_never_cache_headers(response)
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
@require_GET
def case_page(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    study = _reader_study(request, slug)
    return _render_case(request, study, number)


def _saved(request, study, number: int, order: list[int], outcome, reading) -> JsonResponse:
    """The page's acknowledgement of a save: what was stored and where the server says Enter
    leads, so the page can check the case it already showed. A second read's first answer
    leads back to the same case, which now shows the AI's answer."""
    answered = selectors.answered_item_ids(study, request.user, reading.session)
    advance = selectors.advance_after(order, answered, number)
    if outcome.stage == "first":
        advance = selectors.Advance(number, None)
    answer = outcome.answer
    mapping = selectors.screen_letters(study, reading, answer.item.question_id)
    return JsonResponse(
        {
            "saved": number,
            "changed": outcome.created or outcome.revised,
            "answer": {
                **{f: getattr(answer, f) for f in ANSWER_FIELD_NAMES},
                "choice": selectors.to_screen(mapping, answer.choice),
            },
            "next": advance.next_number,
            "next_url": (
                reverse("reader-case", kwargs={"slug": study.slug, "number": advance.next_number})
                if advance.next_number
                else None
            ),
            "following": advance.following,
            "following_url": (
                reverse("reader-case", kwargs={"slug": study.slug, "number": advance.following})
                if advance.following
                else None
            ),
            "review_url": reverse("reader-review", kwargs={"slug": study.slug}),
            "progress": {"answered": len(answered), "total": len(order)},
            "pace": pacing.reader_pace(
                study, request.user, max(len(order) - len(answered), 0)
            ).as_json(),
        },
        headers={"Cache-Control": "no-store"},
    )


def _page_session(request: HttpRequest) -> int | None:
    """The session the page was shown in (its form's action says it): None when absent."""
    value = request.GET.get("session", "")
    return int(value) if value in {"1", "2"} else None


def _rejected(request, study, number: int, order, exc: AnswerRejected) -> HttpResponse:
    """An answer the service refused (409): the reason in words, and for the page's script
    the reader's own saved answer (a conflict) or when the session opens."""
    if wants_json(request):
        body = {"error": str(exc)}
        if isinstance(exc, AnswerConflict):
            body["saved"] = exc.saved  # the reader's own saved answer, shown beside the draft
        if isinstance(exc, SessionNotOpen):
            body["opens_at"] = exc.opens_at.isoformat()
        return JsonResponse(body, status=409)
    return _render_case(request, study, number, order=order, error=str(exc), status=409)


@login_required
@require_POST
def case_answer(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """Save one answer. The reading page's script asks for JSON and shows the next case
    itself (it has it prefetched); a plain form post is redirected to the next case."""
    study = _reader_study(request, slug)
    reading = reading_of(study, request.user)
    order = selectors.ordered_item_ids(study, request.user, reading)
    item = selectors.item_at(study, request.user, number, order)
    if item is None:
        # A page made under an earlier design may name a case the design now has no more
        # (groups added): said as that, not as "no such case".
        try:
            layout_check(reading, request.GET.get("layout"))
        except AnswerRejected as exc:
            if wants_json(request):
                return JsonResponse({"error": str(exc)}, status=409)
            messages.error(request, str(exc))
            return redirect("reader-start", slug=slug)
        raise Http404("No such case.")
    mapping = selectors.screen_letters(study, reading, item.question_id)
    scale = request.GET.get("scale", "")[:16] or None
    try:
        # Before the form, which reads the rating on the study's scale of now.
        scale_check(study, scale)
    except AnswerRejected as exc:
        return _rejected(request, study, number, order, exc)
    form = AnswerForm(request.POST, screen=mapping, scale=study.confidence_scale)
    if not form.is_valid():
        error = " ".join(e for errors in form.errors.values() for e in errors)
        if wants_json(request):
            return JsonResponse({"error": error}, status=422)
        return _render_case(
            request, study, number, order=order, data=request.POST, error=error, status=422
        )
    try:
        outcome = answer_submit(
            reader=request.user,
            item=item,
            session=_page_session(request),
            stage="first" if request.GET.get("stage") == "first" else None,
            layout=request.GET.get("layout") or None,
            words=request.GET.get("words", "")[:64] or None,
            scale=scale,
            **form.cleaned_data,
        )
    except InvalidAnswerValue as exc:  # as a form error: the reader corrects that field
        if wants_json(request):
            return JsonResponse({"error": str(exc), "field": exc.field}, status=422)
        return _render_case(
            request, study, number, order=order, data=request.POST, error=str(exc), status=422
        )
    except AnswerRejected as exc:
        return _rejected(request, study, number, order, exc)
    if wants_json(request):
        return _saved(request, study, number, order, outcome, reading)
    if outcome.stage == "first":
        return redirect("reader-case", slug=slug, number=number)
    answered = selectors.answered_item_ids(study, request.user, reading.session)
    next_number = selectors.first_unanswered(order, answered, after=number)
    if next_number is None:
        return redirect("reader-review", slug=slug)
    return redirect("reader-case", slug=slug, number=next_number)


@login_required
@require_POST
def reading_preset(request: HttpRequest, slug: str) -> HttpResponse:
    """The reader chose a window preset (`preset`) for images of `modality`: every case of
    the study opens at it from now on, in every session and arm."""
    study = _reader_study(request, slug)
    try:
        reading_preset_set(
            study=study,
            reader=request.user,
            modality=request.POST.get("modality", ""),
            preset=request.POST.get("preset", ""),
        )
    except PreferenceRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return HttpResponse(status=204)


@login_required
@require_GET
def session(request: HttpRequest, slug: str) -> JsonResponse:
    """Who is signed in, and a fresh CSRF token: the page checks this after an in-page
    sign-in so it never sends one reader's pending answers as another reader."""
    _reader_study(request, slug)
    return JsonResponse(
        {
            "reader": request.user.pk,
            "username": request.user.get_username(),
            "csrf": get_token(request),
        },
        headers={"Cache-Control": "no-store"},
    )


@login_required
@require_http_methods(["GET", "POST"])
@never_cache
def review(request: HttpRequest, slug: str) -> HttpResponse:
    study = _reader_study(request, slug)
    reading = reading_of(study, request.user)
    if not reading.is_open:
        return redirect("reader-instructions", slug=slug)
    rows = selectors.review_rows(study, request.user, reading)
    completion = selectors.completion_of(study, request.user, reading.session)
    form = FinishForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and completion is None and form.is_valid():
        try:
            reader_finish(reader=request.user, study=study)
        except AnswerRejected as exc:
            messages.error(request, str(exc))
            return redirect("reader-review", slug=slug)
        return redirect("reader-done", slug=slug)
    context = {
        "study": study,
        "reading": reading,
        "rows": rows,
        "unanswered": [r for r in rows if not r.answered],
        "completion": completion,
        "form": form,
        "progress": selectors.progress_of(study, request.user, total=len(rows)),
    }
    return render(request, "annotation/review.html", context)


@login_required
@require_GET
@never_cache
def done(request: HttpRequest, slug: str) -> HttpResponse:
    study = _reader_study(request, slug)
    reading = reading_of(study, request.user)
    completion = selectors.completion_of(study, request.user, reading.session)
    if completion is None and reading.session == 2:
        # Just finished session 1: its completion, and when session 2 opens.
        completion = selectors.completion_of(study, request.user, 1)
    if completion is None:
        return redirect("reader-review", slug=slug)
    context = {
        "study": study,
        "completion": completion,
        "reading": reading,
        "next_session": reading.session > completion.session,
        "results": ""
        if results_refusal(request.user, study)
        else site_link("reader-results", study.slug),
    }
    return render(request, "annotation/done.html", context)


@login_required
@require_GET
def media_image(request: HttpRequest, path: str) -> FileResponse:
    """Display images, named by content hash: safe to cache for a year."""
    parts = Path(path).parts
    if len(parts) != 3 or parts[0] not in {"display", "thumbs", "depth"} or ".." in parts:
        raise Http404()
    root = Path(settings.MEDIA_ROOT).resolve()
    try:
        file = (root / path).resolve()
        found = root in file.parents and file.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        found = False
    if not found:
        raise Http404()
    handle = file.open("rb")  # FileResponse closes it once sent
    response = FileResponse(handle, content_type=mimetypes.guess_type(file.name)[0])
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
