"""Core API: a study's questions with their truth, for experts and PIs."""

from __future__ import annotations

import django_filters
from rest_framework.generics import ListAPIView

from readerstudy.keys import current_versions
from readerstudy.models import Role, StudyQuestion, Task
from readerstudy.selectors import study_for_user
from readerstudy.serializers import ExpertQuestionSerializer


class QuestionFilter(django_filters.FilterSet):
    task = django_filters.ChoiceFilter(field_name="question__task", choices=Task.choices)
    excluded = django_filters.BooleanFilter()

    class Meta:
        model = StudyQuestion
        fields = ["task", "excluded"]


class ExpertQuestionList(ListAPIView):
    """Questions with correct answer, explanation and report: experts and PIs only."""

    serializer_class = ExpertQuestionSerializer
    filterset_class = QuestionFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return StudyQuestion.objects.none()
        study = study_for_user(self.request.user, self.kwargs["slug"], [Role.EXPERT, Role.PI])
        return (
            StudyQuestion.objects.filter(study=study)
            .select_related("question__case")
            .order_by("position")
        )

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        context = {
            **self.get_serializer_context(),
            "current_versions": current_versions([item.question_id for item in page]),
        }
        data = self.get_serializer_class()(page, many=True, context=context).data
        return self.get_paginated_response(data)
