"""The PI's analysis page and its downloads. PIs of the study only."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from tempfile import TemporaryDirectory

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from analysis.exports import kappa_slug, write_analysis
from analysis.forms import AnalysisSettingsForm
from analysis.pipeline import analyse
from analysis.selectors import readers_not_started, study_responses
from analysis.stats import plots
from readerstudy.downloads import attachment
from readerstudy.models import Role
from readerstudy.selectors import roles_of, study_for_user


def _result(request: HttpRequest, slug: str):
    study = study_for_user(request.user, slug, [Role.PI])
    form = AnalysisSettingsForm(request.GET or None)
    return study, form, analyse(study_responses(study), form.settings())


def _accuracy_grid(frame) -> tuple[list[str], list[dict]]:
    """Raters as rows, tasks as columns (the paper's table layout)."""
    if frame.empty:
        return [], []
    tasks = list(dict.fromkeys(frame["task"]))
    rows = []
    for rater, part in frame.groupby("rater", sort=False):
        cells = part.set_index("task")
        rows.append(
            {
                "rater": rater,
                "cells": [
                    _table_rows(cells.loc[[t]])[0] if t in cells.index else None for t in tasks
                ],
            }
        )
    return tasks, rows


def _table_rows(frame):
    return [
        {k: (None if v != v else v) for k, v in row.items()}  # NaN -> None for templates
        for row in frame.to_dict("records")
    ]


@login_required
@require_GET
def analysis_page(request: HttpRequest, slug: str) -> HttpResponse:
    study, form, result = _result(request, slug)
    query = request.GET.urlencode()
    kappas = {
        name: {"slug": kappa_slug(name), "matrix": matrix.round(2).to_dict("split")}
        for name, matrix in result.kappas.items()
    }
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "form": form,
        "result": result,
        "accuracy": _table_rows(result.accuracy),
        "grid": _accuracy_grid(result.accuracy),
        "ai_vs_readers": _table_rows(result.ai_vs_readers),
        "failed": _table_rows(result.failed),
        "kappas": kappas,
        "query": query,
        "not_started": readers_not_started(study),
        "excluded_count": int(result.responses.drop_duplicates("question_id")["excluded"].sum())
        if not result.responses.empty
        else 0,
    }
    return render(request, "analysis/analysis.html", context)


FIGURES = {"accuracy", "kappa"}
TABLES = {"accuracy", "accuracy_by_category", "ai_vs_readers", "responses"}


@login_required
@require_GET
def figure_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    if fmt not in plots.FORMATS:
        raise Http404()
    study, _, result = _result(request, slug)
    note = result.settings.describe()
    if name == "accuracy" and not result.accuracy.empty:
        figure = plots.accuracy_figure(result.accuracy, note=note)
    elif name == "kappa" and result.kappas:
        figure = plots.kappa_figure(
            result.kappas, scale=result.settings.scale, vrange=result.settings.vrange, note=note
        )
    else:
        raise Http404()
    body = plots.figure_bytes(figure, fmt)
    if "download" in request.GET:
        return attachment(body, f"{study.slug}-{name}.{fmt}", plots.FORMATS[fmt])
    return HttpResponse(body, content_type=plots.FORMATS[fmt])


@login_required
@require_GET
def table_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    study, _, result = _result(request, slug)
    frames = {
        "accuracy": result.accuracy,
        "accuracy_by_category": result.accuracy_by_category,
        "ai_vs_readers": result.ai_vs_readers,
        "responses": result.responses,
        **{f"kappa_{kappa_slug(k)}": m for k, m in result.kappas.items()},
    }
    if name not in frames:
        raise Http404()
    frame = frames[name]
    index = name.startswith("kappa_")
    if fmt == "csv":
        body = frame.to_csv(index=index, index_label="rater" if index else None).encode()
        content_type = "text/csv"
    elif fmt == "xlsx":
        buffer = io.BytesIO()
        frame.to_excel(buffer, index=index, sheet_name=name[:31])
        body = buffer.getvalue()
        content_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    else:
        raise Http404()
    return attachment(body, f"{study.slug}-{name}.{fmt}", content_type)


@login_required
@require_GET
def export_zip(request: HttpRequest, slug: str) -> HttpResponse:
    """Everything export_analysis writes, as one zip."""
    study, _, result = _result(request, slug)
    if result.accuracy.empty:
        raise Http404("Nothing to analyse.")
    buffer = io.BytesIO()
    with TemporaryDirectory() as tmp:
        written = write_analysis(result, Path(tmp))
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in written:
                archive.write(path, arcname=path.name)
    return attachment(buffer.getvalue(), f"{study.slug}-analysis.zip", "application/zip")
