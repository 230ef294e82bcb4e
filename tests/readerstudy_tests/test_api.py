"""REST API behaviour: the same services and blinding as the pages."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Answer, AnswerRevision, ExpertReview
from annotation.selectors import ordered_item_ids
from readerstudy.predictions.models import Prediction

pytestmark = pytest.mark.django_db
REVIEW = {
    "clinical_quality": 4,
    "explanation_clarity": 4,
    "factual_correctness": 5,
    "image_alignment": 1,
    "difficulty": "hard",
    "decision": "reject",
    "flags": ["image_mismatch"],
    "comment": "leg",
}


def api(user=None, token=False):
    client = APIClient()
    if user is not None:
        if token:
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        else:
            client.force_authenticate(user)
    return client


def test_my_studies_with_progress(study, reader):
    response = api(reader).get("/api/v1/studies/")
    assert response.status_code == 200
    [row] = response.json()["results"]
    assert row["slug"] == study.slug and row["roles"] == ["reader"]
    assert row["progress"] == {
        "answered": 0,
        "total": 4,
        "finished": False,
        "locked": False,
        "session": 1,
        "sessions": 1,
        "arm": "unaided",
        "opens_at": None,
        "washout": "",
    }


def test_token_authentication(study, reader):
    assert api(reader, token=True).get("/api/v1/studies/").status_code == 200
    assert APIClient().get("/api/v1/studies/").status_code in (401, 403)


def test_obtain_token_with_password(reader):
    from tests.factories import PASSWORD

    response = APIClient().post("/api/v1/auth/token/", {"username": "reader", "password": PASSWORD})
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_cases_are_blinded_and_paginated(study, reader):
    response = api(reader).get(f"/api/v1/studies/{study.slug}/cases/")
    body = response.json()
    assert body["count"] == 4 and len(body["results"]) == 4 and body["next"] is None
    first = body["results"][0]
    assert set(first) == {
        "number",
        "total",
        "question",
        "options",
        "images",
        "indication",
        "age",
        "sex",
        "answer",
        "editable",
        "layout",  # a stamp of the design the case was shown under (sent back with answers)
        "words",  # a stamp of the question's words shown (sent back: the answer's version)
    }
    assert [o["letter"] for o in first["options"]] == ["A", "B", "C", "D"]
    assert len(first["images"]) == 2
    assert "correct" not in response.content.decode().lower().replace("correct_", "")


def test_case_detail_matches_reader_order(study, reader):
    order = ordered_item_ids(study, reader)
    question = study.items.get(id=order[2]).question
    body = api(reader).get(f"/api/v1/studies/{study.slug}/cases/3/").json()
    assert body["question"] == question.text and body["number"] == 3
    assert api(reader).get(f"/api/v1/studies/{study.slug}/cases/9/").status_code == 404


def test_answer_created_unchanged_revised_and_rejected(study, reader):
    client = api(reader)
    url = f"/api/v1/studies/{study.slug}/cases/1/answer/"
    first = client.put(url, {"choice": "B", "difficulty": "easy", "time_ms": 1200}, format="json")
    assert first.status_code == 201 and first.json()["outcome"] == "created"
    again = client.put(url, {"choice": "B", "difficulty": "easy", "time_ms": 1200}, format="json")
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    changed = client.put(url, {"choice": "C", "difficulty": "easy"}, format="json")
    assert changed.json()["outcome"] == "revised" and changed.json()["revisions_count"] == 1
    assert Answer.objects.count() == 1 and AnswerRevision.objects.count() == 1
    bad = client.put(url, {"choice": "E"}, format="json")
    assert bad.status_code == 400 and "choice" in bad.json()["errors"]
    study.allow_revision = False
    study.save()
    conflict = client.put(url, {"choice": "D"}, format="json")
    assert conflict.status_code == 409 and "does not allow" in conflict.json()["detail"]
    assert Answer.objects.get().choice == "C"


def test_expert_questions_include_truth_with_filters(study, expert):
    item = study.items.first()
    item.excluded = True
    item.save()
    body = api(expert).get(f"/api/v1/studies/{study.slug}/questions/").json()
    assert body["count"] == 4
    row = body["results"][0]
    assert row["correct"] in "ABCD" and "findings" in row["case"]
    only_excluded = (
        api(expert).get(f"/api/v1/studies/{study.slug}/questions/", {"excluded": "true"}).json()
    )
    assert [r["item_id"] for r in only_excluded["results"]] == [item.id]
    presence = (
        api(expert).get(f"/api/v1/studies/{study.slug}/questions/", {"task": "presence"}).json()
    )
    assert all(r["task"] == "Presence Assessment" for r in presence["results"])


def test_reviews_create_and_list(study, expert, pi):
    item = study.items.first()
    url = f"/api/v1/studies/{study.slug}/reviews/"
    created = api(expert).post(url, {**REVIEW, "item_id": item.id}, format="json")
    assert created.status_code == 201 and created.json()["flags"] == ["image_mismatch"]
    assert ExpertReview.objects.get().decision == "reject"
    listed = api(pi).get(url, {"decision": "reject"}).json()
    assert listed["count"] == 1 and listed["results"][0]["expert"] == "expert"
    assert api(pi).post(url, {**REVIEW, "item_id": item.id}, format="json").status_code == 404
    wrong = api(expert).post(url, {**REVIEW, "item_id": 999999}, format="json")
    assert wrong.status_code == 400


def test_pi_uploads_predictions_and_reads_analysis(study, pi, reader, settings):
    rows = "\n".join(f"{i.question.source_id},B" for i in study.items.all())
    upload = SimpleUploadedFile("preds.csv", f"question_id,prediction\n{rows}\n".encode())
    response = api(pi).post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "gpt", "file": upload},
        format="multipart",
    )
    assert response.status_code == 201 and response.json()["predictions"] == 4
    assert Prediction.objects.count() == 4
    analysis = api(pi).get(f"/api/v1/studies/{study.slug}/analysis/").json()
    assert analysis["readers_not_started"] == ["reader"]
    assert {row["rater"] for row in analysis["accuracy"]} == {"gpt"}
    api(reader).put(f"/api/v1/studies/{study.slug}/cases/1/answer/", {"choice": "A"})
    analysis = api(pi).get(f"/api/v1/studies/{study.slug}/analysis/").json()
    assert analysis["readers_not_started"] == []
    raters = {row["rater"] for row in analysis["accuracy"]}
    assert raters == {"gpt", "Reader 1"}
    assert analysis["kappa"]["All"]["raters"] == ["Reader 1", "gpt"]
    assert analysis["policy"]["missing"] == "wrong"
    assert analysis["policy"]["kappa_scale"] == "answer"


def test_prediction_upload_limits(study, pi, settings):
    settings.PREDICTION_UPLOAD_MAX_BYTES = 10
    big = SimpleUploadedFile("p.csv", b"question_id,prediction\nq1,A\n")
    response = api(pi).post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "m", "file": big},
        format="multipart",
    )
    assert response.status_code == 413
    settings.PREDICTION_UPLOAD_MAX_BYTES = 10_000
    binary = SimpleUploadedFile("p.csv", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    response = api(pi).post(
        f"/api/v1/studies/{study.slug}/predictions/",
        {"model": "m", "file": binary},
        format="multipart",
    )
    assert response.status_code == 400 and "not UTF-8" in response.json()["detail"]
    assert not Prediction.objects.exists()


def test_schema_and_docs_are_served(client, outsider):
    client.force_login(outsider)  # anyone signed in; anonymous only with API_DOCS_PUBLIC
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/v1/studies/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"<script" in docs.content
    assert b"cdn" not in docs.content.lower()


def test_schema_and_docs_ask_anonymous_visitors_to_sign_in(client, settings):
    """Finding 12: they were open to anyone; API_DOCS_PUBLIC=1 opens them on purpose."""
    assert settings.API_DOCS_PUBLIC is False  # the default
    schema = client.get("/api/schema/")
    assert schema.status_code == 401 and b"/api/v1/" not in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 302 and docs["Location"].startswith("/accounts/login/")
    settings.API_DOCS_PUBLIC = True
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


def test_token_endpoint_rejects_oversized_credentials_cleanly(reader):
    """A 300-character username once overflowed the login-failure record on PostgreSQL (500)."""
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "u" * 300, "password": "x"}, format="json"
    )
    assert response.status_code == 400 and "username" in response.json()["errors"]
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "reader", "password": "x" * 5000}, format="json"
    )
    assert response.status_code == 400 and "password" in response.json()["errors"]


def test_analysis_policy_parameters_are_validated_like_the_page(study, pi, reader):
    api(reader).put(f"/api/v1/studies/{study.slug}/cases/1/answer/", {"choice": "A"})
    url = f"/api/v1/studies/{study.slug}/analysis/"
    assert api(pi).get(url, {"missing": "sometimes"}).status_code == 400
    assert api(pi).get(url, {"scale": "letters"}).status_code == 400
    wrong = api(pi).get(url).json()
    left_out = api(pi).get(url, {"missing": "exclude", "ci": "clopper-pearson"}).json()
    assert wrong["policy"]["missing"] == "wrong"
    assert left_out["policy"]["missing"] == "exclude"
    assert left_out["policy"]["ci_method"] == "clopper-pearson"
    n = {r["task"]: r["n"] for r in wrong["accuracy"] if r["rater"] == "Reader 1"}
    m = {r["task"]: r["n"] for r in left_out["accuracy"] if r["rater"] == "Reader 1"}
    assert n["All"] == 4 and m["All"] == 1
