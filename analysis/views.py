"""The PI's analysis page and its downloads. PIs of the study only.

Everything is computed once per data version and policy (`analysis.cache`): the page, each
figure, each table and the ZIP read the same cached result.
"""

from __future__ import annotations

import io
import math
import time
import zipfile
from urllib.parse import urlencode

from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from analysis import downloads, preparation
from analysis.cache import StudyAnalysis, cached_template_version
from analysis.column_labels import DECLARED, column_label, compact_cell, compact_columns
from analysis.confidence_page import confidence_section
from analysis.exports import PRACTICE_WORDS, all_tables, table_csv, table_xlsx
from analysis.figure_formats import FORMATS
from analysis.figures import FIGURES, figure_builders, figure_kind
from analysis.forms import AnalysisSettingsForm, PowerForm, RaterNamesForm
from analysis.page_contents import contents_tree, page_contents
from analysis.pipeline import DESIGN_TABLES, clean, records
from analysis.rater_names import RaterLabelError, rater_labels_set, study_labels
from analysis.reporting import methods_section, table_arm
from analysis.selectors import readers_not_started, study_raters
from analysis.stats import conclusions
from readerstudy.jobs import ACTIVE, JobRefused, job_progress
from readerstudy.models import JobStatus, Role
from readerstudy.platform.downloads import attachment
from readerstudy.platform.spreadsheets import XLSX
from readerstudy.predictions.views import PredictionUploadForm
from readerstudy.selectors import design_sentence, roles_of, study_for_user

# The page's tables and figure links, cached as HTML under this template's content too.
RESULTS_TEMPLATE = "analysis/_results.html"


def _analysis(request: HttpRequest, slug: str, version: str | None = None):
    study = study_for_user(request.user, slug, [Role.PI])
    form = AnalysisSettingsForm(request.GET or None)
    return study, form, StudyAnalysis(study, form.settings(), version=version)


def _grid(frame, by: str) -> tuple[list[str], list[dict]]:
    """Raters as rows, groups (tasks or categories) as columns (the paper's table layout)."""
    if frame.empty:
        return [], []
    groups = list(dict.fromkeys(frame[by]))
    rows = []
    for rater, part in frame.groupby("rater", sort=False):
        cells = {row[by]: row for row in records(part)}
        rows.append({"rater": rater, "cells": [cells.get(g) for g in groups]})
    return groups, rows


@login_required
@require_GET
def analysis_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The tables of the current data version if they are computed; else the newest older
    ones "as of HH:MM" (or a progress bar) while a worker computes the current version. The
    request itself never computes: readers' requests on this worker come first."""
    study, form, analysis = _analysis(request, slug)
    query = request.GET.urlencode()
    preparation.remember_policy(study, analysis.settings)
    # Warm: no write at all (on SQLite a write takes the lock readers' answers need).
    job = None
    if not preparation.ready(analysis):
        try:
            job = preparation.prepare(analysis, requested_by=request.user)
        except JobRefused as exc:  # the page still shows what is computed, and says why
            messages.warning(request, str(exc))
    shown, as_of = analysis, None
    if not analysis.has("result"):
        older = preparation.latest(analysis)
        shown, as_of = older if older else (None, None)
    results_html, left_out, contents = "", "", []
    if shown is not None:
        # Once every figure is drawn the page links the pictures themselves; until then each
        # figure's place asks (htmx) until the worker has drawn it.
        drawn = preparation.ready(shown)
        results_html, left_out, contents = shown.cached(
            f"page:{cached_template_version(RESULTS_TEMPLATE)}:{query}:{drawn}",
            lambda: _results_html(study, shown, query, drawn),
        )
    tools_html = render_to_string(
        "analysis/_pi_tools.html",
        {
            "study": study,
            "query": query,
            "names_form": RaterNamesForm(
                raters=study_raters(study),
                initial={f"name-{k}": v for k, v in study_labels(study).items()},
            ),
            "prediction_form": PredictionUploadForm(),
        },
        request=request,
    )
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "form": form,
        "describe": analysis.settings.describe(),
        "practice_words": PRACTICE_WORDS if study.practice else "",
        "policy": analysis.settings.policy(),
        # rendered by Django's escaping templates
        "results_html": mark_safe(results_html),
        "tools_html": mark_safe(tools_html),
        "contents": contents_tree([*contents, *page_contents(tools_html)]),
        "query": query,
        "not_started": readers_not_started(study),
        "left_out": left_out,
        "computing": shown is not analysis,
        "as_of": as_of,
        **_status_context(analysis, job),
    }
    return render(request, "analysis/analysis.html", context)


