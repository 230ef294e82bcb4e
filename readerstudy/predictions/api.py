"""PI API: upload one AI model's predictions for a study's dataset."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from readerstudy.models import Role
from readerstudy.predictions.services import (
    PredictionForbidden,
    PredictionImportError,
    predictions_import,
)
from readerstudy.predictions.views import too_large
from readerstudy.selectors import study_for_user


class PredictionUploadSerializer(serializers.Serializer):
    model = serializers.CharField(max_length=200)
    file = serializers.FileField(
        help_text="CSV (question_id,prediction[,raw_response]) or ReXVQA inference JSON, UTF-8."
    )
    replace = serializers.BooleanField(default=False)


class PredictionSummarySerializer(serializers.Serializer):
    model = serializers.CharField()
    dataset = serializers.CharField()
    predictions = serializers.IntegerField()
    failed_extractions = serializers.IntegerField()
    replaced = serializers.IntegerField()
    rules = serializers.DictField(child=serializers.IntegerField())
    studies = serializers.ListField(
        child=serializers.CharField(), help_text="Slugs of every study whose results changed."
    )


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class PredictionUpload(GenericAPIView):
    """Upload one model's predictions for the study's dataset (all or nothing)."""

    serializer_class = PredictionUploadSerializer
    parser_classes = [MultiPartParser, FormParser]

    def initial(self, request, *args, **kwargs):
        """A body declared too large is refused before authentication: signing in by session
        runs DRF's CSRF check, which parses the body (a file of any size, to a temporary
        file) before the serializer could refuse it. As the upload page does."""
        if request.method == "POST" and (size := too_large(request)):
            raise PayloadTooLarge(
                f"File too large ({size} bytes sent; the limit is "
                f"{settings.PREDICTION_UPLOAD_MAX_BYTES}). Nothing was read."
            )
        super().initial(request, *args, **kwargs)

    @extend_schema(responses={201: PredictionSummarySerializer})
    def post(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.PI])
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        if upload.size > settings.PREDICTION_UPLOAD_MAX_BYTES:
            return Response(
                {
                    "detail": f"File too large ({upload.size} bytes; the limit is "
                    f"{settings.PREDICTION_UPLOAD_MAX_BYTES})."
                },
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        try:
            summary = predictions_import(
                dataset=study.dataset,
                model_name=serializer.validated_data["model"],
                content=upload.read(),
                source=upload.name,
                replace=serializer.validated_data["replace"],
                actor=request.user,
                through=study,
            )
        except PredictionForbidden as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        except PredictionImportError as exc:
            return Response(
                {"detail": f"Nothing was imported. {exc}"}, status=status.HTTP_400_BAD_REQUEST
            )
        return Response(
            PredictionSummarySerializer(summary.as_dict()).data, status=status.HTTP_201_CREATED
        )
