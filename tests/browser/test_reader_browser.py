"""What only a browser shows: keyboard-only reading, resume, the viewer, double submit."""

import pytest
from django.urls import reverse

from annotation.models import Answer
from tests.browser.helpers import (
    canvas_pixels,
    press_on_autofocus,
    reader_of,
    sign_in,
    study_with_radiographs,
    wait_for_image,
    wait_seen,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_keyboard_only_reading_and_resume(page, live_server, artifacts):
    study = study_with_radiographs(6, images_per_case=2)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    page.wait_for_selector("text=Begin with case 1")  # the instructions come first
    press_on_autofocus(page)
    page.wait_for_selector("text=Case 1 of 6")
    wait_for_image(page)
    page.screenshot(path=str(artifacts / "case-page.png"))
    for number, key in [(1, "2"), (2, "c"), (3, "4")]:
        page.wait_for_selector(f"text=Case {number} of 6")
        wait_seen(page, number)
        page.keyboard.press(key)
        page.keyboard.press("m")
        page.keyboard.press("y")
        page.keyboard.press("Enter")
        page.wait_for_selector(f"text=Case {number + 1} of 6")
    page.wait_for_selector("text=3 / 6 answered")
    answers = Answer.objects.filter(reader=reader).order_by("created_at")
    assert [a.choice for a in answers] == ["B", "C", "D"]
    assert {a.difficulty for a in answers} == {"medium"}
    assert {a.alignment for a in answers} == {"yes"}
    assert all(a.time_ms > 0 for a in answers)
    page.reload()
    page.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    page.wait_for_selector("text=Case 4 of 6")
    assert page.url.endswith("/read/4/")


def test_dragging_on_a_view_changes_its_pixels_and_i_inverts(page, live_server):
    study = study_with_radiographs(2)
    reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    wait_for_image(page)
    before = canvas_pixels(page)
    readout_before = page.inner_text(".wl-readout")
    box = page.locator(".view canvas").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 120, y + 40, steps=8)
    page.mouse.up()
    page.wait_for_timeout(100)
    after_drag = canvas_pixels(page)
    assert after_drag != before
    assert page.inner_text(".wl-readout") != readout_before
    page.keyboard.press("w")  # reset the window (0 only fits)
    page.wait_for_timeout(100)
    reset = canvas_pixels(page)
    assert reset == before
    page.keyboard.press("i")
    page.wait_for_timeout(100)
    inverted = canvas_pixels(page)
    inside = [(a, b) for a, b in zip(reset, inverted, strict=True) if a > 0]  # skip margins
    assert inside and all(abs(a + b - 255) <= 2 for a, b in inside)


def test_double_submit_leaves_one_answer(page, live_server):
    study = study_with_radiographs(3)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    wait_seen(page, 1)
    page.keyboard.press("1")
    page.locator("button.submit").dblclick()
    page.wait_for_selector("text=Case 2 of 3")
    wait_seen(page, 2)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Case 3 of 3")
    page.wait_for_timeout(300)
    assert Answer.objects.filter(reader=reader).count() == 2
    assert "Server Error" not in page.content()


def test_shortcuts_are_off_while_typing_a_comment(page, live_server):
    study = study_with_radiographs(2)
    reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    page.click("textarea[name=comment]")
    page.keyboard.type("abcd 1234 i")
    assert page.input_value("textarea[name=comment]") == "abcd 1234 i"
    assert page.locator("input[name=choice]:checked").count() == 0
    page.locator("textarea[name=comment]").blur()
    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#help").is_visible()


def test_ctrl_enter_in_the_comment_submits_and_esc_leaves_it(page, live_server):
    study = study_with_radiographs(2)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    wait_seen(page, 1)
    page.keyboard.press("2")
    page.click("textarea[name=comment]")
    page.keyboard.type("apical lucency")
    page.keyboard.press("Escape")  # leaves the comment: the keys act again
    assert page.evaluate("() => document.activeElement.name") != "comment"
    page.keyboard.press("3")
    assert page.locator("input[name=choice]:checked").get_attribute("value") == "C"
    page.click("textarea[name=comment]")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Case 2 of 2")
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    answer = Answer.objects.get(reader=reader)
    assert (answer.choice, answer.comment) == ("C", "apical lucency")
