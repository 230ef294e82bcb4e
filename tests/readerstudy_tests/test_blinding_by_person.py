"""Blinding by person and by X-ray (issues 25 and 38).

What answers a question is its X-ray: its report, the keys and explanations of its other
questions, other readers' answers on it and the AI's answers. Study A's reader reads A's
X-rays blind; study B holds *other* questions on the same X-rays (and one X-ray of its own);
C is an aided study and D a crossover holding A's questions. A person reading A blind, made PI
or expert of B (either order, behind the service's back), or reading A (or D's unaided
session) while a reader of aided C, receives nothing of A's X-rays' answers from any page,
API, export or download of any of their studies: the crawl below asks every endpoint as each
of them. Each such membership is refused in words on every path that adds one.
"""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.corrections import correction_propose
from annotation.models import ReaderCompletion
from annotation.reviews import review_submit
from annotation.services import answer_submit, reader_finish
from readerstudy.blinding import Sight, may_see_answers, membership_conflict
from readerstudy.design.rules import Design, DesignError
from readerstudy.design.services import study_design_set
from readerstudy.models import Case, Membership, Question, ReaderStudy, Role
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import StudyError, membership_add
from readerstudy.services.versions import version_create
from tests.factories import (
    CaseFactory,
    DatasetFactory,
    MembershipFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
    build_study,
)
from tests.readerstudy_tests.test_authorization_matrix import RATINGS, call, endpoints

pytestmark = pytest.mark.django_db

# Everything that answers one of A's X-rays.
SENTINELS = [
    "A-XRAY-FINDINGS",
    "A-XRAY-IMPRESSION",
    "A-KEY-EXPLANATION",
    "B-KEY-EXPLANATION",
    "B-READER-COMMENT",
    "B-REVIEW",
    "B-AI-RATIONALE",
    "C-AI-RATIONALE",
    "B-PROPOSAL-NOTE",
    "B-PROPOSED-EXPLANATION",
    "D-CORRECTED-EXPLANATION",
    "D-KEY-CHANGE-RULE",  # the rule of D's correction: a row of D's key_changes table
]
AID_MODEL = "Aid-Model"


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def _predict(study, model: str, words: str) -> None:
    rows = "\n".join(f"{item.question.source_id},B,{words} picks B" for item in study.items.all())
    predictions_import(
        dataset=study.dataset,
        model_name=model,
        content=f"question_id,prediction,raw_response\n{rows}\n".encode(),
        replace=True,
    )


def _copy_study(a: ReaderStudy, slug: str, title: str) -> ReaderStudy:
    """A study on A's dataset holding A's questions."""
    other = ReaderStudyFactory(dataset=a.dataset, slug=slug, title=title)
    for item in a.items.order_by("position"):
        StudyQuestionFactory(study=other, question=item.question, position=item.position)
    return other


