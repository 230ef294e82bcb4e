"""Expert page: the structured review of one question (the queue is analysis.triage_views).

Experts and PIs of the study see the truth, explanation and report here; readers never reach
these views (study_for_user with expert/PI roles only).
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.correction_forms import CorrectionForm
from annotation.correction_selectors import (
    earlier_words_answers,
    item_proposals,
    rule_of,
    version_rows,
)
from annotation.corrections import CorrectionRefused, review_with_correction_submit
from annotation.models import ExpertReview
from annotation.review_forms import ReviewForm
from annotation.reviews import (
    REVIEWERS,
    ReviewRejected,
    reader_feedback,
    reviews_visible_to,
)
from annotation.selectors import case_images
from readerstudy.keys import current_versions
from readerstudy.models import Role, StudyQuestion
from readerstudy.platform.http import wants_json
from readerstudy.platform.links import site_link
from readerstudy.selectors import roles_of, study_for_user
from readerstudy.vocabulary import (
    CORRECTION_PAGE_KEYS,
    PROBLEM_DECISIONS,
    REVIEW_DEFAULTS,
    REVIEW_DEFAULTS_KEY,
    REVIEW_PROBLEM_DEFAULTS,
    Decision,
)


@login_required
@require_http_methods(["GET", "POST"])
def review_question(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    study = study_for_user(request.user, slug, REVIEWERS)
    item = get_object_or_404(
        StudyQuestion.objects.select_related("question__case", "excluded_by"),
        id=item_id,
        study=study,
    )
    roles = roles_of(request.user, study)
    can_review = Role.EXPERT in roles
    mine = ExpertReview.objects.filter(item=item, expert=request.user).first()
    current = current_versions([item.question_id])[item.question_id]
    form = ReviewForm(request.POST or None, initial=ReviewForm.initial_from(mine))
    fix = CorrectionForm(request.POST or None, current=current)
    if request.method == "POST":
        if not can_review:
            raise Http404("Only the study's experts review questions.")
        if form.is_valid():
            data = form.cleaned_data
            try:
                correction = _correction(fix) if data["decision"] == Decision.REVISE else None
                review_with_correction_submit(
                    expert=request.user,
                    item=item,
                    review={
                        "flags": data["flags"],
                        "other_text": data["other_text"],
                        "ratings": form.ratings(),
                        "difficulty": data["difficulty"],
                        "decision": data["decision"],
                        "comment": data["comment"],
                    },
                    correction=correction,
                )
            except (ReviewRejected, CorrectionRefused) as exc:
                form.add_error(None, str(exc))
            else:
                saved = f"Review of {item.question.source_id} saved."
                if correction:
                    saved = f"Review and proposed correction of {item.question.source_id} saved."
                if wants_json(request):
                    # The page's script shows the next question it fetched ahead (expert.js).
                    return JsonResponse({"saved": item.id, "message": saved})
                messages.success(request, saved)
                # The queue's order uses AI predictions (a layer up): it picks the next.
                return redirect(site_link("expert-next", slug) or site_link("home"))
        if wants_json(request):  # the script sends the form again as a page, to show why
            return JsonResponse({"errors": form.errors.get_json_data()}, status=422)
    others = (
        reviews_visible_to(study, request.user)
        .filter(item=item)
        .exclude(expert=request.user)
        .select_related("expert")
    )
    case = item.question.case
    proposals, proposals_hidden = item_proposals(item, request.user)
    context = {
        "study": study,
        "item": item,
        "question": item.question,
        "case": case,
        "images": case_images(case.id),
        "feedback": reader_feedback(item),
        "form": form,
        "mine": mine,
        "others": list(others),
        "can_review": can_review,
        "roles": roles,
        "defaults_json": json.dumps(REVIEW_DEFAULTS),
        "problem_defaults_json": json.dumps(REVIEW_PROBLEM_DEFAULTS),
        "problem_decisions_json": json.dumps(list(PROBLEM_DECISIONS)),
        "defaults_key": REVIEW_DEFAULTS_KEY,
        "current": current,
        "original_key": item.question.correct,
        "fix": fix,
        "correction_keys": CORRECTION_PAGE_KEYS,
        "proposals": proposals,
        "proposals_hidden": proposals_hidden,
        "versions": version_rows(item),
        "rule": rule_of(study),
        "earlier_words": earlier_words_answers(study, [item.question_id]).get(item.question_id, 0),
    }
    return render(request, "annotation/expert_review.html", context)


def _correction(fix: CorrectionForm) -> dict | None:
    """The proposal a "Revise" carries, or None when the expert changed nothing and named no
    error (a revise without a correction); a bad field is refused in words."""
    if not fix.proposes():
        return None
    if not fix.is_valid():
        problems = "; ".join(
            f"{fix[name].label if name in fix.fields else 'Correction'}: {' '.join(errors)}"
            for name, errors in fix.errors.items()
        )
        raise CorrectionRefused(f"The correction is not complete: {problems}")
    data = fix.cleaned_data
    return {
        "base": data["base"],
        "error_type": data["error_type"],
        "values": fix.values(),
        "note": data["note"],
    }
