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

from annotation.models import ExpertReview
from annotation.review_forms import ReviewForm
from annotation.reviews import (
    REVIEWERS,
    ReviewRejected,
    reader_feedback,
    review_submit,
    reviews_visible_to,
)
from annotation.selectors import case_images
from readerstudy.http import wants_json
from readerstudy.links import site_link
from readerstudy.models import Role, StudyQuestion
from readerstudy.selectors import roles_of, study_for_user
from readerstudy.vocabulary import (
    PROBLEM_DECISIONS,
    REVIEW_DEFAULTS,
    REVIEW_DEFAULTS_KEY,
    REVIEW_PROBLEM_DEFAULTS,
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
    form = ReviewForm(request.POST or None, initial=ReviewForm.initial_from(mine))
    if request.method == "POST":
        if not can_review:
            raise Http404("Only the study's experts review questions.")
        if form.is_valid():
            data = form.cleaned_data
            try:
                review_submit(
                    expert=request.user,
                    item=item,
                    flags=data["flags"],
                    other_text=data["other_text"],
                    ratings=form.ratings(),
                    difficulty=data["difficulty"],
                    decision=data["decision"],
                    comment=data["comment"],
                )
            except ReviewRejected as exc:
                form.add_error(None, str(exc))
            else:
                saved = f"Review of {item.question.source_id} saved."
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
    }
    return render(request, "annotation/expert_review.html", context)
