"""AI predictions from the browser (PIs): upload, preview, confirm.

The upload is stored and previewed (`readerstudy.predictions.preview`: rows, questions matched,
failed extractions and their rows, every problem of the file, every study whose results
change); nothing is written until the PI confirms. The confirmation carries a signed token
naming the study (or, for a dataset's upload, the dataset), the PI, the stored file and its
SHA-256, so a preview of another study, of another person, or of a file changed since is
refused. The import is the one the API and the command line run, all or nothing.

Two ways in: through a study (its analysis page), or into a dataset before any study shows the
model (the new-study form's aid model: "upload its predictions first"), for whoever may create
studies. Either way the uploader must be a PI of every study the upload changes.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from readerstudy.models import Dataset, ReaderStudy, Role
from readerstudy.platform.http import declared_size_over
from readerstudy.platform.links import site_link
from readerstudy.predictions.preview import (
    PREVIEW_MAX_AGE,
    predictions_preview,
    preview_confirm,
    upload_store,
)
from readerstudy.predictions.services import PredictionForbidden, PredictionImportError
from readerstudy.selectors import roles_of, study_for_user

SALT = "predictions.preview"
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


class DatasetPredictionUploadForm(PredictionUploadForm):
    """The same upload into a dataset chosen here (no study shows the model yet)."""

    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.order_by("name"),
        help_text="Predictions belong to a dataset: every study of it may then show the model.",
    )
    field_order = ["dataset", "model", "file", "replace"]


CREATE = "readerstudy.add_readerstudy"  # who may upload into a dataset: who may create studies


def _page(request, study: ReaderStudy | None, status: int = 200, **context) -> HttpResponse:
    if study is None:
        form = context.pop("form", None) or DatasetPredictionUploadForm(initial=_initial(request))
        context = {
            "study": None,
            "form": form,
            "action": reverse("dataset-predictions"),
            "confirm_action": reverse("dataset-predictions-confirm"),
            **context,
        }
    else:
        context = {
            "study": study,
            "roles": roles_of(request.user, study),
            "form": context.pop("form", None) or PredictionUploadForm(),
            "action": reverse("study-predictions", args=[study.slug]),
            "confirm_action": reverse("study-predictions-confirm", args=[study.slug]),
            **context,
        }
    return render(request, "predictions/upload.html", context, status=status)


def _initial(request: HttpRequest) -> dict:
    """The dataset the new-study form had chosen (?dataset=ID), if any."""
    value = request.GET.get("dataset", "")
    return {"dataset": int(value)} if value.isdigit() and len(value) < 12 else {}


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


@login_required
@permission_required(CREATE, raise_exception=True)
@csrf_exempt  # only until the size is checked, as `upload`
@require_http_methods(["GET", "POST"])
def dataset_upload(request: HttpRequest) -> HttpResponse:
    """GET: the form (a dataset, a model, a file). POST: store the file and preview it."""
    if request.method == "POST" and (size := too_large(request)):
        limit = settings.PREDICTION_UPLOAD_MAX_BYTES
        return _page(
            request,
            None,
            413,
            error=f"File too large ({size} bytes sent; the limit is {limit}). Nothing was read.",
        )
    return _upload(request, None)


@csrf_protect
def _upload(request: HttpRequest, study: ReaderStudy | None) -> HttpResponse:
    if request.method == "GET":
        return _page(request, study)
    form_class = PredictionUploadForm if study is not None else DatasetPredictionUploadForm
    form = form_class(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, study, 400, form=form)
    data = form.cleaned_data
    dataset = study.dataset if study is not None else data["dataset"]
    content = data["file"].read()
    try:
        preview = predictions_preview(
            dataset=dataset,
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
                "study": study.pk if study is not None else None,
                "dataset": dataset.pk,
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
    outcome = _confirm(request, study, study.dataset_id)
    if isinstance(outcome, HttpResponse):
        return outcome
    return redirect(site_link("analysis", study.slug))


@login_required
@permission_required(CREATE, raise_exception=True)
@require_POST
def dataset_confirm(request: HttpRequest) -> HttpResponse:
    """Import a dataset upload's preview; then back to the new-study form, the model offered
    as the aid model of the dataset."""
    outcome = _confirm(request, None, None)
    if isinstance(outcome, HttpResponse):
        return outcome
    query = urlencode({"dataset": outcome[1], "aid_model": outcome[0].model})
    return redirect(f"{reverse('study-create')}?{query}")


def _confirm(request: HttpRequest, study: ReaderStudy | None, dataset_id: int | None):
    """The import of a signed preview: (summary, dataset id), or the page saying why not."""
    try:
        claim = signing.loads(request.POST.get("token", ""), salt=SALT, max_age=PREVIEW_MAX_AGE)
    except signing.SignatureExpired:
        return _page(request, study, 400, error="This preview has expired: upload the file again.")
    except signing.BadSignature:
        return _page(request, study, 400, error="This preview is not valid: upload the file again.")
    here = study.pk if study is not None else None
    if claim.get("study") != here or claim["user"] != request.user.pk:
        return _page(
            request,
            study,
            400,
            error="This preview belongs to another study or person: upload the file here.",
        )
    dataset = Dataset.objects.filter(pk=dataset_id or claim.get("dataset")).first()
    if dataset is None:
        return _page(request, study, 400, error="This preview's dataset is gone.")
    try:
        summary = preview_confirm(dataset=dataset, claim=claim, actor=request.user, through=study)
    except PredictionForbidden as exc:
        return _page(request, study, 403, error=str(exc))
    except PredictionImportError as exc:  # the preview no longer holds: upload again
        return _page(request, study, 400, error=f"Nothing was imported. {exc}")
    changed = ", ".join(summary.studies) or "none"
    messages.success(
        request,
        f"Imported {summary.predictions} predictions of “{summary.model}” "
        f"({summary.failed_extractions} failed extraction{pluralize(summary.failed_extractions)}"
        f"{f', {summary.replaced} replaced' if summary.replaced else ''}) into the dataset "
        f"{dataset.name}. Studies whose results changed: {changed}.",
    )
    return summary, dataset.pk