def _status_context(analysis: StudyAnalysis, job) -> dict:
    progress = job_progress(job) if job else None
    return {"job": job, "progress": progress, "version": analysis.version}


@login_required
@require_GET
def analysis_status(request: HttpRequest, slug: str) -> HttpResponse:
    """The progress of the current analysis (htmx polls it). Once what the page waits for is
    ready, it tells htmx to reload the page (or, `want=zip`, to fetch the ZIP)."""
    study, _, analysis = _analysis(request, slug)
    want = _wanted(request.GET.get("want", ""))
    want_zip = want is not None and want[0] in WITH_THE_ZIP
    asked = _asked(request)
    if want_zip and asked is not None:
        # While readers answer, the current version moves on with each answer: the ZIP of
        # any data at least as new as when the PI asked is what they are waiting for.
        newer = _zip_since(analysis, asked)
        if newer is not None:
            return _to_zip(request, study, version=newer.version, want=want[0])
    job = preparation.job_of(analysis) or preparation.prepare(analysis, requested_by=request.user)
    finished = job.status in (JobStatus.DONE, JobStatus.FAILED) and not job.error
    if want is None:
        done = analysis.has("result")
    elif want_zip:
        done = analysis.has("zip") or finished
    elif want[0] == "figure":
        done = analysis.has(f"figure:{want[1]}:{want[2]}") or finished
    else:  # a table: the result is all it needs
        done = analysis.has("result")
    if done:
        if want_zip:
            return _to_zip(request, study, want=want[0])
        response = HttpResponse(status=204)
        if want is None:
            response["HX-Refresh"] = "true"
        else:
            response["HX-Redirect"] = f"{_download_url(study, want)}?{_settings_query(request)}"
        return response
    context = {
        "study": study,
        "want": request.GET.get("want", ""),
        **_status_context(analysis, job),
    }
    context["query"] = _settings_query(request)
    context["asked"] = request.GET.get("asked", "") if want_zip else ""
    return render(request, "analysis/_status.html", context)


# Downloads made with the ZIP (the worker builds them together): `want` -> URL name.
WITH_THE_ZIP = {"zip": "analysis-zip", "report": "analysis-report"}


def _wanted(raw: str) -> tuple[str, ...] | None:
    """What a progress page waits to download: ("zip",), ("report",), ("table", name, fmt)
    or ("figure", name, fmt) from `want=zip`, `want=report`, `want=table:accuracy.csv`,
    `want=figure:x.png`; None for the page itself (or anything else)."""
    if raw in WITH_THE_ZIP:
        return (raw,)
    kind, _, rest = raw[:200].partition(":")
    name, _, fmt = rest.rpartition(".")
    if kind in ("table", "figure") and name and fmt and "/" not in name:
        return (kind, name, fmt)
    return None


def _download_url(study, want: tuple[str, ...]) -> str:
    if want[0] in WITH_THE_ZIP:
        return reverse(WITH_THE_ZIP[want[0]], args=[study.slug])
    return reverse(f"analysis-{want[0]}", args=[study.slug, want[1], want[2]])


def _preparing(request: HttpRequest, study, analysis: StudyAnalysis, job, want: str, what: str):
    """202 and the preparation's progress; the download starts when it is ready."""
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "want": want,
        "what": what,
        "query": _settings_query(request),
        # when a ZIP was asked for: any ZIP of data at least this new is what the PI waits for
        "asked": f"{time.time():.3f}" if want in WITH_THE_ZIP else "",
        **_status_context(analysis, job),
    }
    response = render(request, "analysis/zip_pending.html", context, status=202)
    response["Retry-After"] = "2"
    return response


