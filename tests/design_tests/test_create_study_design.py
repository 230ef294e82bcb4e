"""create_study and the create-study form take the design; a bad one creates nothing."""

from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.urls import reverse

from readerstudy.models import Image, ReaderAssignment, ReaderStudy
from tests.design_tests.conftest import add_model
from tests.factories import UserFactory, build_study


@pytest.fixture
def bank(db):
    """A dataset of 8 questions with an imported model, and four readers."""
    source = build_study(8)
    Image.objects.filter(case__dataset=source.dataset).delete()  # nothing to derive here
    add_model(source)
    for i in range(4):
        UserFactory(username=f"u{i}")
    return source.dataset


def _create(bank, *args):
    out = StringIO()
    call_command(
        "create_study", "trial", "--dataset", bank.name, "--sample", "8", *args, stdout=out
    )
    return out.getvalue()


def test_create_study_sets_a_crossover_and_says_it(bank):
    out = _create(
        bank,
        "--readers", "u0,u1,u2,u3",
        "--arms", "unaided,aided",
        "--aid-model", "MedGemma",
        "--washout-days", "28",
        "--shuffle-options",
    )  # fmt: skip
    assert (
        "Design: Crossover, 2 arms (unaided / aided by MedGemma, concurrent), washout 28 days, "
        "4 readers balanced 2/2, options shuffled per reader, 8 questions on 8 X-rays"
    ) in out
    study = ReaderStudy.objects.get(slug="trial")
    assert study.items.filter(aid__usable=True).count() == 8
    assert ReaderAssignment.objects.filter(study=study).count() == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arms", "unaided,aided"], "an aided arm needs an AI model"),
        (["--arms", "unaided,aided", "--aid-model", "Nope"], "no AI model named 'Nope'"),
        (["--washout-days", "-2"], "washout cannot be negative"),
        (["--readers", "u0", "--groups", "2"], "2 groups are more than the 1 readers"),
        (["--readers", "u0,u1", "--groups", "2", "--anchor", "9"], "anchor (9) is larger"),
    ],
)
def test_a_bad_design_creates_nothing(bank, args, message):
    with pytest.raises(CommandError, match="Study not created") as refused:
        _create(bank, *args)
    assert message in str(refused.value)
    assert "aid mode" not in str(refused.value)  # no --aid-mode: concurrent, not a 2nd problem
    assert not ReaderStudy.objects.filter(slug="trial").exists()


def test_the_form_creates_a_designed_study_and_refuses_a_bad_one(bank, client):
    pi = UserFactory(username="boss")
    pi.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(pi)
    data = {
        "dataset": bank.pk,
        "slug": "browser-trial",
        "title": "Browser trial",
        "sample": 8,
        "seed": 0,
        "stratify": "task",
        "readers": "u0, u1",
        "arms": "unaided,aided",
        "aid_model": "",
        "aid_mode": "concurrent",
        "washout_days": 0,
        "groups": 0,
        "anchor": 0,
    }
    refused = client.post(reverse("study-create"), data)
    assert refused.status_code == 200
    assert "An aided arm needs an AI model." in refused.content.decode()
    assert not ReaderStudy.objects.filter(slug="browser-trial").exists()
    data["aid_model"] = "MedGemma"
    created = client.post(reverse("study-create"), data, follow=True)
    page = created.content.decode()
    assert "Crossover, 2 arms (unaided / aided by MedGemma, concurrent), washout 0 days" in page
    assert "Reading sessions" in page
