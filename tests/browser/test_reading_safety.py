"""Reading never loses or silently changes an answer, and never waits (issue 11).

Each test is one rule tried the way a reader would run into it: keys, drafts, a failing
network, an ended session, Back, the next case shown at once, full screen, small screens.
"""

import re
from pathlib import Path

import pytest
from django.urls import reverse
from pydicom.data import get_testdata_file

from annotation.models import Answer
from annotation.selectors import ordered_item_ids
from annotation.services import answer_submit, reader_finish
from readerstudy.models import StudyQuestion
from tests.browser.helpers import (
    end_session,
    press_on_autofocus,
    reader_of,
    sign_in,
    sign_in_with_form,
    study_with_radiographs,
    wait_for_image,
    wait_until,
)
from tests.factories import PASSWORD
from tests.radiographs import derived_once

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The reading page's answer posts (their query names the session, stage and layout).
ANSWER_POST = re.compile(r"/read/\d+/answer/(\?.*)?$")


def open_case(page, live_server, study, number: int) -> None:
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, number]))
    wait_shown(page, number, study.items.count())


def wait_shown(page, number: int, total: int) -> None:
    """The case is on screen, its images drawn, and the reading policy's minimum dwell over,
    so its answer keys act (reader.js sets data-drawn, then data-seen)."""
    page.wait_for_selector(f"#workspace[data-case-number='{number}'][data-drawn][data-seen]")
    assert f"Case {number} of {total}" in page.inner_text(".case-counter")


def checked(page, name: str = "choice") -> str | None:
    return page.evaluate(
        "(name) => { const r = document.querySelector(`#answer-form input[name=${name}]:checked`);"
        " return r ? r.value : null; }",
        name,
    )


def answer_of(reader, study, number: int) -> Answer | None:
    item_id = ordered_item_ids(study, reader)[number - 1]
    return Answer.objects.filter(reader=reader, item_id=item_id).first()


@pytest.fixture
def reading(page, live_server):
    """A reader signed in on a fresh 4-case study (revision allowed)."""
    study = study_with_radiographs(4)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    return study, reader


def test_arrow_keys_never_change_a_choice_and_moving_keeps_the_draft(page, live_server, reading):
    study, reader = reading
    open_case(page, live_server, study, 1)
    page.keyboard.press("2")
    page.keyboard.press("y")
    for key in ("ArrowUp", "ArrowDown"):
        page.keyboard.press(key)
    assert (checked(page), checked(page, "alignment")) == ("B", "yes")
    page.click("#answer-form label.option:nth-of-type(3)")  # the mouse leaves focus nowhere risky
    assert checked(page) == "C"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    assert checked(page) == "C"
    page.focus("#answer-form input[name=choice][value=C]")  # even a focused radio
    page.keyboard.press("ArrowDown")
    assert checked(page) == "C"
    page.keyboard.press("ArrowRight")  # arrows move between cases...
    wait_shown(page, 2, 4)
    assert checked(page) is None
    page.keyboard.press("ArrowLeft")
    wait_shown(page, 1, 4)
    assert checked(page) == "C"  # ...and the choice stays, as a draft
    assert "Draft, not submitted" in page.inner_text(".draft-note")
    assert not Answer.objects.filter(reader=reader).exists()


@pytest.mark.engine
def test_draft_comes_back_after_reload_new_tab_and_sign_in_and_is_never_an_answer(
    page, live_server, reading
):
    study, reader = reading
    open_case(page, live_server, study, 2)
    page.keyboard.press("d")
    page.keyboard.press("h")
    page.fill("textarea[name=comment]", "left apex?")
    page.reload()
    wait_shown(page, 2, 4)
    assert (checked(page), checked(page, "difficulty")) == ("D", "hard")
    assert page.input_value("textarea[name=comment]") == "left apex?"

    other_tab = page.context.new_page()
    open_case(other_tab, live_server, study, 2)
    assert checked(other_tab) == "D"
    other_tab.goto(live_server.url + reverse("reader-review", args=[study.slug]))
    other_tab.wait_for_selector("li[data-case='2'].drafted")
    assert "draft" in other_tab.inner_text("li[data-case='2']")
    assert "Case 2 has a draft you have not submitted" in other_tab.inner_text("[data-final-note]")
    other_tab.close()

    end_session(page)
    page.reload()
    page.wait_for_selector("input[name=username]")
    page.fill("input[name=username]", "resident")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    wait_shown(page, 2, 4)
    assert checked(page) == "D" and page.input_value("textarea[name=comment]") == "left apex?"
    assert not Answer.objects.filter(reader=reader).exists()


