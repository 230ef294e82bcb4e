"""The reading room's server side: instructions, the session check after an in-page sign-in,
and what the case page gives the page's script (drafts, prefetch) and people without it."""

import pytest
from django.urls import reverse

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_instructions_are_shown_before_the_first_case_and_from_the_case_menu(reader_client, study):
    study.instructions = "Read each case as you would a clinic film."
    study.save()
    start = reader_client.get(reverse("reader-start", args=[study.slug]))
    page = reader_client.get(start.url).content.decode()
    assert "Read each case as you would a clinic film." in page and "Begin with case 1" in page
    case = reader_client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    assert f'href="{reverse("reader-instructions", args=[study.slug])}"' in case
    assert "Read each case as you would a clinic film." in case  # the in-page dialog


def test_instructions_offer_to_continue_where_the_reader_is(reader_client, study):
    reader_client.post(reverse("reader-answer", args=[study.slug, 1]), {"choice": "A"})
    start = reader_client.get(reverse("reader-start", args=[study.slug]))
    assert start.url == reverse("reader-case", args=[study.slug, 2])
    page = reader_client.get(reverse("reader-instructions", args=[study.slug])).content.decode()
    assert "Continue with case 2" in page


def test_instructions_are_only_for_the_studys_readers(client, outsider, study):
    client.force_login(outsider)
    assert client.get(reverse("reader-instructions", args=[study.slug])).status_code == 404


def test_session_check_names_the_reader_and_gives_a_token(reader_client, study, reader):
    data = reader_client.get(reverse("reader-session", args=[study.slug])).json()
    assert data["reader"] == reader.pk and data["username"] == reader.username
    assert len(data["csrf"]) >= 32


def test_sign_in_with_next_to_the_session_check_returns_json(client, study, reader):
    response = client.post(
        reverse("login"),
        {
            "username": reader.username,
            "password": PASSWORD,
            "next": reverse("reader-session", args=[study.slug]),
        },
        follow=True,
    )
    assert response.json()["reader"] == reader.pk


def test_page_without_javascript_says_why_the_images_are_black(reader_client, study):
    html = reader_client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    assert "<noscript>" in html and "That is why this area is black" in html
    assert "Answers still save with the Submit button" in html


def test_case_list_carries_what_the_script_needs_to_mark_drafts(reader_client, study, reader):
    html = reader_client.get(reverse("reader-review", args=[study.slug])).content.decode()
    assert f'data-reader="{reader.pk}"' in html and f'data-study="{study.slug}"' in html
    assert html.count("data-case=") == 4


def test_progress_says_how_many_cases_are_left(reader_client, study):
    reader_client.post(reverse("reader-answer", args=[study.slug, 1]), {"choice": "A"})
    html = reader_client.get(reverse("reader-case", args=[study.slug, 2])).content.decode()
    assert "1 / 4 answered" in html and "3 left" in html
