"""The new-study form says everything on the first submit: every field's error beside the
field (the sample size against the dataset, unknown readers, the design's rules), the size
of each dataset, and why the image-source list is empty (issue 26, item 9)."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from readerstudy.models import Image, ReaderStudy
from tests.factories import UserFactory, build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def creator(client):
    pi = UserFactory(username="boss")
    pi.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(pi)
    return pi


@pytest.fixture
def bank(db):
    source = build_study(8)
    Image.objects.filter(case__dataset=source.dataset).delete()
    return source.dataset


def field_errors(html: str, name: str) -> list[str]:
    """The errors shown in the field block of `name` (the span after its input)."""
    block = re.search(
        rf'<div class="field[^"]*">\s*<label for="id_{name}".*?</div>', html, flags=re.S
    )
    assert block, name
    return re.findall(r'<span class="error">([^<]+)</span>', block.group(0))


def test_every_field_error_shows_on_the_first_submit_beside_its_field(client, creator, bank):
    data = {
        "dataset": bank.pk,
        "slug": "",  # made from the title
        "title": "Too big",
        "sample": 500,  # the dataset has 8
        "seed": 0,
        "stratify": "none",
        "readers": "nobody-here",
        "arms": "unaided,aided",
        "aid_model": "",  # an aided arm needs one
        "aid_mode": "concurrent",
        "washout_days": 0,
        "groups": 0,
        "anchor": 0,
    }
    html = client.post(reverse("study-create"), data).content.decode()
    assert field_errors(html, "slug") == []
    assert field_errors(html, "sample") == ["Asked for 500 questions but only 8 are available."]
    assert "No account named nobody-here" in field_errors(html, "readers")[0]
    assert field_errors(html, "aid_model") == ["An aided arm needs an AI model."]
    assert not ReaderStudy.objects.filter(title="Too big").exists()


def test_an_aided_arm_without_a_model_is_one_problem_not_two(client, creator, bank):
    """The aid mode left at its default ("—": concurrent) is no second error when the PI forgot
    the model: the one problem is named beside the model, capitalised like every field error."""
    data = {
        "dataset": bank.pk,
        "slug": "no-model",
        "title": "No model",
        "sample": 4,
        "seed": 0,
        "stratify": "none",
        "arms": "unaided,aided",
        "aid_model": "",
        "aid_mode": "",
        "washout_days": -1,
        "groups": 0,
        "anchor": 0,
    }
    html = client.post(reverse("study-create"), data).content.decode()
    assert field_errors(html, "aid_model") == ["An aided arm needs an AI model."]
    assert field_errors(html, "aid_mode") == []
    assert field_errors(html, "washout_days") == ["The washout cannot be negative (got -1 days)."]
    assert not ReaderStudy.objects.filter(slug="no-model").exists()


def test_one_per_case_and_strata_are_checked_before_the_worker(client, creator, bank):
    data = {
        "dataset": bank.pk,
        "slug": "ok",
        "title": "x",
        "sample": 3,
        "seed": 0,
        "stratify": "task",
        "arms": "unaided",
        "washout_days": 0,
        "groups": 0,
        "anchor": 0,
    }
    tasks = bank.questions.values("task").distinct().count()
    if tasks > 3:
        html = client.post(reverse("study-create"), data).content.decode()
        assert f"there are {tasks} strata" in field_errors(html, "sample")[0]
    data["sample"] = 8
    created = client.post(reverse("study-create"), data)
    assert created.status_code == 302 and ReaderStudy.objects.filter(slug="ok").exists()


def test_the_form_shows_each_datasets_size(client, creator, bank):
    html = client.get(reverse("study-create")).content.decode()
    cases = bank.questions.values("case_id").distinct().count()
    assert f"{bank.name} (8 questions on {cases} X-rays)" in html  # in the dataset list
    sizes = re.search(r"<details[^>]*data-dataset-sizes.*?</details>", html, flags=re.S).group(0)
    for task in bank.questions.values_list("task", flat=True).distinct():
        label = bank.questions.filter(task=task).first().get_task_display()
        count = bank.questions.filter(task=task).count()
        assert re.search(rf"<td>{label}</td><td class=\"num\">{count}</td>", sizes), label


def test_an_empty_image_source_list_says_why_and_which_setting(client, creator, settings):
    """Why the list is empty; which settings fill it, to the server's administrators only
    (issue 34: a PI was shown IMPORT_IMAGES_ROOT)."""
    settings.IMPORT_IMAGES_ROOT = ""
    settings.DICOMWEB_URL = ""
    html = client.get(reverse("study-create")).content.decode()
    assert "Empty because this server has no image source" in html
    assert "ask its administrator" in html
    assert "IMPORT_IMAGES_ROOT" not in html and "manage.py" not in html
    creator.is_staff = True
    creator.save()
    html = client.get(reverse("study-create")).content.decode()
    assert "IMPORT_IMAGES_ROOT" in html and "DICOMWEB_URL" in html
    settings.DICOMWEB_URL = "http://pacs.example/dicom-web"
    html = client.get(reverse("study-create")).content.decode()
    assert "Empty because" not in html and "pacs.example" in html
    creator.is_staff = False
    creator.save()
    html = client.get(reverse("study-create")).content.decode()
    assert "pacs.example" not in html and "The hospital&#x27;s PACS (DICOMweb)" in html


def test_a_refused_form_says_so_at_its_top_linking_each_field(client, creator, bank):
    """The design fields are at the bottom of a long form: a refused submit reloads it at the
    top, so the top says nothing was created and links every field with an error."""
    data = {
        "dataset": bank.pk,
        "slug": "refused",
        "title": "Refused",
        "sample": 4,
        "seed": 0,
        "stratify": "none",
        "readers": "nobody-here",
        "arms": "unaided,aided",
        "aid_model": "",
        "washout_days": -3,
        "groups": 0,
        "anchor": 0,
    }
    html = client.post(reverse("study-create"), data).content.decode()
    summary = re.search(r"<div[^>]*data-error-summary.*?</div>", html, flags=re.S)
    assert summary, "no summary at the top of the form"
    assert html.index("data-error-summary") < html.index('<form method="post" class="form-grid"')
    text = summary.group(0)
    assert "Nothing was created" in text
    for name in ("readers", "aid_model", "washout_days"):
        assert f'href="#id_{name}"' in text, name
    assert 'href="#id_slug"' not in text  # only the fields with an error
    # Each problem in words at the top (issue 34: "see what is said beside …, below" sent the
    # PI 1,100 px down), and again beside its field.
    assert text.count("cannot be negative") == 1 and html.count("cannot be negative") == 2
    assert "3 things to correct" in text
    assert "data-error-summary" not in client.get(reverse("study-create")).content.decode()


def test_groups_are_compared_with_the_readers_typed_even_when_one_is_misspelt(
    client, creator, bank
):
    """A misspelt reader is said beside Readers; the groups' check still counts the readers
    the PI typed ("3 groups are more than the 2 readers"), never "the 0 readers"."""
    UserFactory(username="known")
    data = {
        "dataset": bank.pk,
        "slug": "typo",
        "title": "Typo",
        "sample": 4,
        "seed": 0,
        "stratify": "none",
        "readers": "known, ghost",
        "arms": "unaided",
        "washout_days": 0,
        "groups": 3,
        "anchor": 0,
    }
    html = client.post(reverse("study-create"), data).content.decode()
    assert "No account named ghost" in field_errors(html, "readers")[0]
    assert field_errors(html, "groups") == ["3 groups are more than the 2 readers."]


def test_the_slug_is_made_from_the_title_and_the_form_says_what_is_required(client, creator, bank):
    """Issue 34: the slug was required and not made from the title; "Dataset (optional)" was
    required unless a question bank was uploaded."""
    html = client.get(reverse("study-create")).content.decode()
    assert 'Dataset <span class="muted">(required unless you upload a question bank)</span>' in html
    assert 'Dataset <span class="muted">(optional)' not in html
    build_study(1, slug="ai-assisted-trial")  # the title's slug is taken: the next is free
    data = {
        "dataset": bank.pk,
        "title": "AI-assisted trial",
        "sample": 4,
        "seed": 0,
        "stratify": "none",
        "arms": "unaided",
        "washout_days": 0,
        "groups": 0,
        "anchor": 0,
    }
    response = client.post(reverse("study-create"), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert ReaderStudy.objects.get(title="AI-assisted trial").slug == "ai-assisted-trial-2"
