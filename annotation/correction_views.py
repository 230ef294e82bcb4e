"""The study's corrections: the list (and its rule, set by a PI), one proposal's page (vote,
decide, withdraw), reversing a decision, and the corrected bank's downloads.

Experts and PIs of the study only, through study_for_user: a reader, an outsider, an expert
of another study get 404, and someone who reads any of the study's X-rays blind 403
(readerstudy.blinding), like every expert and PI page. A colleague's proposal follows the
review rule (annotation.corrections.may_see_proposal): not yours to see yet is 404.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.correction_forms import DecisionForm, RuleForm
from annotation.correction_models import Correction
from annotation.correction_selectors import (
    changes_of,
    earlier_words_answers,
    open_counts,
    proposal_rows,
    proposals_visible_to,
    rule_of,
)
from annotation.corrections import (
    CorrectionRefused,
    adjudication_rule_set,
    correction_decide,
    correction_vote,
    correction_withdraw,
    reversal_propose,
)
from annotation.reviews import REVIEWERS
from readerstudy import bank_export
from readerstudy.keys import KeyBook
from readerstudy.models import Role
from readerstudy.platform.downloads import attachment, content_version, export_filename
from readerstudy.platform.spreadsheets import XLSX
from readerstudy.question_versions import QuestionVersion
from readerstudy.selectors import roles_of, study_for_user
from readerstudy.vocabulary import PROPOSAL_SHORTCUTS, AdjudicationRule, ProposalStatus


@login_required
@require_http_methods(["GET", "POST"])
def corrections(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_user(request.user, slug, REVIEWERS)
    roles = roles_of(request.user, study)
    form = RuleForm(
        request.POST or None,
        initial={"rule": study.adjudication, "votes": study.adjudication_votes},
    )
    if request.method == "POST":
        if Role.PI not in roles:
            raise Http404("Only the study's PIs set the rule.")
        if form.is_valid():
            try:
                adjudication_rule_set(
                    pi=request.user,
                    study=study,
                    rule=form.cleaned_data["rule"],
                    votes=form.cleaned_data["votes"] or study.adjudication_votes,
                )
            except CorrectionRefused as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Proposals are now decided by {rule_of(study)}.")
                return redirect("corrections", slug=slug)
    visible = (
        proposals_visible_to(study, request.user)
        .select_related("item__question", "proposer", "base", "version", "decided_by")
        .order_by("-created_at")
    )
    rows = proposal_rows(study, request.user, visible)
    open_rows = [r for r in rows if r.correction.is_open]
    counts = open_counts(study)
    hidden = sum(counts.values()) - len(open_rows)
    versions = (
        QuestionVersion.objects.filter(study=study)
        .select_related("question", "decided_by", "reverses")
        .order_by("-created_at")
    )
    earlier = earlier_words_answers(study)
    versions = list(versions)
    book = KeyBook.of({v.question_id for v in versions})
    context = {
        "study": study,
        "roles": roles,
        "form": form,
        "rule": rule_of(study),
        "open_rows": open_rows,
        "decided_rows": [r for r in rows if not r.correction.is_open],
        "hidden": hidden,
        "versions": [(v, _changes(book, v), earlier.get(v.question_id, 0)) for v in versions],
        "earlier_total": sum(earlier.values()),
        "can_set_rule": Role.PI in roles,
        "experts_rule": AdjudicationRule.EXPERTS,
    }
    return render(request, "annotation/corrections.html", context)


def _changes(book: KeyBook, version: QuestionVersion):
    """What `version` changed against the one before it, in words."""
    old = book.version(version.question_id, version.number - 1).content()
    new = version.content()
    return changes_of(old, {name: value for name, value in new.items() if old[name] != value})


def _visible(request: HttpRequest, study, correction_id: int) -> Correction:
    return get_object_or_404(
        proposals_visible_to(study, request.user).select_related(
            "item__question", "item__study", "proposer", "base", "version", "decided_by"
        ),
        pk=correction_id,
    )


@login_required
@require_http_methods(["GET", "POST"])
def correction(request: HttpRequest, slug: str, correction_id: int) -> HttpResponse:
    """One proposal: its changes, votes and standing; Agree/Disagree for an expert, Accept/
    Reject for a PI under the PI's rule (keys `a`/`r`), Withdraw for its proposer."""
    study = study_for_user(request.user, slug, REVIEWERS)
    found = _visible(request, study, correction_id)
    form = DecisionForm(request.POST or None)
    if request.method == "POST":
        row = proposal_rows(study, request.user, [found])[0]
        choice = request.POST.get("choice", "")
        note = request.POST.get("note", "")[:10_000]
        try:
            if choice == "withdraw":
                correction_withdraw(user=request.user, correction=found)
                said = "Proposal withdrawn."
            elif choice not in ("yes", "no"):
                raise CorrectionRefused("Choose yes or no.")
            elif row.can_decide:
                correction_decide(
                    pi=request.user, correction=found, accept=choice == "yes", note=note
                )
                said = (
                    "Accepted: the question has a new version." if choice == "yes" else "Rejected."
                )
            else:
                correction_vote(
                    voter=request.user, correction=found, agree=choice == "yes", note=note
                )
                said = "Your vote is recorded."
        except CorrectionRefused as exc:
            messages.error(request, str(exc))
        else:
            found.refresh_from_db()
            if found.status == ProposalStatus.ACCEPTED and choice != "withdraw":
                question = found.item.question.source_id
                said = f"Accepted: {question} is now at version {found.version.number}."
            messages.success(request, said)
        return redirect("correction", slug=slug, correction_id=found.pk)
    row = proposal_rows(study, request.user, [found])[0]
    context = {
        "study": study,
        "roles": roles_of(request.user, study),
        "row": row,
        "item": found.item,
        "rule": rule_of(study),
        "keys": PROPOSAL_SHORTCUTS,
        "form": form,
    }
    return render(request, "annotation/correction.html", context)


