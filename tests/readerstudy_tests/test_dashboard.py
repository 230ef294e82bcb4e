"""PI dashboard: progress, exclusions with reasons, memberships, study creation, exports."""

import csv
import io

import pandas as pd
import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from analysis.pipeline import fast_mask
from annotation.reviews import review_submit
from annotation.services import answer_submit, reader_finish
from readerstudy.models import AuditEvent, Membership, ReaderStudy, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 2,
    "explanation_clarity": 3,
    "factual_correctness": 4,
    "image_alignment": 1,
}


@pytest.fixture
def pi_client(client, pi):
    client.force_login(pi)
    return client


def test_reader_progress_and_times(pi_client, study, reader, other_reader):
    items = list(study.items.order_by("position"))
    for item, ms in zip(items, [10_000, 20_000, 60_000], strict=False):
        answer_submit(reader=reader, item=item, choice="A", time_ms=ms)
    reader_finish(reader=reader, study=study)
    html = pi_client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "3 / 4" in html and "20 s" in html and "1 min 30 s" in html
    assert "0 / 4" in html  # other_reader has not started


def test_answers_faster_than_the_policy_are_counted_and_marked_in_the_export(
    pi_client, study, reader, other_reader, settings
):
    settings.FAST_ANSWER_MS = 2000
    items = list(study.items.order_by("position"))
    for item, ms in zip(items, [150, 1999, 2000, 30_000], strict=True):
        answer_submit(reader=reader, item=item, choice="A", time_ms=ms)
    answer_submit(reader=other_reader, item=items[0], choice="B", time_ms=9_000)
    html = pi_client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "Too fast (&lt; 2 s)" in html
    row = html[html.index("<td>reader</td>") :].split("</tr>")[0]
    assert '<strong class="warning">2</strong>' in row  # 150 ms and 1999 ms; 2000 ms is not
    other = html[html.index("<td>other_reader</td>") :].split("</tr>")[0]
    assert "warning" not in other
    feedback = list(
        csv.DictReader(
            io.StringIO(
                pi_client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
            )
        )
    )
    fast = {(r["reader"], r["time_ms"]): r["too_fast"] for r in feedback}
    assert fast == {
        ("reader", "150"): "True",
        ("reader", "1999"): "True",
        ("reader", "2000"): "False",
        ("reader", "30000"): "False",
        ("other_reader", "9000"): "False",
    }


def test_exclusion_needs_a_reason_and_is_recorded(pi_client, study, pi):
    item = study.items.first()
    url = reverse("pi-exclusion", args=[study.slug, item.id])
    pi_client.post(url, {"action": "exclude", "reason": ""})
    item.refresh_from_db()
    assert not item.excluded
    pi_client.post(url, {"action": "exclude", "reason": "image is a leg"})
    item.refresh_from_db()
    assert item.excluded and item.excluded_reason == "image is a leg"
    assert item.excluded_by == pi and item.excluded_at is not None
    event = AuditEvent.objects.get(action="question.exclude")
    assert event.actor == pi and event.detail["reason"] == "image is a leg"
    html = pi_client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "1 excluded from analysis" in html and "image is a leg" in html
    queue = pi_client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    assert "Excluded" in queue
    pi_client.post(url, {"action": "include", "reason": "second look: fine"})
    item.refresh_from_db()
    assert not item.excluded
    assert AuditEvent.objects.filter(action="question.include").exists()


def test_flagged_questions_listed_with_counts(pi_client, study, expert):
    item = study.items.first()
    review_submit(
        expert=expert,
        item=item,
        flags=["image_mismatch", "hallucinated"],
        ratings=RATINGS,
        difficulty="hard",
        decision="reject",
    )
    html = pi_client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "Image does not match the question × 1" in html
    assert "Finding not supported by the report × 1" in html


def test_membership_add_and_remove_are_audited(pi_client, study, pi):
    newcomer = UserFactory(username="newcomer")
    url = reverse("pi-members", args=[study.slug])
    pi_client.post(url, {"username": "newcomer", "role": "reader"})
    membership = Membership.objects.get(user=newcomer)
    assert membership.role == Role.READER
    pi_client.post(url, {"remove": membership.id, "confirm": "yes"})
    assert not Membership.objects.filter(user=newcomer).exists()
    actions = list(AuditEvent.objects.filter(actor=pi).values_list("action", flat=True))
    assert "membership.add" in actions and "membership.remove" in actions
    response = pi_client.post(url, {"username": "ghost", "role": "reader"}, follow=True)
    assert "No user named" in response.content.decode()


def test_last_pi_cannot_be_removed(pi_client, study, pi):
    membership = Membership.objects.get(user=pi, role=Role.PI)
    pi_client.post(
        reverse("pi-members", args=[study.slug]), {"remove": membership.id, "confirm": "yes"}
    )
    assert Membership.objects.filter(id=membership.id).exists()


