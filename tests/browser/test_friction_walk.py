"""Issue 34's walk on the demo, as new users do it: pi1 uploads a new AI model's predictions into
the demo dataset (a file with four kinds of problems first, then a good one), creates a two-arm
crossover aided by that model from the browser, and invites three residents by a pasted list;
the residents read both sessions with the keyboard (one at 1280x720, who goes offline for two
cases; one at 1920x1080); an expert reviews.

It checks the points the walk found: reading carries on after the connection returns, with no
revision and no waiting time counted; finishing takes at most 3 keys; Submit is in view on
every aided case and "Saved — case N" never covers the image; the Lung preset holds into
session 2; "Name <address>" lines invite; the upload names all its problems with rows at once;
the new study is aided by the model first uploaded into the dataset; the expert's evidence is in
view and save-and-next shows the next question without loading a page.

Screenshots of each point go to artifacts/ (SCREENSHOT_DIR=docs/screenshots writes the
README's)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Answer, AnswerRevision, ReaderCompletion, ReadingPreference
from readerstudy.models import ReaderAssignment, ReaderStudy
from tests.browser.helpers import (
    contents_reach_every_section,
    finish_on_review,
    press_on_autofocus,
    sign_in,
    wait_for_image,
    wait_seen,
)

pytestmark = [pytest.mark.browser, pytest.mark.engine, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 720}
DESKTOP = {"width": 1920, "height": 1080}
SAMPLE = 8
OFFLINE_S = 4.0  # how long the laptop reader stays offline with the next case not opened
NEW_PASSWORD = "a-long-fresh-passphrase-34"
INVITES = (
    "Ben Okafor <ben.okafor@hospital.org>\n"
    '"Diaz, Carla" <carla.diaz@hospital.org>\n'
    "Dan Wu\tdan.wu@hospital.org\n"
)


def shots() -> Path:
    folder = Path(os.environ.get("SCREENSHOT_DIR") or Path(__file__).parents[2] / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def predictions_file(tmp_path: Path, ids: list[str], problems: bool) -> Path:
    rows = [f"{qid},<answer>{'ABCD'[i % 4]}</answer>" for i, qid in enumerate(ids)]
    if problems:  # four kinds of problems, and two rows with no letter to find
        rows[1] = f"{ids[1]},E"
        rows[2] = f"{ids[2]},"
        rows += [f"{ids[0]},B", "not-in-the-dataset,C", ",D", f"{ids[3]}x,bad\x00text"]
    path = tmp_path / ("with-problems.csv" if problems else "newaid.csv")
    path.write_text("question_id,prediction\n" + "\n".join(rows) + "\n")
    return path


def in_view(page, selector: str) -> bool:
    """The element is inside the viewport and nothing covers its centre."""
    return page.evaluate(
        """(sel) => { const el = document.querySelector(sel); if (!el) return false;
             const r = el.getBoundingClientRect();
             if (!r.height || r.top < 0 || r.bottom > innerHeight) return false;
             if (r.right > innerWidth) return false;
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
             return !!hit && (hit === el || el.contains(hit)); }""",
        selector,
    )


def clear_of_image(page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const a = document.querySelector(sel).getBoundingClientRect();
             const b = document.querySelector('.viewer .views').getBoundingClientRect();
             return a.right <= b.left || a.left >= b.right
                 || a.bottom <= b.top || a.top >= b.bottom; }""",
        selector,
    )


def preset_shown(page) -> str:
    return page.evaluate("window.ReaderViewer.current.views[0].state.preset")


def answer(page, number: int) -> None:
    wait_seen(page, number)
    page.keyboard.press(str(1 + number % 4))
    page.keyboard.press("Enter")


