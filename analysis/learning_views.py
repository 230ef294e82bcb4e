"""What readers get back: a study's results for its reader (the debrief), each
missed case in the viewer, "practise my misses", a resident's progress over time, and a
programme director's (PI's) view of their residents' progress with its CSV.

They are analysis pages because the numbers are the analysis's (analysis.learning); who may
see them is asked of readerstudy.results and readerstudy.blinding, never decided here.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from analysis import learning, progress
from annotation.practice import plan_from, plan_state, practice_plan_create
from annotation.selectors import case_images
from annotation.sessions import moment_words
from readerstudy.models import Question, Role
from readerstudy.platform.downloads import attachment, content_version, export_filename
from readerstudy.platform.spreadsheets import csv_text
from readerstudy.results import results_refusal
from readerstudy.selectors import study_for_user
from readerstudy.services.studies import StudyError
from readerstudy.vocabulary import LETTERS, PRACTICE_INTERVALS


def _results_study(request: HttpRequest, slug: str):
    """The study if the person reads it (404 otherwise), and why its results are closed to
    them now ("" when open)."""
    study = study_for_user(request.user, slug, [Role.READER])
    return study, results_refusal(request.user, study)


def _closed(request, study, refusal: str) -> HttpResponse:
    context = {"study": study, "refusal": refusal}
    return render(request, "analysis/results_closed.html", context, status=403)


@login_required
@require_GET
def results(request: HttpRequest, slug: str) -> HttpResponse:
    study, refusal = _results_study(request, slug)
    if refusal:
        return _closed(request, study, refusal)
    debrief = learning.debrief(study, request.user)
    context = {
        "study": study,
        "debrief": debrief,
        "intervals": sorted(PRACTICE_INTERVALS.items()),
        "plan": plan_from(request.user, study),
        "fast_s": f"{learning.counting().fast_answer_ms / 1000:g}",
    }
    return render(request, "analysis/results.html", context)


@login_required
@require_GET
def results_case(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """One case of the debrief in the viewer, with the key and the explanation; ← and →
    go through "my misses"."""
    study, refusal = _results_study(request, slug)
    if refusal:
        return _closed(request, study, refusal)
    debrief = learning.debrief(study, request.user, with_accuracy=False)
    case = next((c for c in debrief.cases if c.number == number), None)
    if case is None:
        raise Http404("No such case.")
    misses = [c.number for c in debrief.misses]
    before = [n for n in misses if n < number]
    after = [n for n in misses if n > number]
    context = {
        "study": study,
        "case": case,
        "debrief": debrief,
        "images": case_images(case.case_id),
        "prev_miss": before[-1] if before else None,
        "next_miss": after[0] if after else None,
        "miss_index": misses.index(number) + 1 if number in misses else None,
        "misses": len(misses),
        "key_version": debrief.key_version,
    }
    return render(request, "analysis/results_case.html", context)


RESULT_COLUMNS = [
    "case",
    "question_id",
    "task",
    "category",
    "your_answer",
    "key",
    "right",
    "counted",
    "not_counted_because",
    "too_fast",
    "answered_by",
    *[f"share_{letter}" for letter in LETTERS],
    "explanation",
    "key_version",
]


@login_required
@require_GET
def results_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The debrief's cases as a plain table (one header row)."""
    study, refusal = _results_study(request, slug)
    if refusal:
        return _closed(request, study, refusal)
    debrief = learning.debrief(study, request.user, with_accuracy=False)
    questions = {
        q.id: q
        for q in Question.objects.filter(study_items__study=study).only(
            "id", "source_id", "task", "category"
        )
    }
    item_question = dict(study.items.values_list("id", "question_id"))
    rows = []
    for case in debrief.cases:
        question = questions[item_question[case.item_id]]
        shares = {o.letter: "" if o.share is None else f"{o.share:.4f}" for o in case.options}
        rows.append(
            [
                case.number,
                question.source_id,
                learning.TASK_LABELS.get(question.task, question.task),
                question.category,
                case.choice,
                case.key,
                case.right,
                not case.not_counted,
                case.not_counted,
                case.too_fast,
                case.answered_by,
                *[shares[letter] for letter in LETTERS],
                case.explanation,
                debrief.key_version,
            ]
        )
    body = csv_text([RESULT_COLUMNS, *rows])
    name = export_filename(study.slug, "my-results", "csv", version=content_version(body))
    return attachment(body, name, "text/csv; charset=utf-8")


@login_required
@require_POST
def practise_misses(request: HttpRequest, slug: str) -> HttpResponse:
    """Make the person's own plan of their misses (and, as the PI allows, unseen questions
    of the same task and category), offered again after the interval they chose."""
    study, refusal = _results_study(request, slug)
    if refusal:
        return _closed(request, study, refusal)
    interval = request.POST.get("interval_days", "")
    debrief = learning.debrief(study, request.user, with_accuracy=False)
    item_question = dict(study.items.values_list("id", "question_id"))
    wanted = [item_question[c.item_id] for c in debrief.misses]
    misses = sorted(Question.objects.filter(id__in=wanted), key=lambda q: wanted.index(q.id))
    try:
        plan = practice_plan_create(
            owner=request.user,
            source=study,
            misses=misses,
            interval_days=int(interval) if interval.isdigit() and len(interval) < 4 else 0,
        )
    except StudyError as exc:
        messages.error(request, str(exc))
        return redirect("reader-results", slug=slug)
    due = plan_state(plan).due_at
    messages.success(
        request,
        f"“{plan.title}”: {plan.questions.count()} questions, offered on "
        f"{moment_words(due)} and then {PRACTICE_INTERVALS[plan.interval_days]} after each "
        "sitting.",
    )
    return redirect(reverse("home") + "#practice")


@login_required
@require_GET
def my_progress(request: HttpRequest) -> HttpResponse:
    """The person's accuracy per task over time: practice sets, their own practice, and
    research studies whose results are open to them; against the panel's median, no other
    person named."""
    sittings = progress.own_sittings(request.user)
    tasks = progress.tasks_of(sittings)
    context = {
        "sittings": sittings,
        "tasks": tasks,
        "rows": progress.table_rows(sittings, tasks),
        "by_task": progress.by_task(sittings),
        "counting": learning.counting_words(),
    }
    return render(request, "analysis/progress.html", context)


@login_required
@require_GET
def programme(request: HttpRequest) -> HttpResponse:
    """A PI's residents: each one's accuracy per task over time in the PI's studies (and
    their own practice made from them)."""
    view = progress.programme(request.user)
    if view is None:
        raise Http404("You are a PI of no study.")
    context = {"view": view, "counting": learning.counting_words()}
    return render(request, "analysis/programme.html", context)


@login_required
@require_GET
def programme_csv(request: HttpRequest) -> HttpResponse:
    view = progress.programme(request.user)
    if view is None:
        raise Http404("You are a PI of no study.")
    body = progress.programme_csv(view)
    name = export_filename(
        request.user.get_username(), "residents-progress", "csv", version=content_version(body)
    )
    return attachment(body, name, "text/csv; charset=utf-8")