def test_failed_save_alerts_keeps_the_choice_and_saves_once_the_network_is_back(
    page, live_server, reading
):
    study, reader = reading
    open_case(page, live_server, study, 1)

    network = {"down": True}

    def post(route):
        if network["down"]:
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route(ANSWER_POST, post)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    alert = page.locator("#save-alert[role=alert]")
    alert.wait_for(state="visible")
    text = alert.inner_text()
    assert "Case 1 is not saved yet" in text and "C." in text
    assert "could not be reached" in text or "offline" in text
    assert "Retry now" in text
    assert answer_of(reader, study, 1) is None

    page.click("#save-alert [data-action=show-failed]")
    wait_shown(page, 1, 4)
    assert checked(page) == "C"  # the choice is still on screen

    # Retry sends at once: click it while the automatic retry is still seconds away.
    alert.filter(has_text=re.compile(r"again in ([4-9]|[1-3]\d) s")).wait_for(timeout=20000)
    network["down"] = False
    page.click("#save-alert [data-action=retry]")
    alert.wait_for(state="hidden")
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    assert answer_of(reader, study, 1).choice == "C"


def test_answers_made_offline_are_sent_in_order_when_the_connection_returns(
    page, live_server, reading
):
    study, reader = reading
    open_case(page, live_server, study, 1)
    wait_until(
        page,
        "() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('/read/2/'))",
    )  # case 2 is prefetched
    page.context.set_offline(True)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)  # shown at once, from the prefetch
    page.keyboard.press("4")
    page.keyboard.press("Enter")  # case 3 was not prefetched (offline): case 2 stays, held
    page.wait_for_selector("#save-alert:has-text('cases 1 and 2 are kept in this browser')")
    assert checked(page) == "D"
    assert not Answer.objects.filter(reader=reader).exists()
    page.context.set_offline(False)
    page.wait_for_selector("#save-status:has-text('Saved — case 2')", timeout=15000)
    wait_shown(page, 3, 4)  # and reading carries on where it stopped
    first, second = answer_of(reader, study, 1), answer_of(reader, study, 2)
    assert (first.choice, second.choice) == ("B", "D")
    assert first.created_at <= second.created_at


