"""The analysis page of a two-arm crossover at 1280x720, as a PI reads it (issue 34): the
contents link to every section, nothing runs past the screen's width (the reliance table
with its 17 columns included), and the XLSX report downloads from the page as a file pandas
opens. Screenshots go to artifacts/ (SCREENSHOT_DIR=docs/screenshots writes the README's)."""

from __future__ import annotations

import pandas as pd
import pytest
from django.urls import reverse

from analysis.stats import AGREEMENT_RATES
from tests.browser.helpers import contents_reach_every_section, sign_in, wait_image_loaded
from tests.browser.test_friction_walk import LAPTOP, shots
from tests.design_tests.test_design_analysis import two_arm  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_contents_widths_and_the_xlsx_report_at_1280(page, live_server, two_arm):  # noqa: F811
    study, pi = two_arm
    page.set_viewport_size(LAPTOP)
    sign_in(page, live_server, pi.username)
    page.goto(live_server.url + reverse("analysis", args=[study.slug]))
    page.locator("nav#contents").wait_for()
    page.screenshot(path=str(shots() / "analysis-contents-1280.png"))
    linked = contents_reach_every_section(page)
    assert {"arms", "design-reliance_agreement", "accuracy", "agreement", "names"} <= set(linked)

    widths = page.evaluate(
        """() => ({page: document.documentElement.scrollWidth, screen: innerWidth,
             tables: [...document.querySelectorAll('table.design-table')].map(t => ({
               name: t.dataset.designTable, width: t.scrollWidth,
               room: t.parentElement.clientWidth}))})"""
    )
    assert widths["page"] <= widths["screen"], widths
    for table in widths["tables"]:
        assert table["width"] <= table["room"], table
    assert "reliance_agreement" in {t["name"] for t in widths["tables"]}
    reliance = page.locator('[data-design-table="reliance_agreement"]')
    assert AGREEMENT_RATES["agree_when_ai_wrong"] in reliance.inner_text()
    assert "agree_when_ai_wrong_ci_low" not in reliance.inner_text()
    page.evaluate("document.getElementById('design-reliance_agreement').scrollIntoView()")
    page.screenshot(path=str(shots() / "analysis-reliance-1280.png"))

    figure = page.locator('img[src*="/analysis/figure/aided_vs_unaided.svg"]')
    figure.scroll_into_view_if_needed()
    wait_image_loaded(page.locator('img[src*="/analysis/figure/aided_vs_unaided.svg"]'))
    page.evaluate("document.getElementById('arms').scrollIntoView()")
    page.screenshot(path=str(shots() / "analysis-aided-vs-unaided-1280.png"))

    with page.expect_download() as download:
        page.locator("[data-report-xlsx]").click()
    path = download.value.path()
    assert download.value.suggested_filename.endswith(".xlsx")
    sheets = pd.read_excel(path, sheet_name=None)
    assert {"settings", "about", "accuracy", "arm_accuracy", "reliance_agreement"} <= set(sheets)
