"""The window preset a reader chooses is kept on the server per study and modality (issue 34:
Lung in session 1 came back as Default in session 2): every case page says it, for every
session and arm; only the study's readers set theirs; a preset the viewer does not know is
refused in words."""

import json
import re

import pytest
from django.urls import reverse

from annotation.models import ReadingPreference
from annotation.preferences import reading_presets

pytestmark = pytest.mark.django_db


def _presets_on_page(html: str) -> dict:
    raw = re.search(r'data-presets="([^"]*)"', html).group(1)
    return json.loads(raw.replace("&quot;", '"'))


def test_a_chosen_preset_is_on_every_later_case_page(reader_client, study, reader):
    url = reverse("reader-preset", args=[study.slug])
    assert reader_client.post(url, {"modality": "CR", "preset": "lung"}).status_code == 204
    assert reader_client.post(url, {"modality": "CR", "preset": "bone"}).status_code == 204
    assert reading_presets(study, reader) == {"CR": "bone"}  # the last choice wins
    page = reader_client.get(reverse("reader-case", args=[study.slug, 2])).content.decode()
    assert _presets_on_page(page) == {"CR": "bone"}
    fragment = reader_client.get(
        reverse("reader-case", args=[study.slug, 3]), HTTP_HX_REQUEST="true"
    ).content.decode()  # a case fetched ahead says it too
    assert _presets_on_page(fragment) == {"CR": "bone"}


def test_an_unknown_preset_or_modality_is_refused_in_words(reader_client, study):
    url = reverse("reader-preset", args=[study.slug])
    response = reader_client.post(url, {"modality": "CR", "preset": "<script>"})
    assert response.status_code == 400 and "is not a window preset" in response.json()["error"]
    response = reader_client.post(url, {"modality": "x" * 40, "preset": "lung"})
    assert response.status_code == 400 and "at most 16 characters" in response.json()["error"]
    assert not ReadingPreference.objects.exists()


def test_only_the_studys_readers_keep_a_preset_there(client, study, expert, outsider):
    url = reverse("reader-preset", args=[study.slug])
    for person in (expert, outsider):
        client.force_login(person)
        assert client.post(url, {"modality": "CR", "preset": "lung"}).status_code == 404
    client.logout()
    assert client.post(url, {"modality": "CR", "preset": "lung"}).status_code == 302
    assert not ReadingPreference.objects.exists()
