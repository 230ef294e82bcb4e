"""The expert's keys come from the vocabulary, are rendered into the page, and never clash."""

import json

import pytest
from django.urls import reverse

from readerstudy.vocabulary import (
    FLAG_RATING_DEFAULTS,
    RATING_FIELDS,
    REVIEW_DEFAULTS,
    REVIEW_DEFAULTS_KEY,
    REVIEW_SHORTCUTS,
    Decision,
    Difficulty,
    ReviewFlag,
)

pytestmark = pytest.mark.django_db
VIEWER_KEYS = {"i", "0", "+", "=", "-", "l", "f"}  # static/js/viewer keys on the same page


def test_every_flag_difficulty_and_decision_has_a_key_and_no_key_is_used_twice():
    assert set(REVIEW_SHORTCUTS["flags"]) == set(ReviewFlag.values)
    assert set(REVIEW_SHORTCUTS["difficulty"]) == set(Difficulty.values)
    assert set(REVIEW_SHORTCUTS["decision"]) == set(Decision.values)
    keys = [REVIEW_DEFAULTS_KEY, "Enter"]
    for field in ("flags", "difficulty", "decision", "rating"):
        keys += [k for ks in REVIEW_SHORTCUTS[field].values() for k in ks]
    assert len(keys) == len(set(keys)) and not set(keys) & VIEWER_KEYS


def test_defaults_cover_every_rating_and_the_difficulty():
    assert set(REVIEW_DEFAULTS) == {*RATING_FIELDS, "difficulty"}
    for lowered in FLAG_RATING_DEFAULTS.values():
        assert set(lowered) <= set(RATING_FIELDS)


def test_the_page_renders_the_keys_and_defaults_for_the_script(client, study, expert):
    client.force_login(expert)
    item = study.items.first()
    html = client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    assert (
        'value="image_mismatch" id="id_flags_4" data-keys="x" '
        'data-rating-defaults="{&quot;image_alignment&quot;: &quot;1&quot;}"'
    ) in html
    assert 'data-keys="r"' in html and 'data-keys="4"' in html
    assert f'data-defaults-key="{REVIEW_DEFAULTS_KEY}"' in html
    defaults = html.split('data-defaults="')[1].split('"')[0].replace("&quot;", '"')
    assert json.loads(defaults) == REVIEW_DEFAULTS
    # Options shown once, as "A. text": a list without numbers (the first item is keyed A).
    assert '<ul class="truth-options">' in html
    assert '<li class="is-truth">A. First option <strong>✓ correct</strong></li>' in html
    assert '<li class="">B. Second option</li>' in html
