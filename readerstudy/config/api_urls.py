"""/api/v1/ routes, the OpenAPI schema and its interactive docs."""

from django.urls import path

from analysis import api as analysis_api
from analysis import learning_api, triage_api
from annotation import api as annotation_api
from annotation import correction_api
from readerstudy import api as core_api
from readerstudy.platform.api_auth import obtain_auth_token
from readerstudy.platform.api_docs import docs_view, schema_view
from readerstudy.predictions import api as predictions_api

v1 = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("studies/", annotation_api.StudyList.as_view(), name="api-studies"),
    path("studies/<slug:slug>/cases/", annotation_api.ReaderCaseList.as_view(), name="api-cases"),
    path(
        "studies/<slug:slug>/cases/<int:number>/",
        annotation_api.ReaderCaseDetail.as_view(),
        name="api-case",
    ),
    path(
        "studies/<slug:slug>/cases/<int:number>/answer/",
        annotation_api.AnswerView.as_view(),
        name="api-answer",
    ),
    path(
        "studies/<slug:slug>/questions/",
        core_api.ExpertQuestionList.as_view(),
        name="api-questions",
    ),
    path("studies/<slug:slug>/reviews/", annotation_api.ReviewList.as_view(), name="api-reviews"),
    path(
        "studies/<slug:slug>/predictions/",
        predictions_api.PredictionUpload.as_view(),
        name="api-predictions",
    ),
    path(
        "studies/<slug:slug>/analysis/", analysis_api.AnalysisResults.as_view(), name="api-analysis"
    ),
    path("studies/<slug:slug>/items/", triage_api.ItemAnalysis.as_view(), name="api-items"),
    path("studies/<slug:slug>/results/", learning_api.ReaderResults.as_view(), name="api-results"),
    path(
        "studies/<slug:slug>/corrections/",
        correction_api.CorrectionList.as_view(),
        name="api-corrections",
    ),
    path(
        "studies/<slug:slug>/corrections/<int:pk>/vote/",
        correction_api.CorrectionVoteView.as_view(),
        name="api-correction-vote",
    ),
    path(
        "studies/<slug:slug>/corrections/<int:pk>/decision/",
        correction_api.CorrectionDecisionView.as_view(),
        name="api-correction-decision",
    ),
]

urlpatterns = [
    path("schema/", schema_view(), name="api-schema"),
    path("docs/", docs_view(url_name="api-schema"), name="api-docs"),
]
