"""The full-depth viewer as a reader sees it: stored units, preset keys, no banding, fallback."""

import re
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.urls import reverse
from PIL import Image as PILImage
from playwright.sync_api import expect

from readerstudy.imaging import decode_codes, derive_display_image
from readerstudy.models import Image, Role
from tests.browser.helpers import (
    reader_of,
    sign_in,
    study_with_radiographs,
    wait_for_image,
    wait_until,
)
from tests.conftest import RESOURCES
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

READOUT = re.compile(r"^W (-?\d+) · L (-?\d+)")


def open_case(page, live_server, study, query: str = "") -> None:
    reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]) + query)
    wait_for_image(page)


def readout(page) -> str:
    return page.inner_text(".wl-readout")


def window_of(page) -> tuple[int, int]:
    match = READOUT.match(readout(page))
    assert match, readout(page)
    return int(match.group(1)), int(match.group(2))


def press_and_wait(page, key: str, expected: str) -> None:
    page.keyboard.press(key)
    expect(page.locator(".wl-readout")).to_contain_text(expected)


def first_image(study) -> Image:
    return Image.objects.filter(case__dataset=study.dataset).order_by("id").first()


def shown_at(page, fractions: list[tuple[float, float]], size: int = 9) -> list[float]:
    """Mean grey shown around points given as fractions of the image (not the canvas)."""
    return page.evaluate(
        """([points, size]) => {
          const v = window.ReaderViewer.current.views[0];
          const b = v.box();
          return points.map(([fx, fy]) => {
            const x = Math.round(b.x + fx * b.w) - (size >> 1);
            const y = Math.round(b.y + fy * b.h) - (size >> 1);
            const px = v.readPixels(x, y, size, size);
            return px.reduce((a, c) => a + c, 0) / px.length;
          });
        }""",
        [fractions, size],
    )


def test_window_level_in_stored_units_and_shift_digit_presets(page, live_server):
    study = study_with_radiographs(2)
    presets = first_image(study).window_presets
    open_case(page, live_server, study)
    assert page.evaluate("window.ReaderViewer.current.views[0].renderer.name") == "webgl"
    # RG1's default window in stored units, not 0-255: "auto", as its DICOM window (W 30000 /
    # L 15000) holds every value and would show the chest washed out.
    center, width = presets["default"]
    assert (round(width), round(center)) != (30000, 15000)
    assert readout(page).startswith(f"W {round(width)} · L {round(center)} · Default")
    for key, name, label in [
        ("Shift+3", "lung", "Lung"),
        ("Shift+2", "soft", "Soft tissue"),
        ("Shift+4", "bone", "Bone"),
        ("Shift+5", "auto", "Auto"),
    ]:
        press_and_wait(page, key, label)
        center, width = presets[name]
        assert window_of(page) == (round(width), round(center)), name
    # Shift+digits never answer: options are on 1-4 without Shift.
    assert page.locator("input[name=choice]:checked").count() == 0
    press_and_wait(page, "Shift+1", "Default")
    assert window_of(page) == (round(width), round(center))
    # Dragging right widens the window, in stored units (1/512 of the value range per pixel).
    box = page.locator(".view canvas").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 64, y, steps=4)
    page.mouse.up()
    expect(page.locator(".wl-readout")).not_to_contain_text("Default")
    image = first_image(study)
    dragged_width, dragged_center = window_of(page)
    assert dragged_center == round(center)
    assert dragged_width == pytest.approx(
        width + 64 * (image.value_max - image.value_min) / 512, abs=2
    )
    # The visible buttons do the same as the keys.
    page.click("[data-preset=lung]")
    expect(page.locator(".wl-readout")).to_contain_text("Lung")
    assert window_of(page) == (round(presets["lung"][1]), round(presets["lung"][0]))


def test_monochrome1_shows_bone_bright_at_every_preset(page, live_server):
    study = study_with_radiographs(2)
    open_case(page, live_server, study)
    points = [(0.5, 0.4), (0.25, 0.4), (0.75, 0.4)]  # spine, right lung, left lung
    for key in ["Shift+1", "Shift+2", "Shift+3", "Shift+4", "Shift+5"]:
        page.keyboard.press(key)
        spine, right, left = shown_at(page, points)
        assert spine > right and spine > left, key
    spine, right, left = shown_at(page, points)
    page.keyboard.press("i")
    inv_spine, inv_right, _ = shown_at(page, points)
    assert inv_spine < inv_right
    assert abs(spine + inv_spine - 255) <= 2