def test_reviews_and_feedback_csv(pi_client, study, reader, expert):
    item = study.items.first()
    item.excluded = True
    item.save()
    answer_submit(
        reader=reader,
        item=item,
        choice="B",
        difficulty="hard",
        alignment="no",
        comment="leg film",
        time_ms=5000,
    )
    review_submit(
        expert=expert,
        item=item,
        flags=["image_mismatch"],
        ratings=RATINGS,
        difficulty="hard",
        decision="reject",
        comment="not a chest",
    )
    reviews = list(
        csv.DictReader(
            io.StringIO(
                pi_client.get(reverse("pi-reviews-csv", args=[study.slug])).content.decode()
            )
        )
    )
    assert len(reviews) == 1
    row = reviews[0]
    assert row["expert"] == "expert" and row["flag_image_mismatch"] == "True"
    assert row["flags"] == "Image does not match the question"  # in words, as on the pages
    assert row["decision"] == "reject" and row["image_alignment"] == "1"
    assert row["excluded"] == "True" and row["comment"] == "not a chest"
    feedback = list(
        csv.DictReader(
            io.StringIO(
                pi_client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
            )
        )
    )
    assert feedback[0]["reader"] == "reader" and feedback[0]["alignment"] == "no"
    assert feedback[0]["comment"] == "leg film" and feedback[0]["excluded"] == "True"


@pytest.mark.parametrize("persona", ["reader", "expert", "outsider"])
def test_only_pis_manage_the_study(client, study, request, persona):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    item = study.items.first()
    assert client.get(reverse("pi-dashboard", args=[study.slug])).status_code == 404
    assert (
        client.post(
            reverse("pi-exclusion", args=[study.slug, item.id]),
            {"action": "exclude", "reason": "x"},
        ).status_code
        == 404
    )
    assert (
        client.post(
            reverse("pi-members", args=[study.slug]), {"username": user.username, "role": "pi"}
        ).status_code
        == 404
    )
    assert client.get(reverse("pi-reviews-csv", args=[study.slug])).status_code == 404
    assert client.get(reverse("pi-feedback-csv", args=[study.slug])).status_code == 404
    item.refresh_from_db()
    assert not item.excluded
    assert not Membership.objects.filter(user=user, role=Role.PI).exists()


def test_create_study_through_the_form(client, study, resources):
    from readerstudy.models import Image

    Image.objects.update(source_path=str(resources / "tiny_8bit.png"), display="")
    creator = UserFactory(username="creator")
    client.force_login(creator)
    assert client.get(reverse("study-create")).status_code == 403
    creator.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    response = client.post(
        reverse("study-create"),
        {
            "dataset": study.dataset.id,
            "slug": "from-form",
            "title": "From the form",
            "sample": 3,
            "seed": 1,
            "stratify": "none",
            "random_order": "on",
        },
    )
    assert response.status_code == 302
    created = ReaderStudy.objects.get(slug="from-form")
    assert created.items.count() == 3 and not created.allow_revision
    assert Membership.objects.filter(study=created, user=creator, role=Role.PI).exists()
    assert Image.objects.exclude(display="").exists()
    response = client.post(
        reverse("study-create"),
        {
            "dataset": study.dataset.id,
            "slug": "too-big",
            "title": "x",
            "sample": 99,
            "seed": 1,
            "stratify": "none",
        },
    )
    assert "only 4 are available" in response.content.decode()
    assert not ReaderStudy.objects.filter(slug="too-big").exists()


def test_admin_lists_every_model(admin_client, study, reader, expert):
    answer_submit(reader=reader, item=study.items.first(), choice="A")
    review_submit(
        expert=expert,
        item=study.items.first(),
        flags=[],
        ratings=RATINGS,
        difficulty="easy",
        decision="accept",
    )
    for name in [
        "readerstudy/dataset",
        "readerstudy/case",
        "readerstudy/image",
        "readerstudy/question",
        "readerstudy/readerstudy",
        "readerstudy/studyquestion",
        "readerstudy/membership",
        "readerstudy/auditevent",
        "annotation/answer",
        "annotation/answerrevision",
        "annotation/readercompletion",
        "annotation/expertreview",
        "predictions/aimodel",
        "predictions/prediction",
    ]:
        response = admin_client.get(f"/admin/{name}/?q=x")
        assert response.status_code == 200, name


def test_any_question_can_be_excluded_from_its_review_page(pi_client, study):
    item = study.items.last()
    html = pi_client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    assert "Exclude from analysis" in html
    assert reverse("pi-exclusion", args=[study.slug, item.id]) in html


def test_an_answer_without_a_recorded_time_is_not_called_too_fast_anywhere(
    pi_client, study, reader, settings
):
    """An answer with no reading time (the API without `time_ms`) is "not recorded" on the
    dashboard and in the answers export, as in the analysis' flow table: not too fast."""
    settings.FAST_ANSWER_MS = 2000
    items = list(study.items.order_by("position"))
    answer_submit(reader=reader, item=items[0], choice="A", time_ms=0)
    answer_submit(reader=reader, item=items[1], choice="A", time_ms=500)
    html = pi_client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    row = html[html.index("<td>reader</td>") :].split("</tr>")[0]
    assert '<strong class="warning">1</strong>' in row  # the 500 ms answer only
    feedback = pi_client.get(reverse("pi-feedback-csv", args=[study.slug])).content.decode()
    fast = {r["time_ms"]: r["too_fast"] for r in csv.DictReader(io.StringIO(feedback))}
    assert fast == {"0": "False", "500": "True"}
    flow = fast_mask(
        pd.DataFrame({"time_ms": [0, 500], "answer": ["A", "A"], "rater_kind": "human"}), 2000
    )
    assert flow.tolist() == [False, True]  # the analysis' rule, the same answers
