"""Expert triage pages: the ranked review queue, "next question", and the item analysis.

Experts and PIs of the study only (they see the truth anyway; readers never reach these).
The review page itself, and the review service, stay in annotation.
"""

from __future__ import annotations

import io

import pandas as pd
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from analysis.agreement import expert_agreement
from analysis.cache import data_version
from analysis.pipeline import records
from analysis.triage import (
    ITEM_COLUMNS,
    next_to_review,
    question_evidence,
    readers_scope,
    study_item_analysis,
    triage_queue,
)
from annotation.correction_selectors import open_counts, proposal_rows, proposals_visible_to
from annotation.reviews import REVIEWERS, may_see_others
from readerstudy.keys import current_versions
from readerstudy.models import Role
from readerstudy.platform.downloads import attachment, export_filename
from readerstudy.platform.spreadsheets import XLSX, frame_csv, write_sheet, xlsx_writer
from readerstudy.selectors import roles_of, study_for_user

TEXT_COLUMNS = {"question_id", "task", "key", "modal_wrong"}


@login_required
@require_GET
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_user(request.user, slug, REVIEWERS)
    rows = triage_queue(study, request.user)
    roles = roles_of(request.user, study)
    seen = may_see_others(study, request.user)
    context = {
        "study": study,
        "roles": roles,
        "rows": rows,
        "reviewed": sum(r.reviewed_by_me for r in rows),
        "agreement": expert_agreement(study, request.user),
        "agreement_scope": None if seen is True else len(seen),
        "can_review": Role.EXPERT in roles,
        "show_who": show_who(roles),
        "readers_scope": readers_scope(study),
        "corrections": corrections_by_item(study, request.user, [r.item for r in rows], seen),
    }
    return render(request, "analysis/expert_queue.html", context)


def corrections_by_item(study, user, items, seen=None) -> dict[int, dict]:
    """item id -> what the queue and the evidence panel say of its corrections: the open
    proposals `user` may read (the review rule), how many more are open, and the version the
    question is at when it was corrected."""
    counts = open_counts(study)
    visible = proposals_visible_to(study, user, seen).filter(
        status="open", item__in=[item.pk for item in items]
    )
    rows = proposal_rows(study, user, visible.select_related("base", "proposer"))
    versions = current_versions([item.question_id for item in items])
    out: dict[int, dict] = {}
    for item in items:
        mine = [r for r in rows if r.correction.item_id == item.pk]
        version = versions[item.question_id]
        if counts.get(item.pk) or version.number > 1:
            out[item.pk] = {
                "open": mine,
                "hidden": counts.get(item.pk, 0) - len(mine),
                "version": version,
            }
    return out


def show_who(roles) -> bool:
    """Who chose what: never to someone who also reads in this study (blinding)."""
    return Role.READER not in roles


@login_required
@require_GET
@vary_on_headers("HX-Request")  # the panel for htmx, a page for a plain link
def evidence(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """The review page's evidence panel (annotation's page loads it through SITE_LINKS: the
    answers of AI models live here): option shares, key vs most chosen, why the question
    ranks where it does, who chose what. Experts and PIs of the study only, like the queue."""
    study = study_for_user(request.user, slug, REVIEWERS)
    row = question_evidence(study, request.user, item_id)
    if row is None:
        raise Http404("No such question in this study.")
    context = {
        "study": study,
        "row": row,
        "total": study.items.count(),
        "show_who": show_who(roles_of(request.user, study)),
        "readers_scope": readers_scope(study),
        "corrections": corrections_by_item(study, request.user, [row.item]).get(row.item.pk),
    }
    template = "analysis/_evidence.html" if request.htmx else "analysis/evidence.html"
    return render(request, template, context)


@login_required
@require_GET
def next_question(request: HttpRequest, slug: str) -> HttpResponse:
    """Where "save and next" lands: the best-ranked question the expert has not reviewed.
    `?after=ID`: the one after question ID is saved (the review page fetches it ahead, while
    the expert reviews ID, so that Enter shows it at once)."""
    study = study_for_user(request.user, slug, REVIEWERS)
    after = request.GET.get("after", "")
    skip = int(after) if after.isdigit() and len(after) < 12 else None
    item = (
        next_to_review(study, request.user, skip=skip)
        if Role.EXPERT in roles_of(request.user, study)
        else None
    )
    if item is None:
        return redirect("expert-queue", slug=slug)
    return redirect("expert-review", slug=slug, item_id=item.id)


def sorted_items(frame: pd.DataFrame, sort: str) -> tuple[pd.DataFrame, str]:
    """Sort by one column (`-name` descending); unknown columns fall back to key suspicion."""
    column = sort.removeprefix("-")
    if column not in ITEM_COLUMNS:
        sort, column = "-key_suspicion", "key_suspicion"
    ordered = frame.sort_values(
        [column, "question_id"],
        ascending=[not sort.startswith("-"), True],
        na_position="last",
        kind="stable",
    )
    return ordered, sort


@login_required
@require_GET
def item_analysis_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_user(request.user, slug, REVIEWERS)
    frame, sort = sorted_items(study_item_analysis(study), request.GET.get("sort", ""))
    headers = []
    for name, (label, description) in ITEM_COLUMNS.items():
        active = sort.removeprefix("-") == name
        if active:  # click again to reverse
            next_sort = name if sort.startswith("-") else f"-{name}"
        else:  # numbers start high-first, text A-Z
            next_sort = name if name in TEXT_COLUMNS else f"-{name}"
        headers.append(
            {
                "name": name,
                "label": label,
                "description": description,
                "next": next_sort,
                "active": active,
                "numeric": name not in TEXT_COLUMNS and name != "excluded",
                "descending": sort.startswith("-"),
            }
        )
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "headers": headers,
        "rows": records(frame),
        "sort": sort,
        "readers_scope": readers_scope(study),
    }
    return render(request, "analysis/items.html", context)


def items_export_frame(study) -> pd.DataFrame:
    frame, _ = sorted_items(study_item_analysis(study), "-key_suspicion")
    return frame[list(ITEM_COLUMNS)]


@login_required
@require_GET
def item_analysis_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = study_for_user(request.user, slug, REVIEWERS)
    frame = items_export_frame(study)
    name = export_filename(study.slug, "item-analysis", fmt, version=data_version(study))
    if fmt == "csv":
        return attachment(frame_csv(frame).encode(), name, "text/csv")
    if fmt == "xlsx":
        buffer = io.BytesIO()
        with xlsx_writer(buffer) as xlsx:
            write_sheet(xlsx, frame, "item_analysis", index=False)
        return attachment(buffer.getvalue(), name, XLSX)
    raise Http404("Formats: csv, xlsx.")