def _asked(request: HttpRequest) -> float | None:
    """When the PI asked for the ZIP (the progress page passes it on), as a Unix time."""
    try:
        value = float(request.GET.get("asked", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _zip_since(analysis: StudyAnalysis, asked: float) -> StudyAnalysis | None:
    """The newest computed analysis whose data is as of `asked` or later, if its ZIP is ready."""
    newest = preparation.latest(analysis)
    if newest is None:
        return None
    shown, as_of = newest
    return shown if as_of.timestamp() >= asked and shown.has("zip") else None


def _to_zip(request: HttpRequest, study, version: str = "", want: str = "zip") -> HttpResponse:
    """Tell htmx to fetch the ZIP, or what comes with it (`want`: WITH_THE_ZIP), of `version`
    when it is not the current one."""
    query = _settings_query(request)
    if version:
        query = f"{query}&v={version}" if query else f"v={version}"
    response = HttpResponse(status=204)
    response["HX-Redirect"] = f"{reverse(WITH_THE_ZIP[want], args=[study.slug])}?{query}"
    return response


def _settings_query(request: HttpRequest) -> str:
    fields = AnalysisSettingsForm(request.GET).fields
    return urlencode({k: v for k, v in request.GET.items() if k in fields})


@login_required
@require_GET
def figure_slot(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """A figure's place on the page (htmx): the picture once a worker has drawn it, until
    then a placeholder that asks again. A figure no job will draw is drawn on request."""
    if figure_kind(name) not in FIGURES:
        raise Http404("No such figure.")
    pinned = request.GET.get("v", "")[:64]
    study, _, analysis = _analysis(request, slug, version=pinned or None)
    context = {
        "study": study,
        "name": name,
        "figures": [name],
        "version": analysis.version,
        "query": _settings_query(request),
        "alt": FIGURES.get(figure_kind(name), ""),
        "failed": downloads.figure_failure(analysis, name),
    }
    if context["failed"]:
        return render(request, "analysis/_figure_failed.html", context)
    # Any live job of this study and policy will draw it (one asked for an older version
    # computes the current one): the page waits for it rather than drawing it here, in a
    # web worker (benchmarks/scale: a 100-reader κ heatmap outlived gunicorn's timeout).
    if not analysis.has(f"figure:{name}:svg") and preparation.live_job(analysis) is not None:
        return render(request, "analysis/_figure_pending.html", context)
    return render(request, "analysis/_figure.html", context)


def _results_html(study, analysis: StudyAnalysis, query: str, drawn: bool) -> tuple[str, str, list]:
    """The tables and figure links, the page's policy line on left-out questions and the
    sections (page_contents): made once per data version, policy and query."""
    result = analysis.result
    settings = result.settings
    context = {
        **{name: records(frame) for name, frame in result.shown_tables().items()},
        "study": study,
        "scale": settings.scale,
        "policy": settings.policy(),
        "key_version": result.key_version,
        "grid": _grid(result.accuracy, "task"),
        "category_grid": _grid(result.accuracy_by_category, "category"),
        "reader_panel": (
            {k: clean(v) for k, v in result.reader_panel.items()} if result.reader_panel else None
        ),
        "matrices": [
            name for name in result.matrices() if name.startswith(f"kappa_{settings.scale}_")
        ],
        "figures": list(figure_builders(result)),
        "figure_slots": _figure_slots(analysis, drawn),
        "methods": methods_section(result),
        "query": query,
        "version": analysis.version,
        **_design(study, analysis, QueryDict(query)),
        **confidence_section(result),
        "drawn": drawn,
    }
    html = render_to_string(RESULTS_TEMPLATE, context)
    # The page's policy line: the questions a PI excluded and an expert rejected, counted.
    return html, result.selection_note(), page_contents(html)


def _figure_slots(analysis: StudyAnalysis, drawn: bool) -> dict[str, dict]:
    """Per figure kind (FIGURES: "kappa" for kappa_<scale>): its name, alt text and, once
    every figure is drawn, why it could not be (None when it was)."""
    failed = downloads.failed_figures(analysis) if drawn else {}
    return {
        figure_kind(name): {
            "name": name,
            "alt": FIGURES[figure_kind(name)],
            "failed": failed.get(name),
        }
        for name in figure_builders(analysis.result)
    }


DESIGN_TITLES = {
    "arm_accuracy": "Accuracy per arm (per reader and task; panel = mean of readers)",
    "mrmc_difference": "Aided − unaided: MRMC difference (random readers and cases; fixed readers)",
    "reader_arms": "Each reader in both arms: accuracy and the difference with its CI",
    "mrmc_variance_components": "Variance components (Obuchowski–Rockette)",
    "non_inferiority": "Non-inferiority and superiority",
    "arm_by_session": "Order check: accuracy per arm and session",
    "reliance_agreement": "Reliance on the AI: agreement with the AI when it was right vs wrong",
    "second_read_switches": "Second read: switches to the AI's answer",
}


def _cell(value):
    if isinstance(value, float):
        return "–" if value != value else f"{value:.3f}".replace("-", "−")
    return "–" if value is None else value


def _design_table(name: str, title: str, table, facts: dict) -> dict:
    """A design table for the page: its columns in plain words (`column_labels`; the CSV
    keeps the names); a table with declared labels (reliance) shows each measure in one
    cell, so that it fits 1280 px."""
    data = table.data
    arm = table_arm(facts, name)
    declared = DECLARED.get(name)
    if declared:
        measures = compact_columns(list(data.columns), declared)
        rows = [
            [compact_cell(parts, row.get, _cell) for _, parts in measures]
            for row in data.to_dict("records")
        ]
        spans, labels = [], [words for words, _ in measures]
    else:
        spans, labels = [], [column_label(c) for c in data.columns]
        rows = [[_cell(v) for v in row] for row in data.itertuples(index=False)]
    return {
        "name": name,
        "title": title,
        "columns": list(data.columns),
        "spans": spans,
        "labels": labels,
        "rows": rows,
        "about": [*table.header_lines(), *([f"arm: {arm}"] if arm else [])],
    }


def _design(study, analysis: StudyAnalysis, query: QueryDict) -> dict:
    """The design-aware section of a study with an aided arm: the design sentence, each design
    table (pipeline.DESIGN_TABLES) with what it rests on, the NI/superiority conclusions in
    words, and the power section for the effect and power asked (PowerForm); empty for a study
    read in one unaided arm."""
    if not study.aid_model:
        return {}
    result = analysis.result
    out = {"design": design_sentence(study), "single_arm": table_arm(result.facts, "accuracy")}
    if result.design_error:
        return {**out, "design_error": result.design_error}
    if result.design is None:
        return {**out, "design_tables": []}
    power_form = PowerForm.of(query)
    effect, target = power_form.values()
    return {
        **out,
        "analysed": result.design["design"].rstrip("."),
        "design_tables": [
            _design_table(name, DESIGN_TITLES[name], result.design_table(name), result.facts)
            for name in DESIGN_TABLES
            if result.design_table(name) is not None
        ],
        "conclusions": conclusions(result.design),
        "power_form": power_form,
        "power_effect": f"{effect:g}",
        "power_target": f"{target:g}",
        "power_keep": [
            (key, value)
            for key, values in query.lists()
            if key not in power_form.fields
            for value in values
        ],
        "power": _design_table(
            "power",
            f"Power: readers × X-rays to detect {effect:g} with power {target:g}",
            analysis.design_power(effect, target),
            result.facts,
        ),
    }


@login_required
@require_POST
def rater_names(request: HttpRequest, slug: str) -> HttpResponse:
    """The PI names readers and models for figures and tables (blank: the default name)."""
    study = study_for_user(request.user, slug, [Role.PI])
    raters = study_raters(study)
    form = RaterNamesForm(request.POST, raters=raters)
    if not form.is_valid():
        messages.error(request, "Names are at most 60 characters.")
    else:
        try:
            rater_labels_set(study=study, actor=request.user, raters=raters, labels=form.labels())
            messages.success(request, "Display names saved.")
        except RaterLabelError as exc:
            messages.error(request, f"Nothing was saved. {exc}")
    settings_form = AnalysisSettingsForm(request.GET)
    query = urlencode({k: v for k, v in request.GET.items() if k in settings_form.fields})
    return redirect(f"{reverse('analysis', args=[study.slug])}?{query}#names")


@login_required
@require_GET
def figure_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    """A figure. The page's links name the data version they were drawn at (`v`): such a URL
    always means the same bytes, so the browser keeps them and a warm page asks for none."""
    if fmt not in FORMATS:
        raise Http404()
    pinned = request.GET.get("v", "")
    study, _, analysis = _analysis(request, slug, version=pinned[:64] or None)
    body = analysis.lookup(f"figure:{name}:{fmt}")  # a warm page never unpickles the result
    if body is None and pinned:
        analysis = StudyAnalysis(study, analysis.settings)
        if analysis.version != pinned:  # the data changed since the page was drawn
            query = request.GET.copy()
            query["v"] = analysis.version
            return redirect(f"{request.path}?{query.urlencode()}")
    # Never computed here: without the analysis (or while a worker is drawing this figure) a
    # worker is asked and the answer is its progress. Only a figure no job will draw
    # (ANALYSIS_PREPARE_DOWNLOADS off) is drawn here, from the computed analysis.
    if body is None and (not analysis.has("result") or django_settings.ANALYSIS_PREPARE_DOWNLOADS):
        job = preparation.prepare(analysis, requested_by=request.user)
        body = analysis.lookup(f"figure:{name}:{fmt}")  # an immediate backend drew it
        if body is None and (job.status in ACTIVE or not analysis.has("result")):
            if analysis.has("result") and name not in figure_builders(analysis.result):
                raise Http404()
            return _preparing(
                request, study, analysis, job, f"figure:{name}.{fmt}", f"the figure {name}"
            )
    if body is None:
        drawn = downloads.figure(analysis, name, [fmt])
        failed = downloads.figure_failure(analysis, name) if drawn is None else None
        if failed:  # in words, as the page says it (a 500: a fault of ours, not of the asking)
            return HttpResponse(
                f"The figure {name} {failed}. Every table and the ZIP are complete without it.",
                status=500,
                content_type="text/plain; charset=utf-8",
            )
        if drawn is None:
            raise Http404()
        body = drawn[fmt]
    if "download" in request.GET:
        name = downloads.export_info(analysis).filename(name, fmt)
        return attachment(body, name, FORMATS[fmt])
    response = HttpResponse(body, content_type=FORMATS[fmt])
    if pinned:
        response["Cache-Control"] = "private, max-age=31536000, immutable"
    else:
        response["Cache-Control"] = "private, max-age=0, must-revalidate"
        response["ETag"] = f'"{analysis.version}-{fmt}"'
    return response


@login_required
@require_GET
def table_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    """One table as CSV or XLSX, from the computed analysis: the current data version's, or
    while a worker computes it the newest older one (its data version and date in the file's
    name, its time in `X-Analysis-As-Of`: the CSV stays a plain table), or with none yet a 202
    progress page that then downloads it. The request never computes the analysis."""
    if fmt not in ("csv", "xlsx"):
        raise Http404()
    study, _, analysis = _analysis(request, slug)
    shown, as_of, job = preparation.shown_or_prepared(analysis, requested_by=request.user)
    if shown is None:
        return _preparing(request, study, analysis, job, f"table:{name}.{fmt}", f"the table {name}")
    result = shown.result
    tables = all_tables(result)
    if name not in tables:
        raise Http404()
    filename = downloads.export_info(shown).filename(name, fmt)
    if fmt == "csv":
        response = attachment(table_csv(result, name, tables[name]), filename, "text/csv")
    else:
        response = attachment(table_xlsx(result, {name: tables[name]}), filename, XLSX)
    if as_of is not None:
        response["X-Analysis-As-Of"] = as_of.isoformat()
    return response


def _zip_or_progress(request: HttpRequest, slug: str, want: str, what: str):
    """(the ZIP's bytes, the analysis they are of) when ready, else the 202 progress page
    that fetches `want` (WITH_THE_ZIP) when the worker has built it. PIs of the study only."""
    study, _, analysis = _analysis(request, slug)
    body = analysis.lookup("zip")
    pinned = request.GET.get("v", "")[:64]
    if body is None and pinned:  # the progress page found this version's ZIP ready
        older = StudyAnalysis(study, analysis.settings, version=pinned)
        body = older.lookup("zip")
        if body is not None:
            return body, older
    if body is not None:
        return body, analysis
    job = preparation.prepare(analysis, requested_by=request.user)
    if analysis.has("result") and analysis.result.accuracy.empty:
        raise Http404("Nothing to analyse.")
    body = analysis.lookup("zip")  # an immediate backend has just built it
    if body is None and not django_settings.ANALYSIS_PREPARE_DOWNLOADS:
        body = downloads.build_zip(analysis)  # switched off: built on request, as asked
    if body is not None:
        return body, analysis
    return _preparing(request, study, analysis, job, want, what)


@login_required
@require_GET
def export_zip(request: HttpRequest, slug: str) -> HttpResponse:
    """Everything export_analysis writes, as one zip, prepared by a worker: served when
    ready, else a page with the preparation's progress that fetches it when done."""
    made = _zip_or_progress(request, slug, "zip", "")
    if isinstance(made, HttpResponse):
        return made
    body, analysis = made
    filename = downloads.export_info(analysis).filename("analysis", "zip")
    return attachment(body, filename, "application/zip")


@login_required
@require_GET
def report_xlsx(request: HttpRequest, slug: str) -> HttpResponse:
    """The XLSX report alone (every table as a sheet, after the settings and about sheets):
    the ZIP's own report.xlsx, the same bytes, ready and refused exactly when the ZIP is."""
    made = _zip_or_progress(request, slug, "report", "the XLSX report")
    if isinstance(made, HttpResponse):
        return made
    body, analysis = made
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        report = archive.read("report.xlsx")
    return attachment(report, downloads.export_info(analysis).filename("report", "xlsx"), XLSX)
