"""Every page and API endpoint x every persona: who sees what, who may write what.

Personas: anonymous, outsider, reader, other reader of the same study, reader of another study,
expert, PI, staff (is_staff but not a member). Only the study's experts and PIs may ever
receive its correct answers, explanations, reports, reviews or model predictions; a reader
only ever receives their own answers.
"""

from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.models import RaterLabel
from analysis.services import predictions_import
from annotation.models import Answer, ExpertReview
from annotation.reviews import review_submit
from annotation.services import answer_submit
from readerstudy.models import (
    AuditEvent,
    Case,
    Membership,
    PracticePlan,
    Question,
    ReaderStudy,
    Role,
)
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db
PERSONAS = [
    "anonymous",
    "outsider",
    "reader",
    "other_reader",
    "foreign_reader",
    "expert",
    "pi",
    "staff",
]
READERS = {"reader", "other_reader"}
TRUTH_SENTINELS = [
    "SENTINEL-EXPLANATION",
    "SENTINEL-FINDINGS",
    "SENTINEL-IMPRESSION",
    "SENTINEL-REVIEW",
    "SENTINEL-MODEL",
]
RATINGS = {
    "clinical_quality": 3,
    "explanation_clarity": 3,
    "factual_correctness": 3,
    "image_alignment": 3,
}


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url: str
    allowed: frozenset
    data: dict | None = None
    api: bool = False
    # Personas for whom the page exists but is closed now (403 with the reason): a reader's
    # results while the study's setting does not show them.
    closed: frozenset = frozenset()


@pytest.fixture
def world(study, reader, other_reader, expert, pi, outsider):
    Question.objects.filter(dataset=study.dataset).update(explanation="SENTINEL-EXPLANATION")
    Case.objects.filter(dataset=study.dataset).update(
        findings="SENTINEL-FINDINGS", impression="SENTINEL-IMPRESSION"
    )
    items = list(study.items.order_by("position"))
    for item in items:
        answer_submit(
            reader=other_reader,
            item=item,
            choice="D",
            comment=f"OTHER-{other_reader.username}-COMMENT",
        )
        answer_submit(
            reader=reader, item=item, choice="A", comment=f"OTHER-{reader.username}-COMMENT"
        )
    review_submit(
        expert=expert,
        item=items[0],
        flags=[],
        ratings=RATINGS,
        difficulty="easy",
        decision="accept",
        comment="SENTINEL-REVIEW",
    )
    rows = "\n".join(f"{i.question.source_id},SENTINEL-MODEL picks B" for i in items)
    predictions_import(
        dataset=study.dataset,
        model_name="SENTINEL-MODEL-NAME",
        content=f"question_id,prediction\n{rows}\n".encode(),
    )
    other = build_study(1)
    foreign = UserFactory(username="foreign_reader")
    MembershipFactory(study=other, user=foreign, role=Role.READER)
    staff = UserFactory(username="staff", is_staff=True)
    users = {
        "outsider": outsider,
        "reader": reader,
        "other_reader": other_reader,
        "foreign_reader": foreign,
        "expert": expert,
        "pi": pi,
        "staff": staff,
    }
    return study, items[0], users


