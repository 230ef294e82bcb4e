"""API: the study's item analysis as JSON (experts and PIs), the same table as the page."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from analysis.pipeline import records
from analysis.stats import ITEM_ANALYSIS_DEFINITION
from analysis.triage import ITEM_COLUMNS, readers_scope, study_item_analysis
from analysis.triage_views import sorted_items
from readerstudy.models import Role
from readerstudy.selectors import study_for_user


def _field(name: str) -> serializers.Field:
    if name in {"question_id", "task", "key"}:
        return serializers.CharField()
    if name == "modal_wrong":
        return serializers.CharField(allow_null=True)
    if name == "excluded":
        return serializers.BooleanField()
    if name == "item_id" or name == "n" or name.startswith(("difficulty_", "fit_", "comments")):
        return serializers.IntegerField()
    return serializers.FloatField(allow_null=True)


ITEM_FIELDS = ["item_id", *ITEM_COLUMNS, "n_readers", "n_models", "p_correct", "wrong_consensus"]


class ItemAnalysis(GenericAPIView):
    """Per question: correctness among readers and models, discrimination, option shares,
    readers' votes and comments, and the key-suspicion score (highest first)."""

    @extend_schema(
        responses=inline_serializer(
            "ItemAnalysis",
            {
                "definition": serializers.CharField(),
                "readers_scope": serializers.CharField(),
                "items": serializers.ListField(
                    child=inline_serializer(
                        "ItemAnalysisRow", {name: _field(name) for name in ITEM_FIELDS}
                    )
                ),
            },
        ),
    )
    def get(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.EXPERT, Role.PI])
        frame, _ = sorted_items(study_item_analysis(study), "-key_suspicion")
        return Response(
            {
                "definition": ITEM_ANALYSIS_DEFINITION,
                "readers_scope": readers_scope(study),
                "items": records(frame[ITEM_FIELDS]),
            }
        )
