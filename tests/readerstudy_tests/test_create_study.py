"""create_study: sampling from the database, members, derived display images."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image as PILImage

from readerstudy.models import Image, Membership, ReaderStudy, Role, StudyQuestion, Task
from tests.factories import CaseFactory, DatasetFactory, ImageFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(resources):
    """60 questions over 30 cases: presence 30, negation 15, differential 9, location 4,
    geometric 2; each case has a real 16-bit PNG source."""
    ds = DatasetFactory(name="bank")
    plan = [Task.PRESENCE] * 30 + [Task.NEGATION] * 15 + [Task.DIFFERENTIAL] * 9
    plan += [Task.LOCATION] * 4 + [Task.GEOMETRIC] * 2
    cases = []
    for i in range(30):
        case = CaseFactory(dataset=ds, study_id=f"s{i}")
        ImageFactory(
            case=case,
            display="",
            thumbnail="",
            width=None,
            height=None,
            source_path=str(resources / "tiny_16bit.png"),
        )
        cases.append(case)
    for i, task in enumerate(plan):
        QuestionFactory(dataset=ds, case=cases[i % 30], source_id=f"q{i:03d}", task=task)
    return ds


def create(*args):
    out = StringIO()
    call_command("create_study", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_stratified_sample_with_members_and_derived_images(dataset, settings):
    UserFactory(username="r1")
    UserFactory(username="r2")
    UserFactory(username="e1")
    UserFactory(username="boss")
    result = create(
        "pilot",
        "--dataset",
        "bank",
        "--sample",
        "20",
        "--seed",
        "5",
        "--readers",
        "r1,r2",
        "--experts",
        "e1",
        "--pis",
        "boss",
    )
    assert result["per_task"] == {
        "Differential Diagnosis": 3,
        "Geometric Information Assessment": 1,
        "Location and Distribution Assessment": 1,
        "Negation Assessment": 5,
        "Presence Assessment": 10,
    }
    study = ReaderStudy.objects.get(slug="pilot")
    ids = list(study.items.order_by("position").values_list("question__source_id", flat=True))
    assert ids == result["question_ids"]
    roles = set(Membership.objects.values_list("user__username", "role"))
    assert roles == {
        ("r1", Role.READER),
        ("r2", Role.READER),
        ("e1", Role.EXPERT),
        ("boss", Role.PI),
    }
    sampled_cases = set(study.items.values_list("question__case_id", flat=True))
    derived = Image.objects.exclude(display="")
    assert set(derived.values_list("case_id", flat=True)) == sampled_cases
    for image in derived:
        assert (Path(settings.MEDIA_ROOT) / image.display).exists()
        assert PILImage.open(Path(settings.MEDIA_ROOT) / image.display).mode == "L"
        assert (image.width, image.height, image.bits_stored) == (64, 48, 16)


def test_same_seed_same_sample(dataset):
    a = create("a", "--dataset", "bank", "--sample", "12", "--seed", "9")
    b = create("b", "--dataset", "bank", "--sample", "12", "--seed", "9")
    c = create("c", "--dataset", "bank", "--sample", "12", "--seed", "10")
    assert a["question_ids"] == b["question_ids"] != c["question_ids"]


def test_one_per_case(dataset):
    result = create("opc", "--dataset", "bank", "--sample", "25", "--one-per-case")
    cases = StudyQuestion.objects.filter(study__slug="opc").values_list("question__case_id")
    assert len(set(cases)) == len(result["question_ids"]) == 25


def test_errors_create_nothing(dataset):
    with pytest.raises(CommandError, match="unknown user"):
        create("x", "--dataset", "bank", "--sample", "10", "--readers", "nobody")
    with pytest.raises(CommandError, match="only 60 are available"):
        create("x", "--dataset", "bank", "--sample", "61")
    with pytest.raises(CommandError, match="no dataset named"):
        create("x", "--dataset", "nope", "--sample", "5")
    assert not ReaderStudy.objects.exists()
    create("x", "--dataset", "bank", "--sample", "5")
    with pytest.raises(CommandError, match="already exists"):
        create("x", "--dataset", "bank", "--sample", "5")