def endpoints(study, item) -> list[Endpoint]:
    s = study.slug
    readers, reviewers, pis = frozenset(READERS), frozenset({"expert", "pi"}), frozenset({"pi"})
    none = frozenset()
    review = {**RATINGS, "difficulty": "hard", "decision": "reject"}
    return [
        Endpoint("reader start", "get", reverse("reader-start", args=[s]), readers),
        Endpoint("reader case", "get", reverse("reader-case", args=[s, 1]), readers),
        Endpoint(
            "reader answer", "post", reverse("reader-answer", args=[s, 1]), readers, {"choice": "B"}
        ),
        Endpoint("reader review", "get", reverse("reader-review", args=[s]), readers),
        Endpoint("expert queue", "get", reverse("expert-queue", args=[s]), reviewers),
        Endpoint("expert next", "get", reverse("expert-next", args=[s]), reviewers),
        Endpoint("item analysis", "get", reverse("item-analysis", args=[s]), reviewers),
        Endpoint(
            "item analysis xlsx",
            "get",
            reverse("item-analysis-download", args=[s, "xlsx"]),
            reviewers,
        ),
        Endpoint("api items", "get", f"/api/v1/studies/{s}/items/", reviewers, api=True),
        Endpoint(
            "member removal page",
            "get",
            reverse(
                "pi-member-remove",
                args=[s, Membership.objects.filter(study=study).order_by("id").first().id],
            ),
            pis,
        ),
        Endpoint(
            "expert review page", "get", reverse("expert-review", args=[s, item.id]), reviewers
        ),
        Endpoint(
            "expert review submit",
            "post",
            reverse("expert-review", args=[s, item.id]),
            frozenset({"expert"}),
            review,
        ),
        Endpoint(
            "expert evidence panel",
            "get",
            reverse("expert-evidence", args=[s, item.id]),
            reviewers,
        ),
        Endpoint("dashboard", "get", reverse("pi-dashboard", args=[s]), pis),
        Endpoint(
            "exclusion",
            "post",
            reverse("pi-exclusion", args=[s, item.id]),
            pis,
            {"action": "exclude", "reason": "matrix"},
        ),
        Endpoint(
            "members",
            "post",
            reverse("pi-members", args=[s]),
            pis,
            {"username": "outsider", "role": "pi"},
        ),
        Endpoint(
            "reading settings",
            "post",
            reverse("pi-reading", args=[s]),
            pis,
            {"default_window": "lung", "break_minutes": "30"},
        ),
        Endpoint("design page", "get", reverse("pi-design", args=[s]), pis),
        Endpoint("reviews csv", "get", reverse("pi-reviews-csv", args=[s]), pis),
        Endpoint("feedback csv", "get", reverse("pi-feedback-csv", args=[s]), pis),
        Endpoint("analysis", "get", reverse("analysis", args=[s]), pis),
        Endpoint(
            "analysis figure",
            "get",
            reverse("analysis-figure", args=[s, "kappa_answer", "svg"]),
            pis,
        ),
        Endpoint(
            "analysis table", "get", reverse("analysis-table", args=[s, "responses", "csv"]), pis
        ),
        Endpoint("analysis zip", "get", reverse("analysis-zip", args=[s]), pis),
        Endpoint("analysis status", "get", reverse("analysis-status", args=[s]), pis),
        Endpoint(
            "analysis figure slot",
            "get",
            reverse("analysis-figure-slot", args=[s, "accuracy_by_task"]),
            pis,
        ),
        Endpoint(
            "analysis names",
            "post",
            reverse("analysis-names", args=[s]),
            pis,
            {"name-reader:1": "Matrix"},
        ),
        Endpoint("predictions upload page", "get", reverse("analysis-predictions", args=[s]), pis),
        Endpoint(
            "predictions preview",
            "post",
            reverse("analysis-predictions", args=[s]),
            pis,
            {"model": "matrix-model"},
        ),
        Endpoint("api cases", "get", f"/api/v1/studies/{s}/cases/", readers, api=True),
        Endpoint("api case", "get", f"/api/v1/studies/{s}/cases/1/", readers, api=True),
        Endpoint(
            "api answer",
            "put",
            f"/api/v1/studies/{s}/cases/1/answer/",
            readers,
            {"choice": "B"},
            api=True,
        ),
        Endpoint("api questions", "get", f"/api/v1/studies/{s}/questions/", reviewers, api=True),
        Endpoint("api reviews", "get", f"/api/v1/studies/{s}/reviews/", reviewers, api=True),
        Endpoint(
            "api review create",
            "post",
            f"/api/v1/studies/{s}/reviews/",
            frozenset({"expert"}),
            {**review, "item_id": item.id},
            api=True,
        ),
        Endpoint(
            "api predictions",
            "post",
            f"/api/v1/studies/{s}/predictions/",
            pis,
            {"model": "new-model"},
            api=True,
        ),
        Endpoint("api analysis", "get", f"/api/v1/studies/{s}/analysis/", pis, api=True),
        # What readers get back (issue 36): closed to them while the study's setting says
        # never (the default).
        Endpoint(
            "reader results", "get", reverse("reader-results", args=[s]), none, closed=readers
        ),
        Endpoint(
            "reader results case",
            "get",
            reverse("reader-results-case", args=[s, 1]),
            none,
            closed=readers,
        ),
        Endpoint(
            "reader results csv",
            "get",
            reverse("reader-results-csv", args=[s]),
            none,
            closed=readers,
        ),
        Endpoint(
            "practise misses",
            "post",
            reverse("reader-practise-misses", args=[s]),
            none,
            {"interval_days": "7"},
            closed=readers,
        ),
        Endpoint(
            "api results", "get", f"/api/v1/studies/{s}/results/", none, api=True, closed=readers
        ),
        Endpoint("results settings", "get", reverse("pi-results", args=[s]), pis),
        Endpoint(
            "results settings save",
            "post",
            reverse("pi-results", args=[s]),
            pis,
            {"results_visibility": "own_final", "misses_unseen": "0"},
        ),
        Endpoint(
            "close reading", "post", reverse("pi-close-reading", args=[s]), pis, {"confirm": "1"}
        ),
        Endpoint("programme", "get", reverse("programme"), pis),
        Endpoint("programme csv", "get", reverse("programme-csv"), pis),
    ]


