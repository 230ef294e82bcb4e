"""Blinding by person, not by study (issue 25, finding 1).

Studies on one dataset share questions. A reader of study A who is (or is made) an expert or
PI of study B must not see the key, explanation or report of A's questions through anything B
serves: pages, API, exports, downloads. Adding such a role is refused with the conflict named;
a membership made behind the service's back (admin, factory) is refused at every expert/PI URL.
"""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import ReaderCompletion
from annotation.reviews import review_submit
from annotation.services import answer_submit
from readerstudy.models import Case, Membership, Question, ReaderStudy, Role
from readerstudy.services.studies import StudyError, membership_add
from tests.factories import (
    MembershipFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
)
from tests.readerstudy_tests.test_authorization_matrix import RATINGS, call, endpoints

pytestmark = pytest.mark.django_db
SENTINELS = ["A-KEY-EXPLANATION", "A-KEY-FINDINGS", "A-KEY-IMPRESSION"]


@pytest.fixture
def two_studies(study):
    """Study A (`study`) and study B on the same dataset, B holding all of A's questions."""
    Question.objects.filter(dataset=study.dataset).update(explanation="A-KEY-EXPLANATION")
    Case.objects.filter(dataset=study.dataset).update(
        findings="A-KEY-FINDINGS", impression="A-KEY-IMPRESSION"
    )
    b = ReaderStudyFactory(dataset=study.dataset, slug="study-b")
    for item in study.items.order_by("position"):
        StudyQuestionFactory(study=b, question=item.question, position=item.position)
    return study, b


@pytest.fixture
def person(two_studies):
    """A blinded reader of A who answered one case and has not finished."""
    a, _ = two_studies
    user = UserFactory(username="dual")
    MembershipFactory(study=a, user=user, role=Role.READER)
    answer_submit(reader=user, item=a.items.order_by("position").first(), choice="A")
    return user


@pytest.fixture
def b_pi(two_studies):
    _, b = two_studies
    user = UserFactory(username="b_pi")
    MembershipFactory(study=b, user=user, role=Role.PI)
    return user


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def test_the_pi_of_b_cannot_make_a_blind_reader_of_a_an_expert_of_b(
    client, two_studies, person, b_pi
):
    _, b = two_studies
    client.force_login(b_pi)
    for role in ("expert", "pi"):
        response = client.post(
            reverse("pi-members", args=[b.slug]), {"username": "dual", "role": role}, follow=True
        )
        page = response.content.decode()
        assert "dual is reading 4 of this study" in page and "blind" in page
        assert "another study" in page
        assert a_title_not_named(page, two_studies)
    assert not Membership.objects.filter(study=b, user=person).exists()


def a_title_not_named(page: str, two_studies) -> bool:
    a, _ = two_studies
    return a.title not in page and a.slug not in page


def test_an_expert_of_b_cannot_become_a_reader_of_a(two_studies):
    a, b = two_studies
    expert = UserFactory(username="b_expert")
    MembershipFactory(study=b, user=expert, role=Role.EXPERT)
    with pytest.raises(StudyError, match="cannot read them blind"):
        membership_add(study=a, user=expert, role=Role.READER)
    assert not Membership.objects.filter(study=a, user=expert).exists()


def test_a_reader_cannot_be_made_expert_of_their_own_study(two_studies, person):
    a, _ = two_studies
    with pytest.raises(
        StudyError, match="reading 4 of this study's questions blind as a reader here"
    ):
        membership_add(study=a, user=person, role=Role.EXPERT)


def test_a_study_sharing_no_question_is_not_a_conflict(study, person):
    other = ReaderStudyFactory(dataset=study.dataset, slug="disjoint")
    membership_add(study=other, user=person, role=Role.EXPERT)
    assert Membership.objects.filter(study=other, user=person, role=Role.EXPERT).exists()


@pytest.fixture
def dual_member(two_studies, person):
    """The conflict made behind the service's back (the admin, a script): expert and PI of B."""
    _, b = two_studies
    MembershipFactory(study=b, user=person, role=Role.EXPERT)
    MembershipFactory(study=b, user=person, role=Role.PI)
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=b, user=colleague, role=Role.EXPERT)
    item = b.items.order_by("position").first()
    review_submit(
        expert=colleague,
        item=item,
        flags=[],
        ratings=RATINGS,
        difficulty="easy",
        decision="accept",
        comment="review",
    )
    return person


def crawl(user, b) -> dict[str, tuple[int, str]]:
    """Every expert/PI endpoint of B, as `user`: status and body."""
    item = b.items.order_by("position").first()
    out = {}
    for endpoint in endpoints(b, item):
        if not endpoint.allowed & {"expert", "pi"}:
            continue
        response = call(endpoint, user, b)
        out[endpoint.name] = (response.status_code, _body(response))
    return out


def test_no_key_of_a_anywhere_b_reaches_for_a_person_in_both_roles(two_studies, dual_member):
    a, b = two_studies
    seen = crawl(dual_member, b)
    assert len(seen) >= 20  # pages, API, exports and downloads
    for name, (status, body) in seen.items():
        for sentinel in SENTINELS:
            assert sentinel not in body, (name, sentinel)
        assert status in (403, 404), (name, status)
    status, body = seen["api questions"]
    assert status == 403 and "blind" in body and a.title in body
    status, body = seen["dashboard"]
    assert status == 403 and "final" in body


def test_the_pages_open_once_the_reading_is_final(two_studies, dual_member):
    """The refusal is for while the reading is open; the same crawl then reaches the keys
    (which shows the crawl above reached pages that would have shown them)."""
    a, b = two_studies
    ReaderCompletion.objects.create(study=a, reader=dual_member, locked=False)
    assert crawl(dual_member, b)["api questions"][0] == 403  # final but not locked: still open
    ReaderCompletion.objects.filter(study=a, reader=dual_member).update(locked=True)
    seen = crawl(dual_member, b)
    assert seen["api questions"][0] == 200 and "A-KEY-EXPLANATION" in seen["api questions"][1]
    assert seen["dashboard"][0] == 200


def test_a_blind_reader_still_reads(client, two_studies, dual_member):
    a, _ = two_studies
    client.force_login(dual_member)
    response = client.get(reverse("reader-case", args=[a.slug, 1]))
    assert response.status_code == 200
    for sentinel in SENTINELS:
        assert sentinel not in response.content.decode()
    api = APIClient()
    api.force_login(dual_member)
    assert api.get(f"/api/v1/studies/{a.slug}/cases/").status_code == 200
    assert ReaderStudy.objects.count() == 2
