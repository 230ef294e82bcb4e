"""Reader and expert API endpoints, and "my studies": thin wrappers over selectors and services."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView, ListAPIView, ListCreateAPIView
from rest_framework.response import Response

from annotation import selectors
from annotation.reviews import ReviewRejected, review_submit, reviews_visible_to
from annotation.serializers import (
    AnswerInputSerializer,
    AnswerResultSerializer,
    ReaderCaseSerializer,
    ReviewSerializer,
)
from annotation.services import (
    AnswerRejected,
    InvalidAnswerValue,
    SessionNotOpen,
    answer_submit,
    layout_check,
)
from annotation.sessions import reading_of, washout_message
from readerstudy.models import Role, StudyQuestion
from readerstudy.selectors import roles_of, studies_of, study_for_user
from readerstudy.serializers import StudySerializer, confidence_of
from readerstudy.vocabulary import ANSWER_FIELD_NAMES


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
                    "progress": selectors.progress_of(study, request.user)
                    if Role.READER in roles
                    else None,
                    "confidence": confidence_of(study.confidence_scale),
                }
            )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


def _washout(study, reader) -> Response | None:
    """409 with the date while the reader's second session is in its washout."""
    reading = reading_of(study, reader)
    if reading.is_open:
        return None
    return Response(
        {"detail": washout_message(reading), "opens_at": reading.opens_at.isoformat()},
        status=status.HTTP_409_CONFLICT,
    )


class ReaderCaseList(ListAPIView):
    """The reader's cases in their order, blinded like the reader pages."""

    serializer_class = ReaderCaseSerializer
    filter_backends = []

    def list(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.READER])
        if (refused := _washout(study, request.user)) is not None:
            return refused
        numbers = list(range(1, len(selectors.ordered_item_ids(study, request.user)) + 1))
        page = self.paginate_queryset(numbers)
        cases = selectors.reader_cases(study, request.user, page)
        return self.get_paginated_response(self.get_serializer(cases, many=True).data)


class ReaderCaseDetail(GenericAPIView):
    serializer_class = ReaderCaseSerializer

    def get(self, request, slug: str, number: int):
        study = study_for_user(request.user, slug, [Role.READER])
        if (refused := _washout(study, request.user)) is not None:
            return refused
        case = selectors.reader_case(study, request.user, number)
        if case is None:
            raise Http404("No such case.")
        return Response(self.get_serializer(case).data)


class AnswerView(GenericAPIView):
    """Submit or revise the answer to one case (the same rules as the reader page)."""

    serializer_class = AnswerInputSerializer

    @extend_schema(
        request=AnswerInputSerializer,
        responses={201: AnswerResultSerializer, 200: AnswerResultSerializer},
    )
    def put(self, request, slug: str, number: int):
        study = study_for_user(request.user, slug, [Role.READER])
        if (refused := _washout(study, request.user)) is not None:
            return refused
        reading = reading_of(study, request.user)
        data = AnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = {**data.validated_data}
        try:
            # A case shown under an earlier design may be one this design no longer gives.
            layout_check(reading, values["layout"])
            item = selectors.item_at(study, request.user, number, reading=reading)
            if item is None:
                raise Http404("No such case.")
            # The client speaks the letters it was shown (shuffled options): stored canonically.
            mapping = selectors.screen_letters(study, reading, item.question_id)
            values["choice"] = mapping[values["choice"]]
            values["words"] = values["words"] or None
            values["scale"] = values["scale"] or None
            outcome = answer_submit(reader=request.user, item=item, **values)
        except InvalidAnswerValue as exc:  # a value its rule refuses: that field's error,
            # in the API's one shape of a refused input (readerstudy.platform.api_errors)
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        except AnswerRejected as exc:
            body = {"detail": str(exc)}
            if isinstance(exc, SessionNotOpen):
                body["opens_at"] = exc.opens_at.isoformat()
            return Response(body, status=status.HTTP_409_CONFLICT)
        answer = outcome.answer
        result = {
            "number": number,
            "outcome": "created"
            if outcome.created
            else "revised"
            if outcome.revised
            else "unchanged",
            **{f: getattr(answer, f) for f in (*ANSWER_FIELD_NAMES, "time_ms", "revisions_count")},
            "choice": selectors.to_screen(mapping, answer.choice),
        }
        if study.designed:
            result.update(
                first_choice=selectors.to_screen(mapping, answer.first_choice),
                first_confidence=answer.first_confidence,
                stage=outcome.stage,
                session=answer.session,
                arm=answer.arm,
            )
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(AnswerResultSerializer(result).data, status=code)


class ReviewList(ListCreateAPIView):
    """Experts' reviews of a study's questions: experts and PIs read, experts write.

    An expert reads their own reviews and, question by question, their colleagues' reviews of
    the questions they have reviewed themselves (the review page's rule).
    """

    serializer_class = ReviewSerializer
    filter_backends = []

    @extend_schema(
        parameters=[
            OpenApiParameter("decision", str, enum=["accept", "revise", "reject"]),
            OpenApiParameter("expert", str),
        ]
    )
    def list(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.EXPERT, Role.PI])
        reviews = (
            reviews_visible_to(study, request.user)
            .select_related("item__question", "expert")
            .order_by("item__position", "expert__username")
        )
        if decision := request.query_params.get("decision"):
            reviews = reviews.filter(decision=decision)
        if expert := request.query_params.get("expert"):
            reviews = reviews.filter(expert__username=expert)
        page = self.paginate_queryset(reviews)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def create(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.EXPERT, Role.PI])
        if Role.EXPERT not in roles_of(request.user, study):
            raise Http404("Only the study's experts review questions.")
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        item = StudyQuestion.objects.filter(study=study, id=data["item_id"]).first()
        if item is None:
            return Response(
                {
                    "detail": "No such question in this study.",
                    "errors": {"item_id": ["not in this study"]},
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            review = review_submit(
                expert=request.user,
                item=item,
                flags=sorted(data.get("flags", [])),
                other_text=data.get("other_text", ""),
                ratings=serializer.ratings(),
                difficulty=data["difficulty"],
                decision=data["decision"],
                comment=data.get("comment", ""),
            )
        except ReviewRejected as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self.get_serializer(review).data, status=status.HTTP_201_CREATED)