@pytest.fixture
def world(db):
    """A (read blind), B (other questions on A's X-rays), C (aided, A's questions), D
    (crossover, A's questions), each with a PI; B with another reader's answers, a review
    and a model; C and D showing the AI's words."""
    a = build_study(4, images_per_case=2, slug="study-a", title="Reading study A")
    Question.objects.filter(dataset=a.dataset).update(explanation="A-KEY-EXPLANATION")
    Case.objects.filter(dataset=a.dataset).update(
        findings="A-XRAY-FINDINGS", impression="A-XRAY-IMPRESSION"
    )
    b = ReaderStudyFactory(dataset=a.dataset, slug="study-b", title="Other study B")
    for position, item in enumerate(a.items.order_by("position")):
        question = QuestionFactory(
            dataset=a.dataset,
            case=item.question.case,
            text=f"Another question on X-ray {position}?",
            explanation="B-KEY-EXPLANATION",
        )
        StudyQuestionFactory(study=b, question=question, position=position)
    StudyQuestionFactory(
        study=b,
        position=9,
        question=QuestionFactory(dataset=a.dataset, case=CaseFactory(dataset=a.dataset)),
    )
    _predict(b, "B-Model", "B-AI-RATIONALE")
    b_reader, b_expert = UserFactory(username="b_reader"), UserFactory(username="b_expert")
    MembershipFactory(study=b, user=b_reader, role=Role.READER)
    MembershipFactory(study=b, user=b_expert, role=Role.EXPERT)
    for item in b.items.all():
        answer_submit(reader=b_reader, item=item, choice="C", comment="B-READER-COMMENT")
    review_submit(
        expert=b_expert,
        item=b.items.order_by("position").first(),
        flags=[],
        ratings=RATINGS,
        difficulty="easy",
        decision="accept",
        comment="B-REVIEW",
    )
    c = _copy_study(a, "study-c", "Aided study C")
    d = _copy_study(a, "study-d", "Crossover D")
    _predict(a, AID_MODEL, "C-AI-RATIONALE")
    study_design_set(
        study=c, design=Design(arms="aided", aid_model=AID_MODEL, aid_mode="concurrent")
    )
    study_design_set(
        study=d,
        design=Design(arms="unaided,aided", aid_model=AID_MODEL, aid_mode="concurrent"),
    )
    for study in (a, b, c, d):
        MembershipFactory(study=study, user=UserFactory(username=f"pi_{study.slug}"), role="pi")
    # Corrections (issue 35): an open proposal in B on another question of A's X-ray, and a
    # correction D accepted on A's own first question (a new key and explanation).
    correction_propose(
        expert=b_expert,
        item=b.items.order_by("position").first(),
        base=1,
        error_type="wrong_key",
        values={"correct": "D", "explanation": "B-PROPOSED-EXPLANATION"},
        note="B-PROPOSAL-NOTE",
    )
    version_create(
        question=a.items.order_by("position").first().question,
        changes={"correct": "D", "accepted": "D", "explanation": "D-CORRECTED-EXPLANATION"},
        study=d,
        rule="D-KEY-CHANGE-RULE (a PI's decision)",
        error_type="wrong_key",
    )
    return {"a": a, "b": b, "c": c, "d": d}


def _reader_of(study, user) -> None:
    """A reader of `study` who answered one case and has not finished."""
    MembershipFactory(study=study, user=user, role=Role.READER)
    answer_submit(reader=user, item=study.items.order_by("position").first(), choice="A")


@pytest.fixture
def people(world):
    """The people the red team named, their memberships made behind the service's back (a
    shell, the admin of old), so that only the access checks stand between them and B/C."""
    a, b, c, d = (world[k] for k in "abcd")
    out = {}
    blind_pi = out["blind_pi"] = UserFactory(username="blind_pi")
    _reader_of(a, blind_pi)
    MembershipFactory(study=b, user=blind_pi, role=Role.PI)
    pi_first = out["pi_then_reader"] = UserFactory(username="pi_then_reader")
    MembershipFactory(study=b, user=pi_first, role=Role.PI)
    MembershipFactory(study=b, user=pi_first, role=Role.EXPERT)
    _reader_of(a, pi_first)
    blind_expert = out["blind_expert"] = UserFactory(username="blind_expert")
    _reader_of(a, blind_expert)
    MembershipFactory(study=b, user=blind_expert, role=Role.EXPERT)
    unaided = out["unaided_aided"] = UserFactory(username="unaided_aided")
    _reader_of(a, unaided)
    MembershipFactory(study=c, user=unaided, role=Role.READER)
    crossover = out["crossover_unaided"] = UserFactory(username="crossover_unaided")
    MembershipFactory(study=d, user=crossover, role=Role.READER)
    from readerstudy.models import ReaderAssignment

    ReaderAssignment.objects.create(study=d, reader=crossover, first_arm="unaided", order_seed=1)
    MembershipFactory(study=c, user=crossover, role=Role.READER)
    return out


def crawl(user, studies, only=None) -> dict[tuple[str, str], tuple[int, str]]:
    """Every endpoint (or those named in `only`) of each of `studies`, as `user`: status and
    body."""
    out = {}
    for study in studies:
        item = study.items.order_by("position").first()
        for endpoint in endpoints(study, item):
            if only is not None and endpoint.name not in only:
                continue
            response = call(endpoint, user, study)
            out[(study.slug, endpoint.name)] = (response.status_code, _body(response))
    return out