def call(endpoint: Endpoint, user, study):
    client = APIClient()
    if user is not None:
        client.force_login(user)
    data = dict(endpoint.data or {})
    if endpoint.name in ("api predictions", "predictions preview"):
        rows = "\n".join(f"{i.question.source_id},A" for i in study.items.all())
        data["file"] = SimpleUploadedFile("p.csv", f"question_id,prediction\n{rows}\n".encode())
        return client.post(endpoint.url, data, format="multipart")
    if endpoint.method == "get":
        return client.get(endpoint.url)
    fmt = {"format": "json"} if endpoint.api else {}
    return getattr(client, endpoint.method)(endpoint.url, data, **fmt)


def state():
    return (
        sorted(Answer.objects.values_list("reader__username", "item_id", "choice")),
        sorted(ExpertReview.objects.values_list("expert__username", "item_id", "decision")),
        sorted(Membership.objects.values_list("user__username", "role")),
        AuditEvent.objects.filter(action__startswith="question.").count(),
        sorted(RaterLabel.objects.values_list("rater", "label")),
        sorted(
            ReaderStudy.objects.values_list(
                "slug", "default_window", "break_minutes", "results_visibility", "reading_closed_at"
            )
        ),
        sorted(PracticePlan.objects.values_list("owner__username", "source__slug")),
    )


ENDPOINT_NAMES = [
    "reader start",
    "reader case",
    "reader answer",
    "reader review",
    "expert queue",
    "expert next",
    "item analysis",
    "item analysis xlsx",
    "api items",
    "member removal page",
    "expert review page",
    "expert review submit",
    "expert evidence panel",
    "dashboard",
    "exclusion",
    "members",
    "reading settings",
    "design page",
    "reviews csv",
    "feedback csv",
    "analysis",
    "analysis figure",
    "analysis table",
    "analysis zip",
    "analysis status",
    "analysis figure slot",
    "analysis names",
    "predictions upload page",
    "predictions preview",
    "api cases",
    "api case",
    "api answer",
    "api questions",
    "api reviews",
    "api review create",
    "api predictions",
    "api analysis",
    "reader results",
    "reader results case",
    "reader results csv",
    "practise misses",
    "api results",
    "results settings",
    "results settings save",
    "close reading",
    "programme",
    "programme csv",
]


@pytest.mark.parametrize("name", ENDPOINT_NAMES)
def test_matrix(world, name):
    study, item, users = world
    endpoint = next(e for e in endpoints(study, item) if e.name == name)
    for persona in PERSONAS:
        user = users.get(persona)
        before = state()
        response = call(endpoint, user, study)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode(errors="replace")
        if persona in endpoint.allowed:
            assert response.status_code < 400, (name, persona, response.status_code)
        elif persona in endpoint.closed:
            assert response.status_code == 403, (name, persona, response.status_code)
            assert state() == before, f"{persona} changed data through {name}"
        else:
            expected = {401, 403} if endpoint.api else {302}
            expected = expected if persona == "anonymous" else {404}
            assert response.status_code in expected, (name, persona, response.status_code)
            assert state() == before, f"{persona} changed data through {name}"
            if persona == "anonymous" and not endpoint.api:
                assert response.url.startswith("/accounts/login/")
        if persona not in {"expert", "pi"}:
            for sentinel in TRUTH_SENTINELS:
                assert sentinel not in text, (name, persona, sentinel)
        if persona in READERS:
            other = "other_reader" if persona == "reader" else "reader"
            assert f"OTHER-{other}-COMMENT" not in text, (name, persona)


def test_matrix_covers_every_endpoint(world):
    study, item, _ = world
    assert [e.name for e in endpoints(study, item)] == ENDPOINT_NAMES


def test_studies_list_only_shows_my_studies(world):
    study, _, users = world
    for persona in ("outsider", "staff", "foreign_reader"):
        client = APIClient()
        client.force_login(users[persona])
        slugs = [r["slug"] for r in client.get("/api/v1/studies/").json()["results"]]
        assert study.slug not in slugs


def test_staff_without_membership_see_no_study_pages(world, client):
    study, _, users = world
    client.force_login(users["staff"])
    assert study.title not in client.get("/").content.decode()
