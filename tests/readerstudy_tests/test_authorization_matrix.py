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
from annotation.correction_models import Correction, CorrectionVote
from annotation.corrections import correction_decide, correction_propose
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
from readerstudy.predictions.services import predictions_import
from readerstudy.question_versions import QuestionVersion
from tests.factories import MembershipFactory, UserFactory, build_study

# Who may reach what, by status code and by what a body holds: the analysis's figures are built
# (one that cannot be built fails here too) but not saved as PNG, SVG and PDF; only the PI may
# have a figure, and a PI's bodies are not searched for the truth.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]
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
    "SENTINEL-PROPOSAL",
    "SENTINEL-CORRECTED",
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
    _corrections(study, items, expert, pi)
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


def _corrections(study, items, expert, pi) -> None:
    """A colleague's open proposal on the first question (which `expert` reviewed), and a
    correction the PI accepted on the second (a new key and explanation): what no reader may
    see anywhere."""
    colleague = UserFactory(username="colleague_expert")
    MembershipFactory(study=study, user=colleague, role=Role.EXPERT)
    for item in items[:2]:
        review_submit(
            expert=colleague,
            item=item,
            flags=[],
            ratings=RATINGS,
            difficulty="easy",
            decision="revise",
        )
    correction_propose(
        expert=colleague,
        item=items[0],
        base=1,
        error_type="several_valid",
        values={"accepted": ["A", "B", "C"], "explanation": "SENTINEL-PROPOSAL"},
        note="SENTINEL-PROPOSAL note",
    )
    accepted = correction_propose(
        expert=colleague,
        item=items[1],
        base=1,
        error_type="wrong_key",
        values={"correct": "D", "explanation": "SENTINEL-CORRECTED"},
    )
    correction_decide(pi=pi, correction=accepted, accept=True)


def endpoints(study, item) -> list[Endpoint]:
    s = study.slug
    readers, reviewers, pis = frozenset(READERS), frozenset({"expert", "pi"}), frozenset({"pi"})
    none = frozenset()
    review = {**RATINGS, "difficulty": "hard", "decision": "reject"}
    proposal = Correction.objects.filter(item__study=study, status="open").order_by("id").first()
    proposal_id = proposal.pk if proposal else 0
    decided = QuestionVersion.objects.filter(study=study).order_by("id").first()
    decided_id = decided.pk if decided else 0
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
        # The key tables (issue 35): what changed in the keys, every rater under both.
        Endpoint(
            "analysis key changes",
            "get",
            reverse("analysis-table", args=[s, "key_changes", "csv"]),
            pis,
        ),
        Endpoint(
            "analysis accuracy by key",
            "get",
            reverse("analysis-table", args=[s, "accuracy_by_key", "xlsx"]),
            pis,
        ),
        Endpoint(
            "api analysis original keys",
            "get",
            f"/api/v1/studies/{s}/analysis/?key=original",
            pis,
            api=True,
        ),
        Endpoint("analysis zip", "get", reverse("analysis-zip", args=[s]), pis),
        Endpoint("analysis report", "get", reverse("analysis-report", args=[s]), pis),
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
        Endpoint("predictions upload page", "get", reverse("study-predictions", args=[s]), pis),
        Endpoint(
            "predictions preview",
            "post",
            reverse("study-predictions", args=[s]),
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
        Endpoint("corrections page", "get", reverse("corrections", args=[s]), reviewers),
        Endpoint("correction page", "get", reverse("correction", args=[s, proposal_id]), reviewers),
        Endpoint(
            "correction vote",
            "post",
            reverse("correction", args=[s, proposal_id]),
            reviewers,
            {"choice": "no", "note": "matrix"},
        ),
        Endpoint(
            "correction rule",
            "post",
            reverse("corrections", args=[s]),
            pis,
            {"rule": "experts", "votes": "1"},
        ),
        Endpoint(
            "version reverse",
            "post",
            reverse("version-reverse", args=[s, decided_id]),
            reviewers,
            {"note": "matrix"},
        ),
        Endpoint("bank zip", "get", reverse("corrections-bank", args=[s, "zip"]), reviewers),
        Endpoint("bank json", "get", reverse("corrections-bank", args=[s, "json"]), reviewers),
        Endpoint(
            "api corrections", "get", f"/api/v1/studies/{s}/corrections/", reviewers, api=True
        ),
        Endpoint(
            "api correction create",
            "post",
            f"/api/v1/studies/{s}/corrections/",
            frozenset({"expert"}),
            {"item_id": item.id, "base_version": 1, "error_type": "wrong_key", "correct": "C"},
            api=True,
        ),
        Endpoint(
            "api correction vote",
            "post",
            f"/api/v1/studies/{s}/corrections/{proposal_id}/vote/",
            frozenset({"expert"}),
            {"agree": False},
            api=True,
        ),
        Endpoint(
            "api correction decision",
            "post",
            f"/api/v1/studies/{s}/corrections/{proposal_id}/decision/",
            pis,
            {"agree": False},
            api=True,
        ),
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
        sorted(ReaderStudy.objects.values_list("slug", "default_window", "break_minutes")),
        sorted(ReaderStudy.objects.values_list("slug", "adjudication", "adjudication_votes")),
        sorted(Correction.objects.values_list("id", "status")),
        sorted(CorrectionVote.objects.values_list("voter__username", "agree")),
        QuestionVersion.objects.count(),
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
    "analysis key changes",
    "analysis accuracy by key",
    "api analysis original keys",
    "analysis zip",
    "analysis report",
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
    "corrections page",
    "correction page",
    "correction vote",
    "correction rule",
    "version reverse",
    "bank zip",
    "bank json",
    "api corrections",
    "api correction create",
    "api correction vote",
    "api correction decision",
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
