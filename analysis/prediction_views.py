"""AI predictions from the browser (PIs): upload, preview, confirm.

The upload is stored and previewed (`analysis.prediction_preview`: rows, questions matched,
failed extractions, every study whose results change); nothing is written until the PI
confirms. The confirmation carries a signed token naming the study, the PI, the stored file
and its SHA-256, so a preview of another study, of another person, or of a file changed
since is refused. The import is the one the API and the command line run, all or nothing.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from analysis.prediction_preview import (
    PREVIEW_MAX_AGE,
    predictions_preview,
    preview_confirm,
    upload_store,
)
from analysis.services import PredictionForbidden, PredictionImportError
from readerstudy.http import declared_size_over
from readerstudy.models import ReaderStudy, Role
from readerstudy.selectors import roles_of, study_for_user

SALT = "analysis.predictions.preview"
# Room for the form's other fields and the multipart boundaries around the file.
MULTIPART_SLACK = 64 * 1024


class PredictionUploadForm(forms.Form):
    model = forms.CharField(max_length=200, label="Model name")
    file = forms.FileField(
        label="Predictions file",
        help_text="CSV (question_id,prediction[,raw_response]) or ReXVQA inference JSON, UTF-8.",
    )
    replace = forms.BooleanField(required=False, label="Replace this model's predictions")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.PREDICTION_UPLOAD_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"File too large ({upload.size} bytes; the limit is {limit})."
            )
        return upload


def _page(request, study: ReaderStudy, status: int = 200, **context) -> HttpResponse:
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "form": context.pop("form", None) or PredictionUploadForm(),
        **context,
    }
    return render(request, "analysis/predictions.html", context, status=status)


def too_large(request: HttpRequest) -> int | None:
    """The declared size of a request body too large to hold a file within the limit."""
    return declared_size_over(request, settings.PREDICTION_UPLOAD_MAX_BYTES + MULTIPART_SLACK)


@login_required
@csrf_exempt  # only until the size is checked: CSRF is checked before the body is read
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the form. POST: store the file and show what confirming it would do.

    A body declared larger than the limit is refused before it is read: Django would stream
    a file of any size to a temporary file (and CSRF's check reads the body) before the
    form could say it is too large."""
    study = study_for_user(request.user, slug, [Role.PI])
    if request.method == "POST" and (size := too_large(request)):
        limit = settings.PREDICTION_UPLOAD_MAX_BYTES
        return _page(
            request,
            study,
            413,
            error=f"File too large ({size} bytes sent; the limit is {limit}). Nothing was read.",
        )
    return _upload(request, study)


@csrf_protect
def _upload(request: HttpRequest, study: ReaderStudy) -> HttpResponse:
    if request.method == "GET":
        return _page(request, study)
    form = PredictionUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, study, 400, form=form)
    data = form.cleaned_data
    content = data["file"].read()
    try:
        preview = predictions_preview(
            dataset=study.dataset,
            model_name=data["model"],
            content=content,
            replace=data["replace"],
            actor=request.user,
            through=study,
        )
    except PredictionForbidden as exc:
        return _page(request, study, 403, form=form, error=str(exc))
    except PredictionImportError as exc:
        return _page(request, study, 400, form=form, error=f"Nothing was imported. {exc}")
    token = ""
    if preview.importable:
        path, digest = upload_store(content, data["file"].name)
        token = signing.dumps(
            {
                "study": study.pk,
                "user": request.user.pk,
                "file": path,
                "sha256": digest,
                "name": data["file"].name[:500],
                "model": preview.model,
                "replace": data["replace"],
                "state": preview.model_state,
            },
            salt=SALT,
        )
    return _page(request, study, form=form, preview=preview, token=token)


@login_required
@require_POST
def confirm(request: HttpRequest, slug: str) -> HttpResponse:
    """Import the previewed file, all or nothing; a stale or foreign preview is refused."""
    study = study_for_user(request.user, slug, [Role.PI])
    try:
        claim = signing.loads(request.POST.get("token", ""), salt=SALT, max_age=PREVIEW_MAX_AGE)
    except signing.SignatureExpired:
        return _page(request, study, 400, error="This preview has expired: upload the file again.")
    except signing.BadSignature:
        return _page(request, study, 400, error="This preview is not valid: upload the file again.")
    if claim["study"] != study.pk or claim["user"] != request.user.pk:
        return _page(
            request,
            study,
            400,
            error="This preview belongs to another study or person: upload the file here.",
        )
    try:
        summary = preview_confirm(
            dataset=study.dataset, claim=claim, actor=request.user, through=study
        )
    except PredictionForbidden as exc:
        return _page(request, study, 403, error=str(exc))
    except PredictionImportError as exc:  # the preview no longer holds: upload again
        return _page(request, study, 400, error=f"Nothing was imported. {exc}")
    changed = ", ".join(summary.studies) or "none"
    messages.success(
        request,
        f"Imported {summary.predictions} predictions of “{summary.model}” "
        f"({summary.failed_extractions} failed extraction{pluralize(summary.failed_extractions)}"
        f"{f', {summary.replaced} replaced' if summary.replaced else ''}). "
        f"Studies whose results changed: {changed}.",
    )
    return redirect("analysis", slug=study.slug)
