"""The notes say both kinds of question left out, with their counts: those a PI excluded and
those an expert rejected (the page's policy line, the figures' footnotes, README.txt)."""

from __future__ import annotations

import io
import re
import zipfile
from html import unescape

import pytest
from django.urls import reverse

from annotation.reviews import review_submit
from annotation.services import answer_submit
from tests.analysis_tests.conftest import readers
from tests.analysis_tests.export_readme import about_tables
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def pruned(db):
    """8 questions read by 2 readers; the PI excluded 1, an expert rejected 2 others."""
    study = build_study(8)
    items = list(study.items.select_related("question").order_by("position"))
    for reader in readers(study, 2):
        for item in items:
            answer_submit(reader=reader, item=item, choice=item.question.correct)
    expert = UserFactory(username="the-expert")
    MembershipFactory(study=study, user=expert, role="expert")
    for item in items[1:3]:
        review_submit(
            expert=expert,
            item=item,
            flags=["image_mismatch"],
            ratings={"image_alignment": 1},
            difficulty="medium",
            decision="reject",
        )
    items[0].excluded, items[0].excluded_reason = True, "cut-off image"
    items[0].save()
    pi = UserFactory(username="the-pi")
    MembershipFactory(study=study, user=pi, role="pi")
    return study, pi


SAID = "1 question a PI excluded left out; 2 further questions an expert rejected left out"


def test_notes_count_expert_rejected_questions_beside_pi_exclusions(client, pruned):
    study, pi = pruned
    # Independently: what the study holds.
    assert study.items.filter(excluded=True).count() == 1
    client.force_login(pi)
    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    assert f"Questions: {SAID}." in html
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    about = about_tables(archive.read("README.txt").decode())
    assert f"questions_left_out: {SAID}" in about["accuracy"]
    svg = next(n for n in archive.namelist() if n.endswith("accuracy_by_task.svg"))
    # The footnote as drawn: its lines (SVG text elements) joined.
    text = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", archive.read(svg).decode()))
    assert "2 further questions an expert rejected left out" in text

    kept = {"excluded": "keep", "rejected": "keep"}
    html = unescape(client.get(reverse("analysis", args=[study.slug]), kept).content.decode())
    assert (
        "1 question a PI excluded included; 2 further questions an expert rejected included" in html
    )
