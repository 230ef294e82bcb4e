"""PI API: the analysis results as JSON."""

from __future__ import annotations

from collections.abc import Iterable

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from analysis import policy, preparation
from analysis.cache import StudyAnalysis
from analysis.confidence_analysis import CONFIDENCE_TABLES, confidence_json
from analysis.exports import responses_table
from analysis.forms import AnalysisSettingsForm, PowerForm
from analysis.pipeline import DESIGN_TABLES, TABLES, clean, records
from analysis.reporting import table_arm
from analysis.selectors import readers_not_started
from analysis.stats import design_json
from analysis.switches import Switch
from readerstudy.jobs import job_progress
from readerstudy.models import BackgroundJob, Role
from readerstudy.selectors import study_for_user


def _preparing(request, job: BackgroundJob) -> Response:
    """202: the analysis is being computed by a worker; ask again (the same URL) later."""
    progress = job_progress(job)
    response = Response(
        {
            "detail": "The analysis is being prepared by a worker; ask again in a few seconds.",
            "status": job.status,
            "error": job.error or None,
            "progress": {
                "done": progress.done,
                "total": progress.total,
                "stage": progress.stage,
                "eta_seconds": progress.eta_seconds,
            },
            "poll": request.build_absolute_uri(),
        },
        status=status.HTTP_202_ACCEPTED,
    )
    response["Retry-After"] = "2"
    return response


def _matrix(frame) -> dict:
    return {
        "raters": list(frame.index),
        "values": [[clean(v) for v in row] for row in frame.to_numpy().tolist()],
    }


def design_power_json(analysis: StudyAnalysis, effect: float, target: float) -> dict:
    """The power section as JSON: the question asked, and the table with its unit and method."""
    table = analysis.design_power(effect, target)
    body = design_json({"design": "", "comparison": None, "tables": {"power": table}})
    return {"effect": effect, "power": target, **body["tables"]["power"]}


def switch_parameters(switches: Iterable[Switch]) -> list[OpenApiParameter]:
    """Query parameters, one per switch: its values, its default and what it is."""
    parameters = []
    for switch in switches:
        default = switch.default_value()
        parameters.append(
            OpenApiParameter(
                switch.param,
                str if switch.choices else switch.type,
                enum=[choice.spelt for choice in switch.choices] or None,
                default=switch.spell(default) if switch.choices else default,
                description=f"{switch.label}: {switch.accepts()}. {switch.help}".strip(),
            )
        )
    return parameters


def asked_switches() -> list[Switch]:
    """What the endpoint's query takes: the policy's switches as the declaration has them
    now (analysis.policy.SWITCHES), then the power section's question."""
    return [*policy.asked(), *PowerForm.QUESTION]


class PolicySchema(AutoSchema):
    """The analysis endpoint's schema, its switches' parameters made when the schema is."""

    def get_override_parameters(self):
        return [*switch_parameters(asked_switches()), *super().get_override_parameters()]


def bad_query_detail() -> str:
    """The 400 answer's words: every parameter with the values it takes."""
    taken = ", ".join(f"{switch.param} {switch.accepts()}" for switch in asked_switches())
    return f"Parameters take: {taken}."


class AnalysisResults(GenericAPIView):
    """Every statistic of the analysis page as JSON, with the policy as an object (PIs only).

    Computed once per data version and policy by a task worker, like the page
    (`analysis.cache`, `analysis.preparation`), never in the request: while a newer data version is
    computed the newest older one is served with `as_of`; with none yet, 202 and the progress.
    """

    schema = PolicySchema()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "responses",
                bool,
                description="true: also `responses`, every answer of every arm with its arm "
                "and session (the rows of responses.csv).",
            ),
        ],
        responses={
            200: inline_serializer(
                "AnalysisResults",
                {
                    "data_version": serializers.CharField(),
                    "as_of": serializers.DateTimeField(allow_null=True),
                    "policy": serializers.DictField(),
                    "key_version": serializers.CharField(),
                    **{
                        name: serializers.ListField(
                            child=serializers.DictField(),
                            required=name not in (*DESIGN_TABLES, *CONFIDENCE_TABLES),
                        )
                        for name in TABLES
                        if name != "reader_panel"
                    },
                    # A study with an aided arm only: the design sentence, each design table
                    # with its unit, method and policy, and the power section.
                    "design": serializers.DictField(required=False),
                    "power": serializers.DictField(required=False),
                    # A study with a confidence scale only: the scale, the rating rule and
                    # what each confidence table (rows: the top-level keys) rests on.
                    "confidence": serializers.DictField(required=False),
                    "kappa": serializers.DictField(),
                    "reader_panel": serializers.DictField(allow_null=True),
                    "readers_not_started": serializers.ListField(child=serializers.CharField()),
                    "arms": serializers.DictField(child=serializers.CharField()),
                    "responses": serializers.ListField(
                        child=serializers.DictField(), required=False
                    ),
                },
            ),
            # Not computed now: the study's analyses at once, or the person's limit
            # (readerstudy.jobs.JobRefused), with Retry-After.
            429: inline_serializer("AnalysisRefused", {"detail": serializers.CharField()}),
            202: inline_serializer(
                "AnalysisPreparing",
                {
                    "detail": serializers.CharField(),
                    "status": serializers.CharField(),
                    "error": serializers.CharField(allow_null=True),
                    "progress": serializers.DictField(),
                    "poll": serializers.URLField(),
                },
            ),
        },
    )
    def get(self, request, slug: str):
        study = study_for_user(request.user, slug, [Role.PI])
        form = AnalysisSettingsForm(request.query_params)
        power_form = PowerForm(request.query_params)
        if not form.is_valid() or not power_form.is_valid():
            return Response(
                {
                    "detail": bad_query_detail(),
                    "errors": {**form.errors, **power_form.errors},
                },
                status=400,
            )
        analysis = StudyAnalysis(study, form.settings())
        # Never computed in the request: a worker is asked; meanwhile the newest older
        # analysis "as of" when it was computed, or 202 with the progress.
        shown, as_of, job = preparation.shown_or_prepared(analysis, requested_by=request.user)
        if shown is None:
            return _preparing(request, job)
        result = shown.result
        design = {}
        if result.design is not None:
            design["design"] = design_json(result.design)
            design["power"] = design_power_json(shown, *power_form.values())
        elif result.design_error:
            design["design"] = {"error": result.design_error}
        if result.confidence:
            design["confidence"] = confidence_json(result.confidence)
        elif result.confidence_error:
            design["confidence"] = {"error": result.confidence_error}
        return Response(
            {
                "data_version": shown.version,
                # Set while a newer data version is being analysed: when this one was computed.
                "as_of": as_of.isoformat() if as_of else None,
                **design,
                "policy": result.policy(),
                "key_version": result.key_version,
                **{name: records(frame) for name, frame in result.shown_tables().items()},
                "kappa": {name: _matrix(m) for name, m in result.kappas.items()},
                "reader_panel": (
                    {k: clean(v) for k, v in result.reader_panel.items()}
                    if result.reader_panel
                    else None
                ),
                "readers_not_started": readers_not_started(study),
                # A study with an aided arm: which arm (reading) each table covers.
                "arms": {
                    name: arm
                    for name in [*result.shown_tables(), "reader_panel", "responses"]
                    if (arm := table_arm(result.facts, name))
                },
                **(
                    {"responses": records(responses_table(result))}
                    if request.query_params.get("responses", "").lower() in ("1", "true")
                    else {}
                ),
            }
        )
