"""Django's `{# #}` comment is one line only: one spread over two lines is printed on the page as
text (base.html showed "{# The reader's drafts and outbox …" at the foot of every signed-in
page)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def test_every_template_comment_closes_on_its_line():
    open_comments = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\{#(?!.*#\})", line)
    ]
    assert open_comments == []


@pytest.mark.django_db
def test_a_signed_in_page_shows_no_template_comment(client, pi, study):
    client.force_login(pi)
    html = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "{#" not in html and "#}" not in html