def _leaks(seen) -> list:
    return [
        (where, sentinel)
        for where, (_, body) in seen.items()
        for sentinel in SENTINELS
        if sentinel in body
    ]


def _memberships(user) -> list[ReaderStudy]:
    return list(ReaderStudy.objects.filter(memberships__user=user).distinct().order_by("slug"))


@pytest.mark.parametrize(
    "name", ["blind_pi", "pi_then_reader", "blind_expert", "unaided_aided", "crossover_unaided"]
)
def test_the_crawl_finds_nothing_of_the_xrays_a_person_reads_blind(world, people, name):
    """Every page, API, export and download of every study the person belongs to."""
    user = people[name]
    studies = _memberships(user)
    seen = crawl(user, studies)
    assert len(seen) >= 2 * 30
    assert _leaks(seen) == []
    assert all(status < 500 for status, _ in seen.values())
    if name in ("blind_pi", "pi_then_reader", "blind_expert"):
        status, body = seen[("study-b", "api questions")]
        assert status == 403 and "blind" in body and "Reading study A" in body
        assert seen[("study-b", "expert queue")][0] == 403
    else:
        status, body = seen[("study-c", "reader case")]
        assert status == 403 and "unaided" in body and "AI" in body
        assert seen[("study-c", "api cases")][0] == 403
    # Their own blind reading goes on.
    own = "study-d" if name == "crossover_unaided" else "study-a"
    assert seen[(own, "reader case")][0] == 200


def test_the_same_crawl_reaches_the_answers_once_the_reading_is_final(world, people):
    """The positive control: the refusals above are all that stood between them and the
    answers (so the crawl reaches pages that show them)."""
    a, d = world["a"], world["d"]
    for name in ("blind_pi", "unaided_aided"):
        ReaderCompletion.objects.create(study=a, reader=people[name], locked=False)
    keys = [
        "api questions",
        "expert review page",
        "feedback csv",
        "reviews csv",
        "dashboard",
        "api corrections",
        "bank json",
    ]
    assert crawl(people["blind_pi"], [world["b"]], keys)[("study-b", "api questions")][0] == 403
    ReaderCompletion.objects.filter(study=a).update(locked=True)
    opened = crawl(people["blind_pi"], [world["b"]], keys)
    assert opened[("study-b", "api questions")][0] == 200
    assert {s for _, s in _leaks(opened)} >= {
        "B-KEY-EXPLANATION",
        "A-XRAY-FINDINGS",
        "B-READER-COMMENT",
        "B-REVIEW",
        "B-PROPOSAL-NOTE",
        "B-PROPOSED-EXPLANATION",
    }
    # D's correction of A's question is reachable where it may be: D's own bank.
    pi_d = Membership.objects.get(study=d, role=Role.PI).user
    bank = crawl(pi_d, [d], ["bank json"])[("study-d", "bank json")]
    assert bank[0] == 200 and "D-CORRECTED-EXPLANATION" in bank[1]
    # ... and D's analysis: the key change, in its key_changes table (issue 35).
    tables = crawl(pi_d, [d], ["analysis key changes"])
    assert "D-KEY-CHANGE-RULE" in tables[("study-d", "analysis key changes")][1]
    seen = crawl(people["unaided_aided"], [world["c"]], ["reader case", "api cases"])
    assert seen[("study-c", "reader case")][0] == 200
    assert "C-AI-RATIONALE" in seen[("study-c", "reader case")][1]
    # The crossover reader: their unaided session (1) final, the aided study opens.
    crossover = people["crossover_unaided"]
    reader_finish(reader=crossover, study=d)
    assert ReaderCompletion.objects.filter(study=d, reader=crossover, session=1).exists()
    assert may_see_answers(crossover, a.items.first().question.case, Sight.AI)
    assert crawl(crossover, [world["c"]], ["reader case"])[("study-c", "reader case")][0] == 200


def test_a_crossovers_own_aided_session_is_not_a_conflict(world):
    """The crossover shows its own readers the AI by design (behind the washout)."""
    d = world["d"]
    reader = UserFactory(username="plain_crossover")
    membership_add(study=d, user=reader, role=Role.READER)
    client = APIClient()
    client.force_login(reader)
    assert client.get(f"/api/v1/studies/{d.slug}/cases/").status_code == 200


