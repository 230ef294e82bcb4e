"""Core API: my studies, and a study's questions with their truth for experts and PIs."""

from __future__ import annotations

import django_filters
from rest_framework.generics import ListAPIView

from annotation.selectors import progress_of
from readerstudy.models import Role, StudyQuestion, Task
from readerstudy.selectors import studies_of, study_for_user
from readerstudy.serializers import ExpertQuestionSerializer, StudySerializer


class StudyList(ListAPIView):
    """The studies I belong to, with my roles and, as a reader, my progress."""

    serializer_class = StudySerializer
    filter_backends = []

    def list(self, request):
        rows = []
        for study, roles in studies_of(request.user):
            rows.append(
                {
                    "slug": study.slug,
                    "title": study.title,
                    "dataset": study.dataset.name,
                    "roles": roles,
                    "instructions": study.instructions,
                    "progress": progress_of(study, request.user) if Role.READER in roles else None,
                }
            )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


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
