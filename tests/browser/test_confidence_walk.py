"""A rated study walked as its people do, in Chromium: a reader starts by keyboard while
three colleagues have finished; the PI's analysis page keeps the colleagues' ROC curves and
AUCs and says why the new reader has none yet; once the new reader has finished, their locked
case names each rating by a noun ("Confidence: 4 Confident")."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services import reader_finish
from readerstudy.models import Role
from readerstudy.services.studies import membership_add
from readerstudy.vocabulary import ConfidenceScale
from tests.analysis_tests.test_confidence_outputs import make_study
from tests.browser.helpers import sign_in, wait_image_loaded, wait_seen
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_new_reader_leaves_the_panels_aucs_standing_and_reads_back_their_rating(
    page, live_server, artifacts
):
    study, pi = make_study(ConfidenceScale.FIVE)
    late = UserFactory(username="late")
    membership_add(study=study, user=late, role=Role.READER)
    sign_in(page, live_server, "late")
    for number, (letter, digit) in enumerate([("a", "4"), ("b", "2")], start=1):
        page.goto(live_server.url + reverse("reader-case", args=[study.slug, number]))
        wait_seen(page, number)
        page.keyboard.press(letter)
        page.keyboard.press(digit)
        page.keyboard.press("Enter")
        page.wait_for_selector(f"text={number} / 32 answered")

    sign_in(page, live_server, pi.username)
    page.goto(live_server.url + reverse("analysis", args=[study.slug]))
    auc = page.locator('[data-confidence-table="auc"]')
    auc.wait_for()
    rows = auc.locator("tbody tr").all_inner_texts()
    assert len([r for r in rows if r.startswith("unaided") and "this reader" in r]) == 3
    assert len([r for r in rows if r.startswith("unaided\tmean of readers")]) == 2
    [late_row] = [r for r in rows if "not estimable" in r]
    assert "left out of the mean of readers" in late_row
    figure = page.locator('img[src*="/analysis/figure/roc_curves.svg"]')
    figure.scroll_into_view_if_needed()
    wait_image_loaded(figure)
    page.locator("section#roc").screenshot(path=str(artifacts / "roc-new-reader.png"))

    reader_finish(reader=late, study=study)
    sign_in(page, live_server, "late")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    summary = page.locator("[data-locked-answer]").inner_text()
    assert "Confidence: 4 Confident" in summary and "?:" not in summary