# Refused in words, both orders, every path that adds a member.


def test_reader_of_a_then_pi_or_expert_of_b_is_refused_naming_the_person_and_xrays(client, world):
    a, b = world["a"], world["b"]
    dual = UserFactory(username="dual")
    membership_add(study=a, user=dual, role=Role.READER)
    client.force_login(Membership.objects.get(study=b, role=Role.PI).user)
    xrays = sorted(a.items.values_list("question__case__study_id", flat=True))
    for role in ("expert", "pi"):
        response = client.post(
            reverse("pi-members", args=[b.slug]), {"username": "dual", "role": role}, follow=True
        )
        page = response.content.decode()
        assert "dual is reading 4 of this study&#x27;s X-rays" in page
        assert all(x in page for x in xrays) and "in another study" in page
        assert a.title not in page and a.slug not in page
    assert not Membership.objects.filter(study=b, user=dual).exists()


def test_pi_or_expert_of_b_then_reader_of_a_is_refused(world):
    a, b = world["a"], world["b"]
    for role in (Role.PI, Role.EXPERT):
        person = UserFactory(username=f"first_{role}")
        membership_add(study=b, user=person, role=role)
        with pytest.raises(StudyError, match=r"sees the answers of 4 of this study's X-rays"):
            membership_add(study=a, user=person, role=Role.READER)
        assert not Membership.objects.filter(study=a, user=person).exists()


def test_unaided_reader_then_aided_reader_and_the_reverse_are_refused(world):
    a, c, d = world["a"], world["c"], world["d"]
    unaided = UserFactory(username="unaided_first")
    membership_add(study=a, user=unaided, role=Role.READER)
    for aided in (c, d):
        with pytest.raises(StudyError, match=r"unaided in another study.*AI's answers"):
            membership_add(study=aided, user=unaided, role=Role.READER)
    aided_first = UserFactory(username="aided_first")
    membership_add(study=c, user=aided_first, role=Role.READER)
    for unaided_study in (a, d):
        with pytest.raises(StudyError, match="shown the AI's answers on 4 of this study"):
            membership_add(study=unaided_study, user=aided_first, role=Role.READER)


def test_a_design_giving_a_study_an_aided_arm_is_refused_for_its_unaided_readers(world):
    a = world["a"]
    e = _copy_study(a, "study-e", "Study E")
    person = UserFactory(username="reads_a")
    membership_add(study=a, user=person, role=Role.READER)
    membership_add(study=e, user=person, role=Role.READER)  # both unaided: no conflict
    refusal = r"reads_a is reading 4 of this study's X-rays \(.*\) unaided"
    with pytest.raises(DesignError, match=refusal):
        study_design_set(
            study=e, design=Design(arms="aided", aid_model=AID_MODEL, aid_mode="concurrent")
        )
    assert ReaderStudy.objects.get(pk=e.pk).arms == "unaided"


def test_the_invitation_path_refuses_too(client, world):
    a, b = world["a"], world["b"]
    dual = UserFactory(username="dual")
    membership_add(study=a, user=dual, role=Role.READER)
    client.force_login(Membership.objects.get(study=b, role=Role.PI).user)
    response = client.post(
        reverse("pi-invite", args=[b.slug]), {"people": "dual", "role": "expert"}
    )
    page = response.content.decode()
    assert "Nobody was added" in page and "dual is reading 4 of this study" in page
    assert not Membership.objects.filter(study=b, user=dual).exists()