def test_sign_out_asks_before_deleting_answers_not_yet_sent(page, live_server, reading):
    """Sign-out clears the site's storage: an answer still in the outbox would go with it."""
    study, reader = reading
    open_case(page, live_server, study, 1)
    page.context.set_offline(True)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    wait_until(page, "() => ReaderStore.unsentCount(null, document.body.dataset.user) === 1")
    questions: list[str] = []

    def cancel(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", cancel)
    page.click("form[data-signout] button")
    assert "1 answer you submitted has not reached the server yet" in questions[0]
    assert "/read/" in page.url  # still reading
    page.context.set_offline(False)  # the reader stayed: the answer goes
    page.wait_for_selector("#save-status:has-text('Saved — case 1')", timeout=15000)
    assert answer_of(reader, study, 1).choice == "C"
    page.click("form[data-signout] button")  # nothing left to send: no question
    page.wait_for_url("**/accounts/login/**")
    assert len(questions) == 1


def test_ended_session_asks_to_sign_in_on_the_page_then_saves_the_answer(
    page, live_server, reading
):
    study, reader = reading
    open_case(page, live_server, study, 1)
    page.keyboard.press("b")
    end_session(page)
    page.keyboard.press("Enter")
    dialog = page.locator("#signin")
    dialog.wait_for(state="visible")
    assert "Your session has ended" in dialog.inner_text()
    assert page.url.endswith(reverse("reader-case", args=[study.slug, 2]))  # still reading
    assert answer_of(reader, study, 1) is None
    page.fill("#signin input[name=password]", "wrong password")
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#signin .signin-error:not([hidden])")
    page.fill("#signin input[name=password]", PASSWORD)
    page.click("#signin button[type=submit]")
    dialog.wait_for(state="hidden")
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    assert answer_of(reader, study, 1).choice == "B"
    wait_for_image(page)  # the case's images show again after signing in


def test_enter_shows_the_next_case_before_the_save_returns(page, live_server, reading):
    study, reader = reading
    open_case(page, live_server, study, 1)
    held = []
    page.route(ANSWER_POST, lambda route: held.append(route))
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)  # the save is still held: nothing waited for it
    assert len(held) == 1 and answer_of(reader, study, 1) is None
    held[0].continue_()
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    assert answer_of(reader, study, 1).choice == "A"
    page.unroute(ANSWER_POST)


def test_keys_pressed_while_the_next_case_is_on_its_way_never_change_the_submitted_one(
    page, live_server, reading
):
    """Enter before the next case was prefetched (a slow connection): the submitted case
    stays on screen until the next one arrives, and a quick "3" + Enter meant for the next
    case must not revise the one just submitted."""
    study, reader = reading
    held = []

    def hold_case_2(route):
        if route.request.headers.get("hx-request"):
            held.append(route)  # the prefetch (and the fetch after Enter) of case 2 waits
        else:
            route.continue_()

    page.route("**/read/2/", hold_case_2)
    open_case(page, live_server, study, 1)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    assert "Case 1 of 4" in page.inner_text(".case-counter")  # case 2 is still on its way
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    assert checked(page) == "B"
    page.locator("#keys-paused").filter(has_text="case 2 is opening").wait_for()
    page.click("#answer-form label.option:nth-of-type(4)", force=True)  # nor a click
    assert checked(page) == "B"

    assert held, "case 2 was not asked for"
    for route in held:
        route.continue_()
    wait_shown(page, 2, 4)
    assert checked(page) is None
    page.wait_for_timeout(300)  # any second save of case 1 would have been sent by now
    assert answer_of(reader, study, 1).choice == "B"
    assert page.evaluate("Object.keys(localStorage).filter((k) => k.includes('.draft.'))") == []
    page.unroute("**/read/2/")


@pytest.mark.engine
def test_a_case_fetched_after_another_reader_signed_in_here_is_never_shown(
    page, live_server, reading
):
    """A shared computer: while the resident reads, a colleague signs in in another tab. The
    resident's page, which fetches the next cases by itself, must not show the colleague's
    cases, answers or progress as the resident's; it asks the resident to sign in again."""
    study, reader = reading
    colleague = reader_of(study, "colleague")
    for item_id in ordered_item_ids(study, colleague):
        answer_submit(reader=colleague, item=StudyQuestion.objects.get(id=item_id), choice="D")
    open_case(page, live_server, study, 1)
    page.wait_for_selector("#workspace[data-next-ready]")  # case 2 is prefetched

    other_tab = page.context.new_page()
    other_tab.goto(live_server.url + "/")
    other_tab.click("text=Sign out")
    sign_in_with_form(other_tab, live_server, "colleague")  # as the colleague would
    other_tab.close()

    page.keyboard.press("2")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)  # the resident's own case 2, prefetched before
    page.locator("#signin").wait_for(state="visible")  # the next prefetch found the colleague
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")  # Next: the server would answer with the colleague's case 3
    page.wait_for_timeout(500)
    assert page.evaluate("document.getElementById('workspace').dataset.reader") == str(reader.pk)
    assert "Case 2 of 4" in page.inner_text(".case-counter")
    assert checked(page) is None  # never the colleague's "D"
    assert "4 / 4 answered" not in page.inner_text("#progress")


