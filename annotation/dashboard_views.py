"""The PI dashboard: reader and expert progress, flagged questions, members, audit, CSVs."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation import dashboard
from annotation.exports import feedback_csv, reviews_csv
from annotation.reviews import audit_visible_to, reviews_hidden_from
from annotation.sessions import counted_scope
from readerstudy.forms import MembershipForm
from readerstudy.jobs import jobs_of_study
from readerstudy.models import Membership, Role
from readerstudy.platform.downloads import attachment, content_version, export_filename
from readerstudy.selectors import design_sentence, roles_of, study_for_user


def _pi_study(request: HttpRequest, slug: str):
    return study_for_user(request.user, slug, [Role.PI])


@login_required
@require_GET
def study_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    study = _pi_study(request, slug)
    flagged, flag_totals = dashboard.flagged_items(study, viewer=request.user)
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "readers": dashboard.reader_rows(study),
        "sessions": dashboard.session_rows(study) if study.designed else [],
        "design": design_sentence(study),
        "experts": dashboard.expert_rows(study),
        "flagged": flagged,
        "flag_totals": flag_totals,
        "reviews_hidden": reviews_hidden_from(study, request.user),
        "counted_scope": counted_scope(study),  # whose "does not fit" counts (two arms)
        "members": Membership.objects.filter(study=study).select_related("user"),
        "membership_form": MembershipForm(),
        "audit": audit_visible_to(study, request.user).select_related("actor")[:20],
        "excluded": study.items.filter(excluded=True).count(),
        "jobs": jobs_of_study(study),
        "fast_answer_ms": settings.FAST_ANSWER_MS,
    }
    return render(request, "annotation/dashboard.html", context)


@login_required
@require_GET
def export_reviews(request: HttpRequest, slug: str) -> HttpResponse:
    study = _pi_study(request, slug)
    csv = reviews_csv(study, viewer=request.user)
    name = export_filename(study.slug, "reviews", "csv", version=content_version(csv))
    return attachment(csv, name, "text/csv")


@login_required
@require_GET
def export_feedback(request: HttpRequest, slug: str) -> HttpResponse:
    study = _pi_study(request, slug)
    csv = feedback_csv(study)
    name = export_filename(study.slug, "reader-feedback", "csv", version=content_version(csv))
    return attachment(csv, name, "text/csv")
