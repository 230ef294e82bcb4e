"""What only a browser shows of issue 26's expert evidence panel and the PI's prediction
upload: the panel arrives by htmx on the review page, the upload is previewed before it is
written. Both leave a screenshot in artifacts/ (the README's come from these)."""

import re

import pytest
from django.urls import reverse

from readerstudy.predictions.models import AIModel, Prediction
from tests.browser.helpers import sign_in, wait_for_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LAPTOP = {"width": 1280, "height": 720}


def test_the_review_page_shows_who_chose_what(page, live_server, demo, artifacts):
    page.set_viewport_size(LAPTOP)
    sign_in(page, live_server, "expert1")
    page.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    page.locator("table.queue tbody tr a").first.click()
    wait_for_image(page)
    panel = page.locator("#evidence table.evidence-shares")
    panel.wait_for()  # swapped in by htmx from the analysis layer
    text = page.locator("#evidence").inner_text()
    assert "rank 1 of" in text and "Why it ranks here" in text
    # Who chose what: readers by their page names (in the order they joined; reader1, who
    # has not read this question, keeps "Reader 1"), never by username, and models by name.
    assert re.search(r"\bReader \d+\b", text) and "MedGemma-demo" in text, text
    assert not re.search(r"\breader\d", text), text
    page.locator("#evidence").evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(artifacts / "expert-evidence.png"))


def test_a_pi_previews_an_upload_and_then_imports_it(page, live_server, demo, artifacts, tmp_path):
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live_server, "pi1")
    ids = list(demo.items.values_list("question__source_id", flat=True))
    rows = [f"{qid},<answer>B</answer>" for qid in ids[:-1]] + [f"{ids[-1]},I am not sure"]
    file = tmp_path / "gpt-demo.csv"
    file.write_text("question_id,prediction\n" + "\n".join(rows) + "\n")
    page.goto(live_server.url + reverse("analysis", args=[demo.slug]) + "#predictions")
    form = page.locator("#predictions form")
    form.locator("input[name=model]").fill("GPT-demo")
    form.locator("input[name=file]").set_input_files(str(file))
    form.locator("button[type=submit]").click()
    preview = page.locator(".prediction-preview")
    preview.wait_for()
    text = preview.inner_text()
    assert f"{len(ids)} of {len(ids)}" in text  # every question matched
    assert demo.slug in text and "Studies whose results change" in text
    assert not AIModel.objects.filter(name="GPT-demo").exists()  # nothing written yet
    page.screenshot(path=str(artifacts / "pi-upload-preview.png"), full_page=True)
    preview.locator("button.primary").click()
    page.wait_for_url(lambda url: url.split("?")[0].endswith(f"/s/{demo.slug}/analysis/"))
    assert "Imported" in page.locator(".messages").inner_text()
    predictions = Prediction.objects.filter(model__name="GPT-demo")
    assert predictions.count() == len(ids)
    assert predictions.filter(letter="").count() == 1  # the one without a letter
