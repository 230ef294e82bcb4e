"""The expert's keys come from the vocabulary, are rendered into the page, and never clash."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from readerstudy.vocabulary import (
    FLAG_RATING_DEFAULTS,
    RATING_FIELDS,
    REVIEW_DEFAULTS,
    REVIEW_DEFAULTS_KEY,
    REVIEW_SHORTCUTS,
    SHORTCUTS,
    Decision,
    Difficulty,
    ReviewFlag,
)

pytestmark = pytest.mark.django_db


def viewer_keys() -> set[str]:
    """The viewer's one key list (static/js/viewer-keys.js `KEYS`), as the pages use it."""
    source = (Path(settings.BASE_DIR) / "static" / "js" / "viewer-keys.js").read_text()
    body = re.search(r"const KEYS = Object\.freeze\(\{(.*?)\}\);", source, re.S).group(1)
    return {json.loads(k) if k.startswith('"') else k for k in re.findall(r'("[^"]*"|\w+):', body)}


def test_the_viewer_key_list_is_read_from_viewer_keys_js():
    keys = viewer_keys()  # the clash tests below mean nothing if this found no list
    assert len(keys) >= 5 and all(len(k) == 1 for k in keys)


def test_no_answer_key_of_the_reader_hides_a_viewer_key():
    keys = {k for values in SHORTCUTS.values() for ks in values.values() for k in ks}
    assert not keys & (viewer_keys() | {"q", "?"})  # q and ? are the reading page's own


def test_every_flag_difficulty_and_decision_has_a_key_and_no_key_is_used_twice():
    assert set(REVIEW_SHORTCUTS["flags"]) == set(ReviewFlag.values)
    assert set(REVIEW_SHORTCUTS["difficulty"]) == set(Difficulty.values)
    assert set(REVIEW_SHORTCUTS["decision"]) == set(Decision.values)
    keys = [REVIEW_DEFAULTS_KEY, "Enter"]
    for field in ("flags", "difficulty", "decision", "rating"):
        keys += [k for ks in REVIEW_SHORTCUTS[field].values() for k in ks]
    assert len(keys) == len(set(keys)) and not set(keys) & viewer_keys()


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
