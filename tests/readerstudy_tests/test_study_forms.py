"""Study creation form (closing text, each error shown once) and member removal with a
confirmation step that works without JavaScript."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from readerstudy.models import AuditEvent, Image, Membership, ReaderStudy, Role
from tests.factories import UserFactory, build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def creator_client(client, study, resources):
    Image.objects.update(source_path=str(resources / "tiny_8bit.png"), display="")
    creator = UserFactory(username="creator")
    creator.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(creator)
    return client


def form_data(study, **overrides):
    return {
        "dataset": study.dataset.id,
        "slug": "closing",
        "title": "Closing",
        "sample": 2,
        "seed": 1,
        "stratify": "none",
        **overrides,
    }


def test_closing_text_is_offered_prefilled_and_saved(creator_client, study):
    html = creator_client.get(reverse("study-create")).content.decode()
    assert 'name="closing_text"' in html and "Thank you: your answers are recorded" in html
    creator_client.post(
        reverse("study-create"), form_data(study, closing_text="Thanks, see you at the meeting.")
    )
    created = ReaderStudy.objects.get(slug="closing")
    assert created.closing_text == "Thanks, see you at the meeting."


def test_each_error_is_shown_beside_its_field_and_once_in_the_summary(creator_client, study):
    """The summary at the top of the long form says every problem (linked to its field), and
    the field says it again where it is corrected: each twice, never more."""
    html = creator_client.post(
        reverse("study-create"), form_data(study, sample=99)
    ).content.decode()
    assert html.count("only 4 are available") == 2
    html = creator_client.post(
        reverse("study-create"), form_data(study, slug=study.slug, sample="")
    ).content.decode()
    assert html.count("A study with this slug already exists.") == 2
    assert html.count("This field is required.") == 2
    assert 'class="field has-error"' in html
    assert not ReaderStudy.objects.filter(slug="closing").exists()


@pytest.fixture
def newcomer(study):
    user = UserFactory(username="newcomer")
    return Membership.objects.create(study=study, user=user, role=Role.READER)


def test_removal_asks_for_confirmation_first(client, study, pi, newcomer):
    client.force_login(pi)
    dashboard = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    confirm_url = reverse("pi-member-remove", args=[study.slug, newcomer.id])
    assert confirm_url in dashboard
    # A bare POST (an old form, a double click) does not remove: it asks.
    response = client.post(reverse("pi-members", args=[study.slug]), {"remove": newcomer.id})
    assert response.url == confirm_url
    assert Membership.objects.filter(id=newcomer.id).exists()
    page = client.get(confirm_url).content.decode()
    assert "Remove newcomer as reader?" in page and 'name="confirm" value="yes"' in page
    assert "Cancel" in page
    client.post(reverse("pi-members", args=[study.slug]), {"remove": newcomer.id, "confirm": "yes"})
    assert not Membership.objects.filter(id=newcomer.id).exists()
    assert AuditEvent.objects.filter(action="membership.remove").count() == 1


def test_the_last_pi_page_says_why_instead_of_offering_removal(client, study, pi):
    client.force_login(pi)
    own = Membership.objects.get(user=pi, role=Role.PI)
    page = client.get(reverse("pi-member-remove", args=[study.slug, own.id])).content.decode()
    assert "only PI" in page and 'name="confirm"' not in page


def test_odd_and_foreign_member_ids_are_not_found(client, study, pi, newcomer):
    client.force_login(pi)
    url = reverse("pi-members", args=[study.slug])
    assert client.post(url, {"remove": "abc"}).status_code == 404
    assert client.post(url, {"remove": "", "confirm": "yes"}).status_code == 404
    other = build_study(1)
    foreign = Membership.objects.create(study=other, user=UserFactory(), role=Role.READER)
    assert client.post(url, {"remove": foreign.id, "confirm": "yes"}).status_code == 404
    assert client.get(reverse("pi-member-remove", args=[study.slug, foreign.id])).status_code == 404
    assert Membership.objects.filter(id=foreign.id).exists()
