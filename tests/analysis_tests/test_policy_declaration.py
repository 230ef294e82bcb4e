"""The analysis policy is declared once (analysis.policy.SWITCHES): every switch reaches the
page's form, the export's flags, the API's OpenAPI parameters and its error message, and the
policy's words (policy.json, the page); a switch added to the declaration reaches all of them;
and the page's default policy is the one the worker keeps up to date, whatever the settings."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from django.core.management import CommandError
from django.urls import reverse

from analysis import policy, preparation
from analysis.exports import analysis_files
from analysis.forms import AnalysisSettingsForm
from analysis.learning import counting_words
from analysis.management.commands.export_analysis import Command
from analysis.pipeline import AnalysisSettings, analyse
from analysis.switches import Choice, Switch, from_flags
from readerstudy.models import BackgroundJob, JobKind
from tests.analysis_tests.test_policy_switches import responses

pytestmark = pytest.mark.django_db

ANALYSIS_API = "/api/v1/studies/{slug}/analysis/"


def other_value(switch: Switch):
    """A value of `switch` other than its default, within what it accepts."""
    default = switch.default_value()
    if switch.choices:
        return next(c.value for c in switch.choices if c.value != default)
    if switch.type is str:
        return f"{default} (another)"
    if switch.step:
        return switch.normalise(default + switch.step)
    return default + 1 if switch.type is int else default / 2


def parser():
    return Command().create_parser("manage.py", "export_analysis")


def flags(switch: Switch, value) -> list[str]:
    """The export's arguments asking for `value` of `switch`."""
    if switch.type is bool:
        return [] if value == switch.default_value() else [switch.flag]
    return [switch.flag, switch.spell(value)]


def from_cli(*args: str):
    options = vars(parser().parse_args(["slug", "--out", "out", *args]))
    return from_flags(policy.settings_class(), options)


def schema_parameters(client, slug: str = "{slug}") -> dict[str, dict]:
    schema = client.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"][ANALYSIS_API.format(slug=slug)]["get"]
    return {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}


def bad_value(switch: Switch) -> str:
    return "nonsense" if switch.choices or switch.type is str else "-1"


def test_every_switch_reaches_the_form_the_flags_the_schema_the_errors_and_the_words(
    client, study, pi
):
    client.force_login(pi)
    form = AnalysisSettingsForm()
    help_text = parser().format_help()
    parameters = schema_parameters(client)
    page = client.get(reverse("analysis", args=[study.slug])).content.decode()
    default = AnalysisSettings()
    assert AnalysisSettingsForm({}).settings() == default == from_cli()
    asked = [s for s in policy.SWITCHES if s.param]
    assert {s.param for s in asked} == {"missing", "scale", "excluded", "vrange", "ci"} | {
        "rejected",
        "holm",
        "fast",
        "key",
        "ni_margin",
    }
    for switch in policy.SWITCHES:
        value = other_value(switch)
        # The words: the policy object (policy.json, the XLSX settings sheet, the API's
        # `policy`, the page's full policy) says when a switch is turned.
        assert replace(default, **{switch.name: value}).policy() != default.policy(), switch
        if switch.param:
            field = form.fields[switch.param]
            assert field.label == switch.label and f"{switch.label} <" in page
            for choice in switch.choices:
                assert (choice.spelt, choice.label) in field.choices
            assert switch.param in parameters, switch
            enum = parameters[switch.param]["schema"].get("enum", [])
            assert sorted(enum) == sorted(c.spelt for c in switch.choices)
            asked_policy = AnalysisSettingsForm({switch.param: switch.spell(value)}).settings()
            assert asked_policy == replace(default, **{switch.name: value})
            refused = client.get(
                ANALYSIS_API.format(slug=study.slug), {switch.param: bad_value(switch)}
            )
            assert refused.status_code == 400 and switch.param in refused.json()["errors"]
            assert f"{switch.param} {switch.accepts()}" in refused.json()["detail"]
        if switch.flag:
            assert switch.flag in help_text and switch.label in " ".join(help_text.split())
            assert from_cli(*flags(switch, value)) == replace(default, **{switch.name: value})
            if switch.type is not bool:
                with pytest.raises(CommandError, match=switch.accepts().replace("|", r"\|")):
                    parser().parse_args(["slug", "--out", "out", switch.flag, bad_value(switch)])


@pytest.fixture
def rounding(monkeypatch):
    """A new switch, declared in one place: the declaration."""
    switch = Switch(
        "rounding",
        str,
        "half-up",
        label="Rounding of shown percentages",
        help="How a percentage is rounded for display.",
        choices=(Choice("half-up", "half up"), Choice("even", "half to even")),
        param="rounding",
        flag="--rounding",
    )
    monkeypatch.setattr(policy, "SWITCHES", (*policy.SWITCHES, switch))
    return switch


def test_a_switch_added_to_the_declaration_reaches_every_surface(client, study, pi, rounding):
    # The form: its field, its words, and the policy it asks for.
    form = AnalysisSettingsForm({"rounding": "even"})
    assert form.fields["rounding"].label == "Rounding of shown percentages"
    assert "half to even" in str(form)
    asked = form.settings()
    assert asked.rounding == "even" and AnalysisSettingsForm().settings().rounding == "half-up"
    # The export's flags.
    assert "--rounding" in parser().format_help()
    assert from_cli("--rounding", "even").rounding == "even"
    # The OpenAPI schema.
    client.force_login(pi)
    parameter = schema_parameters(client)["rounding"]
    assert sorted(parameter["schema"]["enum"]) == ["even", "half-up"]
    assert "Rounding of shown percentages" in parameter["description"]
    # The API's error message for a bad value.
    refused = client.get(ANALYSIS_API.format(slug=study.slug), {"rounding": "up"})
    assert refused.status_code == 400 and "rounding half-up|even" in refused.json()["detail"]
    # The words: policy.json of an export under the policy asked for.
    result = analyse(responses(n_questions=8), replace(asked, n_boot=20))
    assert json.loads(_read(analysis_files(result)["policy.json"]))["rounding"] == "even"


def test_the_page_and_the_worker_keep_one_default_policy_whatever_the_settings(
    client, answered, pi, settings, db_backend
):
    settings.FAST_ANSWER_MS = 3000
    settings.MAX_CASE_TIME_MS = 20 * 60 * 1000
    client.force_login(pi)
    assert client.get(reverse("analysis", args=[answered.slug])).status_code == 200
    shown = AnalysisSettingsForm({}).settings()
    assert shown == AnalysisSettings() and shown.fast_answer_ms == 3000
    assert preparation.viewed_policies(answered) == [shown]
    jobs = BackgroundJob.objects.filter(study=answered, kind=JobKind.ANALYSIS)
    queued = list(jobs.values_list("key", flat=True))
    assert len(queued) == 1 and jobs.get().params["policy"]["fast_answer_ms"] == 3000
    # The re-analysis after the data changed: the page's policy only, nothing more queued.
    preparation.analysis_refresh.call(study_id=answered.pk)
    assert list(jobs.values_list("key", flat=True)) == queued
    # A policy remembered under the former setting is no longer one a page can ask for.
    preparation.remember_policy(answered, replace(shown, fast_answer_ms=2000, missing="exclude"))
    assert preparation.viewed_policies(answered) == [shown]
    # The learning pages count as the analysis does.
    assert "answers faster than 3 s" in counting_words()


def _read(body) -> str:
    chunks: list[bytes] = []

    class Stream:
        def write(self, data: bytes) -> int:
            chunks.append(data)
            return len(data)

    body(Stream())
    return b"".join(chunks).decode()
