"""seed_demo: real radiographs, all five tasks, users, idempotent."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Answer, ReaderCompletion
from readerstudy.blinding import membership_conflict
from readerstudy.models import Image, ItemAid, Membership, Question, ReaderStudy, Role, Task
from readerstudy.selectors import design_sentence

pytestmark = pytest.mark.django_db


def authenticate(*, username: str, password: str):
    user = get_user_model().objects.get(username=username)
    return user if user.check_password(password) else None


def test_seed_demo_is_complete_and_idempotent(derive_once):
    out = StringIO()
    call_command("seed_demo", "--password", "pw-for-tests-1", stdout=out)
    assert "reader1" in out.getvalue() and "pw-for-tests-1" in out.getvalue()
    study = ReaderStudy.objects.get(slug="demo")
    assert study.items.count() == study.dataset.questions.count() >= 20
    assert set(study.dataset.questions.values_list("task", flat=True)) == set(Task.values)
    assert Image.objects.exclude(display="").count() == Image.objects.count() >= 6
    assert Image.objects.filter(source_path__endswith=".png").exists()  # the 16-bit PNG case
    for username in ["reader1", "reader2", "reader3", "expert1", "pi1", "reader4", "reader6"]:
        assert authenticate(username=username, password="pw-for-tests-1") is not None
    assert_demo_aided()
    assert_demo_practice()
    assert_demo_rated()
    counts = (Question.objects.count(), Image.objects.count(), Membership.objects.count())
    answers = Answer.objects.count()
    call_command("seed_demo", "--password", "pw-for-tests-2", stdout=StringIO())
    assert (Question.objects.count(), Image.objects.count(), Membership.objects.count()) == counts
    assert Answer.objects.count() == answers
    assert authenticate(username="reader1", password="pw-for-tests-2") is not None


def assert_demo_aided():
    """The AI-assisted demo: a crossover with two simulated readers through both sessions
    and one left for a person, none of them a reader of the demo study, whose X-rays it holds
    (checked here to share this test's seeding, the slow part)."""
    study = ReaderStudy.objects.get(slug="demo-aided")
    n = study.items.count()
    xrays = study.items.values("question__case").distinct().count()
    assert design_sentence(study) == (
        "Crossover, 2 arms (unaided / aided by MedGemma-demo, concurrent), washout 0 days, "
        f"3 readers balanced 2/1, {n} questions on {xrays} X-rays"
    )
    assert ItemAid.objects.filter(item__study=study, usable=True).exists()
    readers = set(
        Membership.objects.filter(study=study, role="reader").values_list(
            "user__username", flat=True
        )
    )
    assert readers == {"reader4", "reader5", "reader6"}
    assert not readers & set(
        Membership.objects.filter(study__slug="demo").values_list("user__username", flat=True)
    )
    for username in ["reader5", "reader6"]:
        mine = Answer.objects.filter(item__study=study, reader__username=username)
        assert mine.filter(session=1).count() == mine.filter(session=2).count() == n
        assert set(mine.values_list("arm", flat=True)) == {"unaided", "aided"}
        assert ReaderCompletion.objects.filter(study=study, reader__username=username).count() == 2
    assert not Answer.objects.filter(item__study=study, reader__username="reader4").exists()
    # What kept the demo's readers out: reading its X-rays unaided, they may not be shown the
    # AI's answers on them.
    reader1 = get_user_model().objects.get(username="reader1")
    refused = membership_conflict(user=reader1, study=study, role=Role.READER)
    assert "unaided in another study" in refused


def assert_demo_practice():
    """The practice set of 10 from the teaching file (issue 36): reader2 to try it, reader5
    sat it a week ago and their misses are offered again now; the demo's readers still
    reading its X-rays blind are refused it (a practice set shows keys at once)."""
    from annotation.practice import plan_state
    from readerstudy.models import PracticePlan

    practice = ReaderStudy.objects.get(slug="demo-practice")
    assert practice.practice and practice.items.count() == 10
    assert practice.dataset.name == "ReXVQA demo teaching file"
    assert not practice.items.filter(question__dataset__studies__slug="demo").exists()
    readers = set(
        practice.memberships.filter(role="reader").values_list("user__username", flat=True)
    )
    assert readers == {"reader2", "reader5"}
    assert not Answer.objects.filter(item__study=practice, reader__username="reader2").exists()
    sat = Answer.objects.filter(item__study=practice, reader__username="reader5")
    assert sat.count() == 10 and all(sat.values_list("practice", flat=True))
    plan = PracticePlan.objects.get(owner__username="reader5")
    assert plan_state(plan).due()
    reader1 = get_user_model().objects.get(username="reader1")
    assert "blind" in membership_conflict(user=reader1, study=practice, role=Role.READER)


def assert_demo_rated():
    """The rated study: a 5-point confidence scale, binary questions detected from their
    yes/no options with both truths, three simulated readers who rated every answer and one
    left for a person; every other demo study asks for no confidence."""
    study = ReaderStudy.objects.get(slug="demo-rated")
    assert study.confidence_scale == "1-5"
    questions = [item.question for item in study.items.select_related("question")]
    binary = [q for q in questions if q.binary]
    assert len(binary) >= 10 and len(binary) < len(questions)  # and a few multiple-choice
    truths = {q.correct == q.present_option for q in binary}
    assert truths == {True, False}
    for username in ["reader8", "reader9", "reader10"]:
        mine = Answer.objects.filter(item__study=study, reader__username=username)
        assert mine.count() == len(questions)
        assert set(mine.values_list("confidence", flat=True)) <= {1, 2, 3, 4, 5}
        assert len(set(mine.values_list("confidence", flat=True))) >= 3
    assert not Answer.objects.filter(item__study=study, reader__username="reader7").exists()
    others = ReaderStudy.objects.exclude(slug="demo-rated")
    assert set(others.values_list("confidence_scale", flat=True)) == {"none"}
    assert not Answer.objects.exclude(item__study=study).exclude(confidence=None).exists()


def test_random_password_is_printed(demo):
    """Run again on the demo (as `make demo` does every time): a new random password."""
    out = StringIO()
    call_command("seed_demo", stdout=out)
    # reader1's login line ("  reader1  / PASSWORD   (reader)"), not reader10's or a sentence.
    line = next(
        line for line in out.getvalue().splitlines() if line.split()[:2] == ["reader1", "/"]
    )
    password = line.split("/")[1].split()[0]
    assert authenticate(username="reader1", password=password) is not None