def test_the_admin_refuses_too(client, world):
    a, b = world["a"], world["b"]
    dual = UserFactory(username="dual")
    membership_add(study=a, user=dual, role=Role.READER)
    client.force_login(UserFactory(username="admin", is_staff=True, is_superuser=True))
    response = client.post(
        reverse("admin:readerstudy_membership_add"),
        {"study": b.pk, "user": dual.pk, "role": "pi", "seniority": ""},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "dual is reading 4 of this study" in response.content.decode()
    assert not Membership.objects.filter(study=b, user=dual).exists()


def test_the_command_refuses_too(world, tmp_path):
    a = world["a"]
    dual = UserFactory(username="dual")
    membership_add(study=a, user=dual, role=Role.READER)
    with pytest.raises(CommandError, match="dual is reading"):
        call_command(
            "create_study",
            "study-f",
            "--dataset",
            a.dataset.name,
            "--sample",
            "4",
            "--pis",
            "dual",
        )
    assert not ReaderStudy.objects.filter(slug="study-f").exists()


def test_the_count_is_of_this_studys_xrays_once_each(world):
    """Reading A and a copy of it blind is still 4 of B's X-rays (not 8)."""
    a, b = world["a"], world["b"]
    twice = UserFactory(username="twice")
    membership_add(study=a, user=twice, role=Role.READER)
    membership_add(study=_copy_study(a, "a-copy", "A copy"), user=twice, role=Role.READER)
    conflict = membership_conflict(user=twice, study=b, role=Role.PI)
    assert conflict.startswith("twice is reading 4 of this study's X-rays (")


def test_a_reader_cannot_be_made_expert_of_their_own_study(world):
    a = world["a"]
    reader = UserFactory(username="own")
    membership_add(study=a, user=reader, role=Role.READER)
    with pytest.raises(StudyError, match="blind as a reader here;"):
        membership_add(study=a, user=reader, role=Role.EXPERT)


def test_a_study_sharing_no_xray_is_not_a_conflict(world):
    a = world["a"]
    elsewhere = build_study(2, dataset=a.dataset, slug="disjoint")
    reader = UserFactory(username="fine")
    membership_add(study=a, user=reader, role=Role.READER)
    membership_add(study=elsewhere, user=reader, role=Role.EXPERT)
    assert Membership.objects.filter(study=elsewhere, user=reader, role=Role.EXPERT).exists()


def test_the_same_xray_in_another_dataset_is_the_same_xray(world):
    """The same StudyInstanceUID, or an image with the same pixels, in another dataset (the
    same file imported twice)."""
    a = world["a"]
    cases = list(Case.objects.filter(questions__study_items__study=a).order_by("pk"))
    Case.objects.filter(pk=cases[0].pk).update(study_instance_uid="1.2.3.4")
    other_set = DatasetFactory(name="re-import")
    by_uid = CaseFactory(dataset=other_set, study_instance_uid="1.2.3.4")
    by_pixels = CaseFactory(dataset=other_set)
    by_pixels.images.create(
        position=0, source_path="/x.png", display=cases[1].images.first().display
    )
    unrelated = CaseFactory(dataset=other_set)
    reader = UserFactory(username="blind")
    membership_add(study=a, user=reader, role=Role.READER)
    assert not may_see_answers(reader, by_uid)
    assert not may_see_answers(reader, by_pixels)
    assert may_see_answers(reader, unrelated)
    copy = ReaderStudyFactory(dataset=other_set, slug="reimport")
    StudyQuestionFactory(study=copy, question=QuestionFactory(dataset=other_set, case=by_uid))
    with pytest.raises(StudyError, match=r"reading 1 of this study's X-ray \("):
        membership_add(study=copy, user=reader, role=Role.PI)


def test_may_see_answers_is_the_one_question(world):
    a = world["a"]
    case = a.items.first().question.case
    reader = UserFactory(username="asks")
    pi = Membership.objects.get(study=a, role=Role.PI).user
    assert may_see_answers(pi, case)  # a PI who reads nothing blind sees everything
    membership_add(study=a, user=reader, role=Role.READER)
    assert not may_see_answers(reader, case)
    assert not may_see_answers(reader, case, Sight.AI)
    reader_finish(reader=reader, study=a)
    assert may_see_answers(reader, case) and may_see_answers(reader, case, Sight.AI)


def test_a_blind_reader_still_reads(client, world, people):
    a = world["a"]
    client.force_login(people["blind_pi"])
    response = client.get(reverse("reader-case", args=[a.slug, 1]))
    assert response.status_code == 200
    for sentinel in SENTINELS:
        assert sentinel not in response.content.decode()