def test_a_one_percent_window_on_the_15_bit_source_does_not_band(page, live_server):
    """1% of the 15-bit range (328 units) over the lung: the full-depth path spreads it over
    many grey levels; an 8-bit display image has two or three there."""
    study = study_with_radiographs(2)
    image = first_image(study)
    codes = decode_codes(PILImage.open(Path(settings.MEDIA_ROOT) / image.depth))
    values = image.value_offset + image.value_scale * codes.astype(float)
    h, w = values.shape
    lung = values[int(h * 0.3) : int(h * 0.5), int(w * 0.2) : int(w * 0.3)]
    center, width = float(np.median(lung)), 32768 * 0.01
    script = """([center, width]) => {
        const v = window.ReaderViewer.current.views[0];
        Object.assign(v.state, { center, width, zoom: 4 });
        const b = v.box();
        // The right-lung box, wherever the zoom put it on screen.
        const x = Math.max(0, Math.round(b.x + 0.2 * b.w));
        const y = Math.max(0, Math.round(b.y + 0.3 * b.h));
        const w = Math.min(200, v.canvas.width - x), h = Math.min(200, v.canvas.height - y);
        const px = v.readPixels(x, y, w, h);
        return new Set(px.filter((g) => g > 0 && g < 255)).size;
    }"""
    open_case(page, live_server, study)
    levels = page.evaluate(script, [center, width])
    assert levels > 100
    # An 8-bit display image of the same box, the same window in its units (the DICOM window
    # 0-30000 in 0-255, MONOCHROME1 flipped), holds at most 4 grey levels inside the window.
    display = np.asarray(
        PILImage.open(Path(settings.MEDIA_ROOT) / image.display).convert("L"), dtype=float
    )
    dh, dw = display.shape
    lung_8bit = display[int(dh * 0.3) : int(dh * 0.5), int(dw * 0.2) : int(dw * 0.3)]
    display_center, display_width = 255 - (center / 30000 * 255), width / 30000 * 255
    low, high = display_center - display_width / 2, display_center + display_width / 2
    assert len(np.unique(lung_8bit[(lung_8bit > low) & (lung_8bit < high)])) <= 4


def test_canvas_fallback_windows_in_stored_units_too(page, live_server):
    study = study_with_radiographs(2)
    presets = first_image(study).window_presets
    open_case(page, live_server, study, "?viewer=canvas")
    assert page.evaluate("window.ReaderViewer.current.views[0].renderer.name") == "canvas"
    center, width = presets["default"]
    assert readout(page).startswith(f"W {round(width)} · L {round(center)} · Default")
    press_and_wait(page, "Shift+3", "Lung")
    assert window_of(page) == (round(presets["lung"][1]), round(presets["lung"][0]))
    spine, lung = shown_at(page, [(0.5, 0.4), (0.25, 0.4)])
    assert spine > lung


def test_an_8bit_png_source_keeps_the_display_grey_window(page, live_server):
    study = study_with_radiographs(2)
    derived = derive_display_image(RESOURCES / "tiny_8bit.png", Path(settings.MEDIA_ROOT))
    Image.objects.filter(case__dataset=study.dataset).update(**derived.image_fields())
    reader_of(study)
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    wait_until(
        page, "() => window.ReaderViewer.current && window.ReaderViewer.current.views[0].loaded"
    )
    expect(page.locator(".wl-readout")).not_to_have_text("")
    assert readout(page) == "W 255 · L 128 · 100%"
    assert page.locator(".wl-presets").is_hidden()
    page.keyboard.press("Shift+3")
    page.wait_for_timeout(100)
    assert readout(page) == "W 255 · L 128 · 100%"
    assert page.locator("input[name=choice]:checked").count() == 0


def test_the_viewer_keys_are_the_same_on_the_reading_and_the_expert_page(page, live_server):
    """One key list (viewer-keys.js): zoom, Space/0 fit (the window and invert stay), W resets the
    window, invert and full screen act alike on both pages; each page's full screen keeps what
    it should beside the image."""
    study = study_with_radiographs(2)
    expert = UserFactory(username="expert")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    open_case(page, live_server, study)
    review_url = reverse("expert-review", args=[study.slug, study.items.first().id])

    def check_keys(keeps_beside_image: str) -> None:
        press_and_wait(page, "+", "· 125%")
        press_and_wait(page, "i", "· inv")
        press_and_wait(page, " ", "· 100%")  # Space fits, as 0 does: the window stays
        assert "inv" in readout(page)
        opened_at = readout(page).split(" · ")[2]  # the preset the case opened at
        box = page.locator(".view canvas").first.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 + 50, box["y"] + box["height"] / 2, steps=3)
        page.mouse.up()
        expect(page.locator(".wl-readout")).not_to_contain_text(opened_at)
        press_and_wait(page, "w", opened_at)  # W: back to the window the case opened at
        page.keyboard.press("i")  # invert off again ("· 100%" is already there: wait for it)
        expect(page.locator(".wl-readout")).not_to_contain_text("inv")
        press_and_wait(page, "=", "· 125%")
        press_and_wait(page, "0", "· 100%")
        page.keyboard.press("f")
        page.wait_for_selector(":fullscreen")
        assert page.evaluate(
            "(sel) => document.fullscreenElement.contains(document.querySelector(sel))",
            keeps_beside_image,
        )
        page.evaluate("document.exitFullscreen()")
        page.wait_for_selector(":fullscreen", state="detached")

    check_keys("#answer-form")  # the reader's question stays beside the image
    assert page.locator("#answer-form input:checked").count() == 0  # no key answered

    page.context.clear_cookies()
    sign_in(page, live_server, "expert")
    page.goto(live_server.url + review_url)
    wait_for_image(page)
    check_keys(".viewer")
    # Space on a focused box is the box's: it toggles, and the view stays as it is.
    page.focus("input[name=flags][value=other]")
    press_and_wait(page, "+", "· 125%")
    page.keyboard.press(" ")
    assert page.is_checked("input[name=flags][value=other]")
    assert "· 125%" in readout(page)
