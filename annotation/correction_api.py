"""API of corrections: a study's proposals (the review rule decides whose an expert reads),
proposing one, voting, and a PI's decision. The same services as the pages."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView, ListCreateAPIView
from rest_framework.response import Response

from annotation.correction_models import Correction
from annotation.correction_selectors import proposals_visible_to
from annotation.corrections import (
    CorrectionRefused,
    correction_decide,
    correction_propose,
    correction_vote,
    rule_words,
)
from annotation.reviews import REVIEWERS
from readerstudy.models import Role, StudyQuestion
from readerstudy.selectors import roles_of, study_for_user
from readerstudy.vocabulary import LETTERS, VERSION_FIELDS, ErrorType

WORDS = 10_000


class VoteOutSerializer(serializers.Serializer):
    voter = serializers.CharField()
    agree = serializers.BooleanField()


class CorrectionSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    item_id = serializers.IntegerField()
    question_id = serializers.CharField(source="item.question.source_id", read_only=True)
    kind = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)
    error_type = serializers.ChoiceField(choices=ErrorType.values)
    base_version = serializers.IntegerField(
        source="base.number", min_value=1, help_text="The version you were shown."
    )
    changes = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=WORDS),
        read_only=True,
        help_text="Field -> proposed value: only what changes.",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=WORDS)
    proposer = serializers.CharField(source="proposer.username", read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    votes = serializers.SerializerMethodField()
    decided_by = serializers.CharField(
        source="decided_by.username", read_only=True, allow_null=True, default=None
    )
    decided_at = serializers.DateTimeField(read_only=True, allow_null=True)
    version = serializers.IntegerField(
        source="version.number", read_only=True, allow_null=True, default=None
    )
    # What to change (write only; any of the fields, unchanged ones allowed).
    text = serializers.CharField(write_only=True, required=False, max_length=WORDS)
    option_a = serializers.CharField(write_only=True, required=False, max_length=WORDS)
    option_b = serializers.CharField(write_only=True, required=False, max_length=WORDS)
    option_c = serializers.CharField(write_only=True, required=False, max_length=WORDS)
    option_d = serializers.CharField(write_only=True, required=False, max_length=WORDS)
    correct = serializers.ChoiceField(choices=LETTERS, write_only=True, required=False)
    accepted = serializers.ListField(
        child=serializers.ChoiceField(choices=LETTERS),
        write_only=True,
        required=False,
        max_length=4,
        help_text="Every option counted correct (the key is added).",
    )
    explanation = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=WORDS
    )

    def get_votes(self, correction) -> list[dict]:
        return VoteOutSerializer(
            [{"voter": v.voter.username, "agree": v.agree} for v in correction.votes.all()],
            many=True,
        ).data


class VoteSerializer(serializers.Serializer):
    agree = serializers.BooleanField(help_text="Experts: agree or disagree; PIs: accept or reject.")
    note = serializers.CharField(required=False, allow_blank=True, max_length=WORDS)


class CorrectionList(ListCreateAPIView):
    """A study's proposed corrections (experts and PIs; an expert reads a colleague's once
    they reviewed the question), and proposing one (experts)."""

    serializer_class = CorrectionSerializer
    filter_backends = []

    def list(self, request, slug: str):
        study = study_for_user(request.user, slug, REVIEWERS)
        proposals = (
            proposals_visible_to(study, request.user)
            .select_related("item__question", "base", "proposer", "decided_by", "version")
            .prefetch_related("votes__voter")
            .order_by("-created_at", "-id")
        )
        page = self.paginate_queryset(proposals)
        response = self.get_paginated_response(self.get_serializer(page, many=True).data)
        response.data["rule"] = rule_words(study)
        return response

    def create(self, request, slug: str):
        study = study_for_user(request.user, slug, REVIEWERS)
        if Role.EXPERT not in roles_of(request.user, study):
            raise Http404("Only the study's experts propose corrections.")
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        item = StudyQuestion.objects.filter(study=study, id=data["item_id"]).first()
        if item is None:
            return Response(
                {"detail": "No such question in this study.", "errors": {"item_id": ["not here"]}},
                status=status.HTTP_400_BAD_REQUEST,
            )
        values = {name: data[name] for name in VERSION_FIELDS if name in data}
        try:
            correction = correction_propose(
                expert=request.user,
                item=item,
                base=data["base"]["number"],
                error_type=data["error_type"],
                values=values,
                note=data.get("note", ""),
            )
        except CorrectionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self.get_serializer(correction).data, status=status.HTTP_201_CREATED)


def _visible(request, slug: str, pk: int, role: str):
    """The proposal, for a `role` of its study who may read it; else 404 (as for reviews)."""
    study = study_for_user(request.user, slug, REVIEWERS)
    if role not in roles_of(request.user, study):
        raise Http404("No such proposal.")
    found = proposals_visible_to(study, request.user).filter(pk=pk).first()
    if found is None:
        raise Http404("No such proposal.")
    return found


class CorrectionVoteView(GenericAPIView):
    """An expert's vote on a colleague's proposal."""

    serializer_class = VoteSerializer

    @extend_schema(request=VoteSerializer, responses={200: CorrectionSerializer})
    def post(self, request, slug: str, pk: int):
        found = _visible(request, slug, pk, Role.EXPERT)
        data = VoteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            correction_vote(
                voter=request.user,
                correction=found,
                agree=data.validated_data["agree"],
                note=data.validated_data.get("note", ""),
            )
        except CorrectionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(CorrectionSerializer(Correction.objects.get(pk=found.pk)).data)


class CorrectionDecisionView(GenericAPIView):
    """A PI accepts or rejects a proposal (under the PI's rule)."""

    serializer_class = VoteSerializer

    @extend_schema(request=VoteSerializer, responses={200: CorrectionSerializer})
    def post(self, request, slug: str, pk: int):
        found = _visible(request, slug, pk, Role.PI)
        data = VoteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            correction_decide(
                pi=request.user,
                correction=found,
                accept=data.validated_data["agree"],
                note=data.validated_data.get("note", ""),
            )
        except CorrectionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(CorrectionSerializer(Correction.objects.get(pk=found.pk)).data)
