"""The PI's reading settings (issue 26, items 4 and 5): the window each case opens at and the
break reminder, set on the new-study form or later on the dashboard, checked by the server."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from readerstudy.models import AuditEvent, Image, ReaderStudy
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def url(study):
    return reverse("pi-reading", args=[study.slug])


def test_defaults_are_the_images_own_window_and_a_break_after_an_hour(study):
    assert study.default_window == "default" and study.break_minutes == 60


def test_a_pi_sets_the_window_and_the_break_reminder(client, pi, study):
    client.force_login(pi)
    page = client.get(url(study)).content.decode()
    assert 'name="default_window"' in page and "Lung" in page
    response = client.post(url(study), {"default_window": "lung", "break_minutes": "45"})
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.default_window, study.break_minutes) == ("lung", 45)
    event = AuditEvent.objects.get(action="study.reading")
    assert event.actor == pi and event.detail == {"default_window": "lung", "break_minutes": 45}
    dashboard = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "Cases open at the <strong>Lung</strong> window" in dashboard
    assert "after <strong>45 min</strong> of reading" in dashboard


@pytest.mark.parametrize(
    "data, field",
    [
        ({"default_window": "mediastinum", "break_minutes": "60"}, "default_window"),
        ({"default_window": "lung", "break_minutes": "481"}, "break_minutes"),
        ({"default_window": "lung", "break_minutes": "-5"}, "break_minutes"),
        ({"default_window": "lung", "break_minutes": "soon"}, "break_minutes"),
    ],
)
def test_bad_values_are_refused_beside_the_field_and_nothing_changes(
    client, pi, study, data, field
):
    client.force_login(pi)
    response = client.post(url(study), data)
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert 'class="error"' in response.content.decode()
    study.refresh_from_db()
    assert (study.default_window, study.break_minutes) == ("default", 60)
    assert not AuditEvent.objects.filter(action="study.reading").exists()


def test_zero_switches_the_break_reminder_off(client, pi, study):
    client.force_login(pi)
    client.post(url(study), {"default_window": "default", "break_minutes": "0"})
    study.refresh_from_db()
    assert study.break_minutes == 0
    html = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "break reminder <strong>off</strong>" in html


def test_only_the_studys_pis_reach_the_settings(client, reader, expert, outsider, study):
    for user in (reader, expert, outsider):
        client.force_login(user)
        assert client.get(url(study)).status_code in (403, 404)
        client.post(url(study), {"default_window": "bone", "break_minutes": "5"})
    study.refresh_from_db()
    assert study.default_window == "default"


def test_the_reader_page_opens_at_the_studys_window_and_says_the_break_time(client, reader, study):
    ReaderStudy.objects.filter(pk=study.pk).update(default_window="bone", break_minutes=25)
    client.force_login(reader)
    html = client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    assert 'data-default-preset="bone"' in html
    assert 'data-break-minutes="25"' in html


@pytest.fixture
def creator_client(client, study, resources):
    Image.objects.update(source_path=str(resources / "tiny_8bit.png"), display="")
    creator = UserFactory(username="creator")
    creator.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(creator)
    return client


def create(client, study, **fields):
    data = {"dataset": study.dataset.id, "slug": "paced", "title": "Paced", "sample": 2, "seed": 1}
    return client.post(reverse("study-create"), {**data, "stratify": "none", **fields})


def test_the_new_study_form_sets_the_window_and_the_break_reminder(creator_client, study):
    html = creator_client.get(reverse("study-create")).content.decode()
    assert 'name="default_window"' in html and 'name="break_minutes"' in html
    create(creator_client, study, default_window="lung", break_minutes="30")
    created = ReaderStudy.objects.get(slug="paced")
    assert (created.default_window, created.break_minutes) == ("lung", 30)


def test_the_new_study_form_defaults_and_refuses_a_bad_window(creator_client, study):
    response = create(creator_client, study, default_window="mediastinum")
    assert "default_window" in response.context["form"].errors
    assert not ReaderStudy.objects.filter(slug="paced").exists()
    create(creator_client, study)
    created = ReaderStudy.objects.get(slug="paced")
    assert (created.default_window, created.break_minutes) == ("default", 60)