def test_images_that_failed_to_load_ahead_are_loaded_again_when_the_case_is_shown(
    page, live_server, reading
):
    """The connection drops while the next case's images are fetched ahead, and is back when
    the reader presses Enter: the case shows its full-depth image at its own window, not the
    8-bit fallback (W 255 · L 128) or a black view kept from the failed attempt."""
    study, reader = reading
    item = StudyQuestion.objects.get(id=ordered_item_ids(study, reader)[1])
    derived = derived_once(
        Path(get_testdata_file("RG3_UNCR.dcm")), max_size=1024
    )  # case 2 has an image of its own (case 1's would come from the cache)
    item.question.case.images.update(**derived.image_fields())
    case_2_files = (derived.display, derived.depth)
    network = {"down": True}

    def images(route):
        if network["down"] and any(route.request.url.endswith(f) for f in case_2_files):
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route("**/img/**", images)
    open_case(page, live_server, study, 1)
    page.wait_for_selector("#workspace[data-next-ready]")  # case 2 prepared, images failed
    network["down"] = False
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)
    wait_for_image(page)
    shown = page.evaluate("ReaderViewer.current.views[0].info.src")
    assert shown.endswith(derived.depth), shown
    assert not page.inner_text(".wl-readout").startswith("W 255 · L 128")
    page.unroute("**/img/**")


def test_back_shows_the_saved_answer_and_the_real_progress(page, live_server, reading):
    study, _ = reading
    open_case(page, live_server, study, 1)
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)
    page.wait_for_selector("#save-status:has-text('Saved — case 1')")
    page.go_back()
    wait_shown(page, 1, 4)
    assert checked(page) == "B"
    assert "Save change" in page.inner_text("button.submit")
    assert "1 / 4 answered" in page.inner_text("#progress")
    page.go_forward()
    wait_shown(page, 2, 4)
    assert checked(page) is None


def test_last_case_goes_to_the_review_once_saved(page, live_server):
    study = study_with_radiographs(2)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    open_case(page, live_server, study, 1)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 2)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('reader-review', args=[study.slug])}")
    page.wait_for_selector("text=All 2 cases are answered")
    assert Answer.objects.filter(reader=reader).count() == 2


def test_full_screen_keeps_the_question_or_pauses_the_answer_keys(page, live_server, reading):
    study, reader = reading
    open_case(page, live_server, study, 1)
    page.keyboard.press("f")
    page.wait_for_selector(":fullscreen")
    assert page.evaluate(
        "document.fullscreenElement.contains(document.getElementById('answer-form'))"
    )
    page.keyboard.press("3")
    assert checked(page) == "C" and page.locator("legend.question").is_visible()
    page.evaluate("document.exitFullscreen()")
    page.wait_for_selector(":fullscreen", state="detached")
    # Whatever makes only the images full screen, the hidden question cannot be changed.
    page.evaluate("document.querySelector('.viewer').requestFullscreen()")
    page.wait_for_selector(":fullscreen")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    assert checked(page) == "C"
    assert page.locator("#keys-paused").is_visible()
    assert "paused" in page.inner_text("#keys-paused")
    assert answer_of(reader, study, 1) is None
    page.evaluate("document.exitFullscreen()")
    page.wait_for_selector(":fullscreen", state="detached")
    page.click('.viewer [data-action="fullscreen"]')  # the viewer's button is the same as f
    page.wait_for_selector(":fullscreen")
    assert page.evaluate(
        "document.fullscreenElement.contains(document.getElementById('answer-form'))"
    )


