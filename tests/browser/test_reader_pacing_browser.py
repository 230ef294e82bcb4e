"""Issue 26, items 3-5 in a browser: a comment by keyboard, a window preset that sticks, and a
Pause that stops the clock and hides the case."""

import re
import time

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Answer
from readerstudy.models import Image, ReaderStudy
from tests.browser.helpers import (
    reader_of,
    sign_in,
    study_with_radiographs,
    wait_for_image,
    wait_seen,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_case(page, live_server, study, number: int = 1) -> None:
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, number]))
    wait_for_image(page)
    wait_seen(page, number)


def readout(page) -> str:
    return page.inner_text(".wl-readout")


def wait_readout(page, text: str) -> None:
    expect(page.locator(".wl-readout")).to_contain_text(text)


def test_comment_by_keyboard_t_focuses_esc_leaves_ctrl_enter_submits(page, live_server):
    study = study_with_radiographs(3)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    open_case(page, live_server, study)
    page.keyboard.press("c")  # C is option C, not the comment
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    page.keyboard.press("t")
    assert page.evaluate("document.activeElement.name") == "comment"
    page.keyboard.type("mass in the right upper lobe")  # letters that are answer keys elsewhere
    assert page.is_checked("input[name=choice][value=C]")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    page.keyboard.press("m")  # a shortcut again: medium difficulty
    assert page.is_checked("input[name=difficulty][value=medium]")
    page.keyboard.press("t")
    page.keyboard.type(", spiculated")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#workspace[data-case-number='2']")
    page.wait_for_selector("text=Saved — case 1")
    answer = Answer.objects.get(reader=reader)
    assert (answer.choice, answer.difficulty) == ("C", "medium")
    assert answer.comment == "mass in the right upper lobe, spiculated"
    # The help lists the comment key, Ctrl/Cmd+Enter and Esc.
    page.keyboard.press("?")
    help_text = page.inner_text("#help")
    assert "write a comment" in help_text and "in the comment: submit" in help_text
    assert "in the comment: leave it" in help_text


def test_a_chosen_preset_sticks_across_cases_0_fits_and_w_resets_the_window(page, live_server):
    study = study_with_radiographs(4)
    presets = Image.objects.filter(case__dataset=study.dataset).first().window_presets
    reader_of(study)
    sign_in(page, live_server, "resident")
    open_case(page, live_server, study)
    # RG1 opens readable: its own default window, not the whole-range W 30000 / L 15000.
    center, width = presets["default"]
    assert readout(page).startswith(f"W {round(width)} · L {round(center)} · Default")
    assert page.locator(".wl-readout").count() == 1 and page.locator(".view-wl").count() == 0
    page.keyboard.press("Shift+3")
    wait_readout(page, "Lung")
    lung = f"W {round(presets['lung'][1])} · L {round(presets['lung'][0])} · Lung"
    # A tuned window: 0 (and Space) fit without touching it; W goes back to the preset.
    box = page.locator(".view canvas").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.keyboard.press("+")
    wait_readout(page, "125%")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 60, y + 20, steps=4)
    page.mouse.up()
    expect(page.locator(".wl-readout")).not_to_contain_text("Lung")
    tuned = readout(page).split(" · 125%")[0]
    page.keyboard.press("0")
    wait_readout(page, "· 100%")
    assert readout(page) == f"{tuned} · 100%"
    page.keyboard.press("w")
    wait_readout(page, "Lung")
    assert readout(page) == f"{lung} · 100%"
    # The next case, and the one after a reload, open at Lung.
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-case-number='2']")
    wait_readout(page, "Lung")
    assert readout(page).startswith(lung)
    page.reload()
    wait_for_image(page)
    wait_readout(page, "Lung")
    # Another reader of the study starts at the study's default, which the PI set to Bone.
    ReaderStudy.objects.filter(pk=study.pk).update(default_window="bone")
    reader_of(study, "colleague")
    sign_in(page, live_server, "colleague")
    open_case(page, live_server, study)
    wait_readout(page, "Bone")
    assert readout(page).startswith(
        f"W {round(presets['bone'][1])} · L {round(presets['bone'][0])}"
    )


