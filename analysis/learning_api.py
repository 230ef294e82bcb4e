"""API: a reader's results in a study, the same debrief as the page, under the
same rule (readerstudy.results: the study's setting, then blinding by person)."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from analysis import learning
from readerstudy.models import Role
from readerstudy.results import results_refusal
from readerstudy.selectors import study_for_user

_ROW = {
    "task": serializers.CharField(),
    "n": serializers.IntegerField(),
    "correct": serializers.IntegerField(),
    "accuracy": serializers.FloatField(allow_null=True),
    "ci_low": serializers.FloatField(allow_null=True),
    "ci_high": serializers.FloatField(allow_null=True),
    "note": serializers.CharField(allow_blank=True),
    "panel_median": serializers.FloatField(allow_null=True),
    "panel_n": serializers.IntegerField(),
    "models": serializers.ListField(child=serializers.ListField()),
}
_OPTION = {
    "letter": serializers.CharField(),
    "text": serializers.CharField(),
    "share": serializers.FloatField(allow_null=True),
    "chosen_by": serializers.IntegerField(allow_null=True),
    "is_key": serializers.BooleanField(),
    "is_choice": serializers.BooleanField(),
}
_CASE = {
    "number": serializers.IntegerField(),
    "question": serializers.CharField(),
    "options": serializers.ListField(child=inline_serializer("ResultsOption", _OPTION)),
    "choice": serializers.CharField(allow_blank=True),
    "key": serializers.CharField(),
    "explanation": serializers.CharField(allow_blank=True),
    "right": serializers.BooleanField(),
    "answered_by": serializers.IntegerField(),
    "not_counted": serializers.CharField(allow_blank=True),
    "too_fast": serializers.BooleanField(),
    "ai": serializers.ListField(child=serializers.ListField()),
}


class ReaderResults(GenericAPIView):
    """Your results in a study you read: every case with your answer, the key, the
    explanation and the panel's share per option (and the AI's answers if the PI allows),
    your accuracy per task with its interval beside the panel's median. 403 with the reason
    while they are closed to you (the study's setting, or you read its X-rays blind
    elsewhere)."""

    @extend_schema(
        responses={
            200: inline_serializer(
                "ReaderResults",
                {
                    "study": serializers.CharField(),
                    "practice": serializers.BooleanField(),
                    "counting": serializers.CharField(),
                    "key_version": serializers.CharField(),
                    "accuracy": serializers.ListField(
                        child=inline_serializer("ResultsAccuracyRow", _ROW)
                    ),
                    "misses": serializers.ListField(child=serializers.IntegerField()),
                    "cases": serializers.ListField(child=inline_serializer("ResultsCase", _CASE)),
                },
            ),
            403: inline_serializer("ResultsClosed", {"detail": serializers.CharField()}),
        }
    )
    def get(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.READER])
        refusal = results_refusal(request.user, study)
        if refusal:
            return Response({"detail": refusal}, status=status.HTTP_403_FORBIDDEN)
        debrief = learning.debrief(study, request.user)
        cases = []
        for case in debrief.cases:
            row = asdict(case)
            for private in ("item_id", "case_id"):
                row.pop(private)
            if not debrief.show_ai:
                row["ai"] = []
            cases.append(row)
        return Response(
            {
                "study": study.slug,
                "practice": study.practice,
                "counting": debrief.counting,
                "key_version": debrief.key_version,
                "accuracy": [asdict(row) for row in debrief.accuracy],
                "misses": [c.number for c in debrief.misses],
                "cases": cases,
            }
        )
