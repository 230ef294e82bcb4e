"""Reliance on the AI through the page and the ZIP: the same-reads rates, the aided − unaided
contrast and the all-readers row reach reliance_agreement.csv and the page, each count equal
to one made here from the answers."""

from __future__ import annotations

import io
import zipfile
from html import unescape

import pandas as pd
import pytest
from django.urls import reverse

from analysis.design_frame import design_frame
from analysis.stats import AGREEMENT_CHANGES, RELIANCE_LABELS, RELIANCE_POOLED
from tests.design_tests.test_design_analysis import two_arm  # noqa: F401 (fixture)

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]


def independent_counts(study, ai_right: bool) -> dict[str, int]:
    """From the answers: of the reads a reader answered in both arms, those where the AI was
    right (or wrong), and how many of them agreed with the AI in each arm."""
    frame = design_frame(study)
    answered = frame[frame["answer"].notna()]
    arms = {arm: part.set_index(["reader", "question_id"]) for arm, part in answered.groupby("arm")}
    counts = {"n": 0, "aided": 0, "unaided": 0}
    for key, aided in arms["aided"].iterrows():
        if key not in arms["unaided"].index or pd.isna(aided["ai_answer"]):
            continue
        if (aided["ai_answer"] == aided["correct_answer"]) != ai_right:
            continue
        counts["n"] += 1
        counts["aided"] += aided["answer"] == aided["ai_answer"]
        counts["unaided"] += arms["unaided"].loc[key, "answer"] == aided["ai_answer"]
    return counts


def test_reliance_on_the_same_reads_reaches_the_zip_and_the_page(client, two_arm):  # noqa: F811
    study, pi = two_arm
    client.force_login(pi)
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis-zip", args=[study.slug])).content)
    )
    table = pd.read_csv(io.BytesIO(archive.read("reliance_agreement.csv")))
    assert set(table.columns) <= set(RELIANCE_LABELS)
    pooled = table.set_index("reader").loc[RELIANCE_POOLED]
    for label, ai_right in (("wrong", False), ("right", True)):
        counts = independent_counts(study, ai_right)
        rate = f"agree_when_ai_{label}"
        assert pooled[f"{rate}_n"] == pooled[f"unaided_{rate}_n"] == counts["n"]
        assert pooled[f"{rate}_k"] == counts["aided"]
        assert pooled[f"unaided_{rate}_k"] == counts["unaided"]
    assert pooled["agree_when_ai_right_n"] > 0  # the fixture's AI is always right
    for column in ("agree_when_ai_wrong_change", "agree_when_ai_wrong_change_ci_low"):
        assert column in table.columns
    for bound in ("agree_when_ai_wrong_ci_low", "agree_when_ai_wrong_ci_high"):
        assert table[bound].dropna().between(0, 1).all()
    html = unescape(client.get(reverse("analysis", args=[study.slug])).content.decode())
    # The page heads its columns in the words declared beside them (the CSV keeps the names).
    assert AGREEMENT_CHANGES["agree_when_ai_wrong_change"] in html and RELIANCE_POOLED in html
    assert "only reads answered in both arms" in html