def test_pause_stops_the_clock_hides_the_case_and_keys_wait(page, live_server):
    study = study_with_radiographs(6)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    started = time.monotonic()
    open_case(page, live_server, study)
    page.keyboard.press("1")
    page.keyboard.press("k")
    assert page.is_visible("#paused")
    assert (
        page.evaluate("getComputedStyle(document.getElementById('workspace')).visibility")
        == "hidden"
    )
    page.keyboard.press("2")  # no key acts on the hidden case
    page.keyboard.press("Enter")
    page.wait_for_timeout(4000)
    assert not Answer.objects.exists()
    page.keyboard.press("k")
    assert page.is_hidden("#paused")
    wait_seen(page, 1)  # answer keys wait for the dwell again after a pause
    assert page.is_checked("input[name=choice][value=A]")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Saved — case 1")
    wall_ms = (time.monotonic() - started) * 1000
    answer = Answer.objects.get(reader=reader)
    assert answer.choice == "A"
    assert 0 < answer.time_ms <= wall_ms - 4000  # the 4 s paused are not reading time
    # The button does the same; the top bar shows the time left once there is a pace.
    for number in (2, 3):
        wait_seen(page, number)
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        page.wait_for_selector(f"text=Saved — case {number}")
    expect(page.locator(".progress-pace-text")).to_contain_text("left at your pace")
    page.click("[data-action=pause][data-key]")
    assert page.is_visible("#paused") and "left at your pace" in page.inner_text("#paused")
    page.click("[data-action=resume]")
    assert page.is_hidden("#paused")


def test_a_break_reminder_after_the_pis_reading_time(page, live_server):
    study = study_with_radiographs(3)
    ReaderStudy.objects.filter(pk=study.pk).update(break_minutes=20)
    reader_of(study)
    sign_in(page, live_server, "resident")
    page.clock.install()
    open_case(page, live_server, study)
    assert page.is_hidden("#break-reminder")
    page.clock.fast_forward("19:00")
    page.wait_for_timeout(300)
    assert page.is_hidden("#break-reminder")
    page.clock.fast_forward("01:30")
    page.wait_for_selector("#break-reminder:visible")
    reminder = page.locator("#break-reminder")
    minutes = re.search(r"reading for (\d+) min without a break", reminder.inner_text())
    assert minutes and 20 <= int(minutes[1]) <= 21
    # Docked in the question panel, not over the image.
    assert page.evaluate("!!document.querySelector('#question-panel #break-reminder')")
    reminder.locator("[data-action=pause]").click()
    assert page.is_visible("#paused") and page.is_hidden("#break-reminder")


TOP_BAR_BOXES = """() => {
  const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                         return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {text: box('.topbar .progress-text'), menu: box('.topbar .reading-menu'),
          user: box('.topbar .user'), title: box('.topbar .study-title'), width: innerWidth};
}"""


@pytest.mark.parametrize("size", [(1920, 1080), (1440, 900), (1280, 720), (1000, 700)])
@pytest.mark.parametrize("case_ms", [None, 2_000_000])
def test_the_top_bar_never_overlaps_on_a_laptop(page, live_server, size, case_ms):
    """The time left ("time left: after a few cases", "about 1 h 40 min left at your pace")
    next to a long study title: the title gives way (ellipsis), the progress text never runs
    over the menu, and the user's links stay on screen (issue 26 walk-through: at 1280x720 the
    pace ran into "Instructions")."""
    study = study_with_radiographs(6, title="Demo reader study: chest X-ray MCQs")
    reader = reader_of(study)
    if case_ms:  # three answers at this pace, three cases left
        for item in study.items.order_by("position")[:3]:
            Answer.objects.create(
                item=item,
                reader=reader,
                choice="A",
                time_ms=case_ms,
                question_version=item.question.versions.get(number=1),
            )
    sign_in(page, live_server, "resident")
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_case(page, live_server, study, 4 if case_ms else 1)
    expected = "about 1 h 40 min left at your pace" if case_ms else "time left: after a few"
    assert expected in page.inner_text(".progress-text")
    boxes = page.evaluate(TOP_BAR_BOXES)
    assert boxes["text"]["right"] <= boxes["menu"]["left"], boxes
    assert boxes["menu"]["right"] <= boxes["user"]["left"], boxes
    assert boxes["user"]["right"] <= boxes["width"], boxes
    if size[0] > 1100:  # the title is shown on wide screens, and ends before the progress
        assert boxes["title"]["right"] <= boxes["text"]["left"], boxes
        assert boxes["title"]["right"] - boxes["title"]["left"] > 60, boxes  # "Demo read…"
        # ...which keeps its one line
        assert boxes["text"]["bottom"] - boxes["text"]["top"] < 20, boxes