@pytest.mark.parametrize("size", [(1280, 720), (1000, 700)])
def test_small_screens_keep_a_usable_image_and_the_panel_folds_away(
    page, live_server, reading, artifacts, size
):
    study, _ = reading
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_case(page, live_server, study, 1)
    page.screenshot(path=str(artifacts / f"case-{size[0]}x{size[1]}.png"))
    view = page.locator(".view").first.bounding_box()
    assert view["width"] >= 0.55 * size[0] and view["height"] >= 0.8 * size[1]
    assert page.locator("button.submit").is_visible()
    page.keyboard.press("q")
    page.wait_for_timeout(100)
    wider = page.locator(".view").first.bounding_box()
    assert wider["width"] >= 0.8 * size[0]
    page.keyboard.press("2")  # the question is hidden: keys are paused, the strip says so
    assert checked(page) is None and "paused" in page.inner_text(".panel-strip")
    page.keyboard.press("q")
    page.keyboard.press("2")
    assert checked(page) == "B"


def test_instructions_open_from_the_menu_without_leaving_the_case(page, live_server, reading):
    study, _ = reading
    study.instructions = "Answer as you would report in clinic."
    study.save()
    page.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    assert "Answer as you would report in clinic." in page.inner_text("main")
    press_on_autofocus(page)  # "Begin with case 1"
    wait_shown(page, 1, 4)
    page.keyboard.press("2")
    page.click(".reading-menu >> text=Instructions")
    page.wait_for_selector("#instructions:not([hidden])")
    assert "Answer as you would report in clinic." in page.inner_text("#instructions")
    page.keyboard.press("Escape")
    assert page.locator("#instructions").is_hidden() and checked(page) == "B"


def test_without_javascript_the_page_says_why_and_still_saves(new_context, live_server):
    study = study_with_radiographs(2)
    reader = reader_of(study)
    page = new_context(java_script_enabled=False).new_page()
    sign_in_without_js(page, live_server)
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    assert "That is why this area is black" in page.inner_text(".noscript-viewer")
    assert "JavaScript is off" in page.inner_text(".noscript-banner")
    page.check("input[name=choice][value=D]")
    page.click("button.submit")
    page.wait_for_url(f"**{reverse('reader-case', args=[study.slug, 2])}")
    assert answer_of(reader, study, 1).choice == "D"


def sign_in_without_js(page, live_server) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "resident")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_error_page_is_dark_and_leads_back(page, live_server, reading, artifacts):
    page.goto(live_server.url + "/s/no-such-study/read/1/")
    page.screenshot(path=str(artifacts / "error-404.png"))
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(14, 17, 22)"  # the reading room's dark background
    assert "Not found" in page.inner_text("h1")
    page.click(".error-links a:has-text('Your studies')")
    page.wait_for_url(f"{live_server.url}/")


@pytest.mark.engine
def test_a_case_answered_in_another_tab_is_never_written_over_without_a_word(
    page, live_server, reading, artifacts
):
    """The page shows case 1 blank; meanwhile another tab saves C. B sent from this page is
    refused in words, kept as a draft, and saved only when sent again from a page showing C."""
    study, reader = reading
    open_case(page, live_server, study, 1)
    item = StudyQuestion.objects.get(pk=ordered_item_ids(study, reader)[0])
    answer_submit(reader=reader, item=item, choice="C")  # the other tab

    page.keyboard.press("2")
    page.keyboard.press("Enter")
    wait_shown(page, 2, 4)
    alert = page.wait_for_selector("#save-alert:has-text('answered elsewhere')")
    assert "the saved answer is C" in alert.inner_text()
    assert not page.locator("#save-alert [data-action=retry]").is_visible()  # no Retry
    # Docked in the question panel: never over the image or the viewer's toolbar.
    assert page.locator("#question-panel #save-alert").count() == 1
    box, viewer = alert.bounding_box(), page.locator(".viewer").bounding_box()
    assert box["x"] >= viewer["x"] + viewer["width"]
    assert answer_of(reader, study, 1).choice == "C"  # nothing written over

    page.click("#save-alert [data-action=show-failed]")  # the server's C beside this page's B
    wait_shown(page, 1, 4)
    note = page.locator("#answer-form .draft-note")
    assert "Saved: C · your draft: B" in note.inner_text()
    assert note.locator("text=Keep saved").is_visible()
    assert not page.locator("#save-alert").is_visible()  # the case itself says it now
    assert checked(page) == "B"
    page.screenshot(path=str(artifacts / "reader-conflict.png"))

    open_case(page, live_server, study, 1)  # after a reload too
    assert checked(page) == "B"
    assert "Saved: C · your draft: B" in note.inner_text()
    page.click("text=Save my change")
    wait_shown(page, 2, 4)
    page.wait_for_selector("#save-alert:not([hidden])", state="detached")
    answer = answer_of(reader, study, 1)
    assert answer.choice == "B" and answer.revisions_count == 1  # a revision, on purpose


