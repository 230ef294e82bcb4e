"""The reading page's keys (issue 26, item 3): the comment and Pause keys come from the
vocabulary into the markup, the help lists them, and no key does two things."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from readerstudy.vocabulary import PAGE_SHORTCUTS, SHORTCUTS

pytestmark = pytest.mark.django_db

VIEWER_KEYS = Path(settings.BASE_DIR) / "static" / "js" / "viewer-keys.js"


def viewer_keys() -> set[str]:
    """The viewer's one key list (viewer-keys.js KEYS), as the pages read it."""
    block = re.search(r"const KEYS = Object\.freeze\(\{(.*?)\}\);", VIEWER_KEYS.read_text(), re.S)
    return {m.group(1) or m.group(2) for m in re.finditer(r'(?:"([^"]+)"|(\w+)):', block[1])}


def test_no_key_of_the_reading_page_does_two_things():
    answer_keys = [k for values in SHORTCUTS.values() for keys in values.values() for k in keys]
    page_keys = [*PAGE_SHORTCUTS.values(), "q", "?"]
    keys = answer_keys + page_keys + sorted(viewer_keys())
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert {"0", " ", "w", "i", "l", "f"} <= viewer_keys()
    assert PAGE_SHORTCUTS["comment"] != "c"  # c is option C


def test_the_comment_and_pause_keys_are_in_the_markup_and_the_help(reader_client, study):
    html = reader_client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    comment, pause = PAGE_SHORTCUTS["comment"], PAGE_SHORTCUTS["pause"]
    assert re.search(rf'<textarea[^>]*name="comment"[^>]*data-keys="{comment}"', html) or re.search(
        rf'<textarea[^>]*data-keys="{comment}"[^>]*name="comment"', html
    )
    assert f'data-action="pause" data-key="{pause}"' in html
    help_html = html[html.index('id="help"') :]
    assert f"<kbd>{comment.upper()}</kbd></td><td>write a comment" in help_html
    assert "in the comment: submit" in help_html and "in the comment: leave it" in help_html
    assert f"<kbd>{pause.upper()}</kbd></td><td>pause" in help_html
    assert "<kbd>W</kbd></td><td>reset the window" in help_html
    assert "fit the image (zoom and pan; the window stays)" in help_html
    # Capital badges: L is not read as 1.
    assert "<kbd>l</kbd>" not in html and "Link views <kbd>L</kbd>" in html