@login_required
@require_POST
def version_reverse(request: HttpRequest, slug: str, version_id: int) -> HttpResponse:
    """Propose reversing the decision that made a version (a PI under the PI's rule: done)."""
    study = study_for_user(request.user, slug, REVIEWERS)
    version = get_object_or_404(QuestionVersion, pk=version_id, study=study)
    item = study.items.filter(question_id=version.question_id).first()
    try:
        made = reversal_propose(
            user=request.user, study=study, version=version, note=request.POST.get("note", "")
        )
    except CorrectionRefused as exc:
        messages.error(request, str(exc))
    else:
        if made.version_id:
            messages.success(
                request, f"Reversed: version {made.version.number} undoes version {version.number}."
            )
        else:
            messages.success(request, f"Reversal of version {version.number} proposed.")
    if item is None:
        return redirect("corrections", slug=slug)
    return redirect("expert-review", slug=slug, item_id=item.pk)


FORMATS = {
    "json": ("bank.json", bank_export.bank_json, "application/json"),
    "csv": ("bank.csv", bank_export.bank_csv, "text/csv"),
    "xlsx": ("bank.xlsx", bank_export.bank_xlsx, XLSX),
    "changelog": ("changelog.csv", bank_export.changelog_csv, "text/csv"),
}


@login_required
@require_GET
def bank_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """The study's questions at their current version (bank.json/csv/xlsx), the changelog, or
    all of them with a README in a ZIP."""
    study = study_for_user(request.user, slug, REVIEWERS)
    bank = bank_export.study_bank(study)
    if fmt == "zip":
        body = bank_export.bank_zip(study, bank)
        name = export_filename(
            study.slug, "bank", "zip", version=content_version(bank_export.bank_json(bank))
        )
        return attachment(body, name, "application/zip")
    if fmt not in FORMATS:
        raise Http404("Formats: json, csv, xlsx, changelog, zip.")
    stem, build, content_type = FORMATS[fmt]
    body = build(bank)
    base, ext = stem.rsplit(".", 1)
    name = export_filename(study.slug, base, ext, version=content_version(body))
    return attachment(body, name, content_type)