def test_drafts_are_gone_after_sign_out_and_a_colleague_signing_in_finds_none(
    page, live_server, reading
):
    """Issue 25, finding 11: the next person at a shared workstation read drafts in devtools."""
    study, _ = reading
    open_case(page, live_server, study, 2)
    page.keyboard.press("c")
    page.fill("textarea[name=comment]", "private thought")
    keys = "() => Object.keys(localStorage).filter((k) => k.startsWith('readerstudy.v1'))"
    wait_until(page, f"() => ({keys})().length > 0")
    page.goto(live_server.url + "/")
    page.click("text=Sign out")
    page.wait_for_selector("input[name=username]")
    assert page.evaluate(keys) == []
    reader_of(study, "colleague")
    sign_in(page, live_server, "colleague")
    open_case(page, live_server, study, 2)
    assert page.evaluate(keys) == [] or all(".colleague" not in k for k in page.evaluate(keys))
    assert "private thought" not in page.evaluate("JSON.stringify(localStorage)")


def test_a_locked_case_marks_the_readers_own_ratings_on_screen(page, live_server, reading):
    """Disabled radios look alike checked or not: the chosen rating's label is marked."""
    study, reader = reading
    items = ordered_item_ids(study, reader)
    item = study.items.get(pk=items[0])
    answer_submit(reader=reader, item=item, choice="A", difficulty="hard", alignment="no")
    reader_finish(reader=reader, study=study)
    open_case(page, live_server, study, 1)
    weight = (
        "(v) => getComputedStyle(document.querySelector("
        "`fieldset.rating input[value=${v}]`).closest('label')).fontWeight"
    )
    assert page.evaluate(weight, "hard") == "600"
    assert page.evaluate(weight, "easy") == "400"
    assert page.evaluate(weight, "no") == "600"


def test_a_case_fetched_after_the_design_changed_never_shows_a_draft_made_under_the_old_one(
    page, live_server, reading
):
    """A PI changes the design (Design page) while a reader has the study open: a case the
    page then fetches is of the new design, and a draft made under the old one (another X-ray
    or option now) is neither shown on it nor submitted with it."""
    from readerstudy.design.rules import Design
    from readerstudy.design.services import study_design_set

    study, reader = reading
    open_case(page, live_server, study, 3)
    page.keyboard.press("2")  # B under the old design: a draft
    page.keyboard.press("ArrowLeft")
    wait_shown(page, 2, 4)
    page.keyboard.press("ArrowLeft")
    wait_shown(page, 1, 4)
    old = page.get_attribute("#workspace", "data-layout")
    study_design_set(study=study, design=Design(arms="unaided", shuffle_options=True))
    page.keyboard.press("ArrowRight")
    wait_shown(page, 2, 4)
    page.keyboard.press("ArrowRight")  # case 3 fetched now: made under the new design
    wait_shown(page, 3, 4)
    assert page.get_attribute("#workspace", "data-layout") != old
    assert checked(page) is None
    assert "Draft" not in page.inner_text("#workspace")
    assert not Answer.objects.filter(reader=reader).exists()