def read_session(page, base: str, study: ReaderStudy, session: int, *, laptop_walk=False):
    """One session with the keyboard from Start on the home page; every aided case checked for
    Submit in view; finished with Space, Enter on the review page. The laptop walk also picks
    the Lung preset (session 1) and finds it again (session 2), goes offline for cases 5 and 6
    (session 1), and opens the review page with R from case 3 (session 2)."""
    page.goto(f"{base}/")
    assert page.locator("a.button.primary[autofocus]").count() == 1
    expect(page.locator("a.button.primary[autofocus]")).to_be_focused()
    focused = page.evaluate("document.activeElement.textContent").strip()
    assert focused.startswith(("Start", "Resume")), focused
    page.keyboard.press("Enter")  # Start, one key (issue 34: 5 Tabs)
    banner = page.wait_for_selector(f"text=Session {session} of 2")
    aided = "aided by AI" in banner.inner_text()
    press_on_autofocus(page)  # past the instructions
    width = page.viewport_size["width"]
    number = 1
    while number <= SAMPLE:
        page.wait_for_selector(f"text=Case {number} of {SAMPLE}")
        wait_seen(page, number)
        assert page.locator("[data-ai-aid]").count() == (1 if aided else 0)
        if aided:
            assert in_view(page, "#answer-form button[type=submit]"), (width, number)
        if laptop_walk:
            modality = page.evaluate("window.ReaderViewer.current.views[0].modality")
            if session == 1 and number == 1:
                assert preset_shown(page) == "default"
                page.keyboard.press("Shift+Digit3")  # Lung
                assert preset_shown(page) == "lung"
                LUNG_MODALITY.append(modality)
            elif modality in LUNG_MODALITY:  # every later case of that modality, session 2 too
                assert preset_shown(page) == "lung", (session, number)
            if session == 1 and number == 5:
                offline_for_two_cases(page)
                number = 7
                continue
            if session == 2 and number == 3:
                page.keyboard.press("r")  # All cases and the final submit, from any case
                page.wait_for_url(f"**{reverse('reader-review', args=[study.slug])}")
                expect(page.locator("input[name=confirm]")).to_be_focused()
                page.go_back()
                page.wait_for_selector(f"text=Case {number} of {SAMPLE}")
                wait_seen(page, number)
        if number == 2 and aided:
            page.wait_for_selector("#save-status:has-text('Saved — case 1')")
            assert clear_of_image(page, "#save-status")
            page.screenshot(path=str(shots() / f"reader-aided-{width}.png"))
        answer(page, number)
        number += 1
    page.wait_for_url(f"**{reverse('reader-review', args=[study.slug])}")
    page.wait_for_selector(f"text=All {SAMPLE} cases are answered")
    expect(page.locator("input[name=confirm]")).to_be_focused()
    if laptop_walk and session == 1:
        page.screenshot(path=str(shots() / "reader-finish.png"))
    finish_on_review(page)  # finishing: 2 keys after the last answer
    page.wait_for_url(f"**{reverse('reader-done', args=[study.slug])}")
    page.wait_for_load_state("networkidle")


LUNG_MODALITY: list[str] = []


def offline_for_two_cases(page) -> None:
    """Case 5 answered offline (case 6 was fetched ahead), case 6 answered offline: case 7
    cannot be opened. Back online after OFFLINE_S: case 7 opens by itself."""
    page.wait_for_selector("#workspace[data-next-ready]")
    page.context.set_offline(True)
    answer(page, 5)
    page.wait_for_selector(f"text=Case 6 of {SAMPLE}")
    answer(page, 6)
    alert = page.locator("#save-alert")
    alert.wait_for()
    expect(page.locator("#save-alert")).to_contain_text("Case 7 opens then", use_inner_text=True)
    assert "Your answers to cases 5 and 6 are kept in this browser" in alert.inner_text()
    page.keyboard.press("Enter")  # held: no second answer, no revision
    page.screenshot(path=str(shots() / "reader-offline-waiting.png"))
    time.sleep(OFFLINE_S)
    page.context.set_offline(False)
    page.wait_for_selector(f"text=Case 7 of {SAMPLE}")  # carries on by itself
    page.wait_for_selector("#save-status:has-text('Saved — case 6')")
    assert page.locator("#save-alert").is_hidden()


def test_the_friction_walk(page, live_server, demo, new_context, tmp_path):
    # --- pi1: a new model's predictions into the dataset, then a crossover aided by it ---
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "pi1")
    page.goto(live_server.url + reverse("study-create"))
    page.click("[data-aid-upload] a")
    page.select_option("select[name=dataset]", str(demo.dataset_id))
    ids = list(demo.dataset.questions.order_by("source_id").values_list("source_id", flat=True))
    page.fill("input[name=model]", "NewAid-demo")
    page.set_input_files("input[name=file]", str(predictions_file(tmp_path, ids, True)))
    page.click("form.prediction-form button[type=submit]")
    problems = page.locator("[data-upload-problems] li")
    problems.first.wait_for()
    text = page.inner_text("[data-upload-problems]")
    assert problems.count() == 4  # every kind, in one round
    last = len(ids) + 1  # the file's last good line; the four problem rows follow
    for words in (
        f"(line {last + 1}, also line 2)",  # a duplicate
        f"not-in-the-dataset (line {last + 2})",  # an id the dataset does not have
        f"empty question_id (1 row(s)): line {last + 3}",
        f"(line {last + 4}, holds a NUL character)",
    ):
        assert words.lower() in text.lower(), words
    failed = page.inner_text("[data-failed-rows]")
    assert "line 3" in failed and "“E”" in failed and "line 4" in failed and "empty" in failed
    page.screenshot(path=str(shots() / "upload-problems.png"), full_page=True)
    page.set_input_files("input[name=file]", str(predictions_file(tmp_path, ids, False)))
    page.click("form.prediction-form button[type=submit]")
    page.click(".prediction-preview button.primary")  # Import
    page.wait_for_url(re.compile(r"/studies/new/\?dataset="))
    assert page.locator("select[name=aid_model]").input_value() == "NewAid-demo"
    assert page.locator("select[name=arms]").input_value() == "unaided,aided"

    page.fill("input[name=title]", "Crossover pilot")  # no slug: made from the title
    page.fill("input[name=washout_days]", "0")
    page.select_option("select[name=aid_mode]", "concurrent")
    page.click("form button[type=submit]")  # the sample size forgotten
    summary = page.locator("[data-error-summary]")
    assert "Number of questions" in summary.inner_text()
    assert "This field is required" in summary.inner_text()
    page.screenshot(path=str(shots() / "new-study-errors.png"))
    page.fill("input[name=sample]", str(SAMPLE))
    page.click("form button[type=submit]")
    page.wait_for_url(f"**{reverse('pi-dashboard', args=['crossover-pilot'])}")
    study = ReaderStudy.objects.get(slug="crossover-pilot")
    assert study.aid_model == "NewAid-demo"

    # --- pi1 invites three residents by a pasted list ---
    page.goto(live_server.url + reverse("pi-invite", args=[study.slug]))
    page.fill("textarea[name=people]", INVITES + "not-an-address@\n")
    page.click("form button[type=submit]")
    assert "Nobody was added" in page.inner_text("[data-invite-problems]")
    assert "Line 4" in page.inner_text("[data-invite-problems]")
    kept = page.locator("textarea[name=people]").input_value()
    assert "Ben Okafor <ben.okafor@hospital.org>" in kept
    page.fill("textarea[name=people]", kept.replace("not-an-address@\n", ""))
    page.click("form button[type=submit]")
    page.wait_for_selector("text=3 people added as readers")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("[data-copy-all]")
    page.wait_for_selector("[data-copy-all]:has-text('Copied')")
    copied = page.evaluate("navigator.clipboard.readText()").split("\n")
    assert len(copied) == 3 and all("/accounts/invitation/" in link for link in copied)
    assert page.locator("[data-invite-csv]").get_attribute("download").endswith(".csv")
    page.screenshot(path=str(shots() / "invite-links.png"))
    ben_link = page.get_attribute("[aria-label='Sign-in link for ben.okafor']", "data-link")
    arms = dict(
        ReaderAssignment.objects.filter(study=study).values_list("reader__username", "first_arm")
    )
    assert set(arms) == {"ben.okafor", "carla.diaz", "dan.wu"}

    # --- Ben (1280x720): his link, both sessions; offline for two cases; Lung sticks ---
    laptop = new_context(viewport=LAPTOP).new_page()
    laptop.goto(ben_link)
    laptop.fill("input[name=new_password1]", NEW_PASSWORD)
    laptop.fill("input[name=new_password2]", NEW_PASSWORD)
    laptop.click("form button[type=submit]")
    laptop.wait_for_url(f"{live_server.url}/")
    LUNG_MODALITY.clear()
    read_session(laptop, live_server.url, study, 1, laptop_walk=True)
    ben = Answer.objects.filter(item__study=study, reader__username="ben.okafor", session=1)
    assert ben.count() == SAMPLE
    assert not AnswerRevision.objects.filter(answer__in=ben).exists()  # no revision
    assert max(ben.values_list("time_ms", flat=True)) < OFFLINE_S * 1000  # no waiting counted
    assert not ben.filter(revisions_count__gt=0).exists()
    read_session(laptop, live_server.url, study, 2, laptop_walk=True)
    chosen = ReadingPreference.objects.get(study=study, reader__username="ben.okafor")
    assert chosen.preset == "lung" and chosen.modality == LUNG_MODALITY[0]

    # --- Carla (1920x1080): both sessions ---
    desktop = new_context(viewport=DESKTOP).new_page()
    sign_in(desktop, live_server, "carla.diaz")
    read_session(desktop, live_server.url, study, 1)
    read_session(desktop, live_server.url, study, 2)
    assert ReaderCompletion.objects.filter(study=study).count() == 4
    assert Answer.objects.filter(item__study=study).exclude(choice="").count() == 4 * SAMPLE

    # --- expert1 (1280x720): evidence in view, save and next without a page load ---
    expert = new_context(viewport=LAPTOP).new_page()
    sign_in(expert, live_server, "expert1")
    expert.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    expert.locator("table.queue tbody tr a").first.click()
    wait_for_image(expert)
    expert.locator("#evidence table.evidence-shares").wait_for()
    for selector in (
        "#evidence h3",
        "#evidence table.evidence-shares",
        "#review-form button.primary",
    ):
        assert in_view(expert, selector), selector
    expert.screenshot(path=str(shots() / "expert-review-1280.png"))
    expert.wait_for_selector("#workspace[data-next-ready]")
    first = expert.url
    expert.evaluate("window.__samePage = true")
    for key in ("x", "d", "r", "Enter"):
        expert.keyboard.press(key)
    expert.wait_for_url(lambda url: url != first)
    expert.wait_for_selector(".expert-saved")
    assert expert.evaluate("window.__samePage === true")  # swapped in, not a page load
    assert "saved" in expert.inner_text(".expert-saved")

    # --- pi1: the crossover's analysis page, its contents reaching every section ---
    for viewport, name in ((LAPTOP, "1280"), (DESKTOP, "1920")):
        pi = new_context(viewport=viewport).new_page()
        sign_in(pi, live_server, "pi1")
        pi.goto(live_server.url + reverse("analysis", args=[study.slug]))
        linked = contents_reach_every_section(pi)
        assert {"arms", "accuracy", "predictions"} <= set(linked), linked
        pi.evaluate("window.scrollTo(0, 0)")
        pi.screenshot(path=str(shots() / f"analysis-contents-demo-{name}.png"))
