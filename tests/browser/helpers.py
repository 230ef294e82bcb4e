"""Shared set-up for browser tests: a study whose images are real derived radiographs, and a
reader signed in the way the browser would be after the sign-in form."""

from __future__ import annotations

import re
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.signing import get_cookie_signer
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect
from pydicom.data import get_testdata_file

from readerstudy.models import Image, Role
from readerstudy.platform.browser_storage import LAST_USER_COOKIE, LAST_USER_SALT
from tests.factories import PASSWORD, MembershipFactory, UserFactory, build_study
from tests.radiographs import derived_once


def study_with_radiographs(n_questions: int = 6, **kwargs):
    study = build_study(n_questions, **kwargs)
    derived = derived_once(Path(get_testdata_file("RG1_UNCR.dcm")), max_size=1024)
    Image.objects.filter(case__dataset=study.dataset).update(**derived.image_fields())
    return study


def create_crossover(
    page, live_server, demo, *, slug: str, title: str, sample: int, readers
) -> str:
    """A signed-in PI creates a crossover through the study form: unaided / aided by the demo's
    MedGemma, concurrent, washout 0, `sample` questions for `readers`. Return the dashboard's
    design sentence."""
    page.goto(live_server.url + reverse("study-create"))
    page.select_option("select[name=dataset]", str(demo.dataset_id))
    page.fill("input[name=slug]", slug)
    page.fill("input[name=title]", title)
    page.fill("input[name=sample]", str(sample))
    page.fill("[name=readers]", ", ".join(readers))
    page.select_option("select[name=arms]", "unaided,aided")
    page.select_option("select[name=aid_model]", "MedGemma-demo")
    page.select_option("select[name=aid_mode]", "concurrent")
    page.fill("input[name=washout_days]", "0")
    page.click("form button[type=submit]")
    page.wait_for_url(f"**{reverse('pi-dashboard', args=[slug])}")
    return page.inner_text("[data-design]")


def reader_of(study, username: str = "resident"):
    user = UserFactory(username=username)
    MembershipFactory(study=study, user=user, role=Role.READER)
    return user


def sign_in(page, live_server, username: str) -> None:
    """Signed in as `username`, on the home page, by the session cookie the sign-in form would
    have set (a session made by Django's own login(), with the backend the form's
    authentication picks). Typing into the form costs a page load and a POST per test; the form
    itself is driven by `sign_in_with_form` (the demo walk-through) and by the tests that sign
    in again after a session ended."""
    client = Client()
    user = get_user_model().objects.get(username=username)
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    session = client.cookies[settings.SESSION_COOKIE_NAME]
    # ...and the browser's memory of who signed in last, as the form's response sets it
    # (readerstudy.platform.browser_storage): the same person signing in again keeps their drafts.
    last_user = get_cookie_signer(salt=LAST_USER_COOKIE + LAST_USER_SALT).sign(str(user.pk))
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": session.value,
                "url": live_server.url,
                "httpOnly": settings.SESSION_COOKIE_HTTPONLY,
                "secure": settings.SESSION_COOKIE_SECURE,
                "sameSite": settings.SESSION_COOKIE_SAMESITE or "Lax",  # Chromium's default
            },
            {
                "name": LAST_USER_COOKIE,
                "value": last_user,
                "url": live_server.url,
                "httpOnly": True,
                "sameSite": "Lax",
            },
        ]
    )
    page.goto(f"{live_server.url}/")
    if page.url != f"{live_server.url}/":  # sent to the sign-in page: the cookie was refused
        raise AssertionError(f"{username} is not signed in: {page.inner_text('body')}")


def sign_in_with_form(page, live_server, username: str) -> None:
    """Signed in through the sign-in form, typed as a person would."""
    page.goto(f"{live_server.url}/accounts/login/")
    # Type only once autofocus has landed: on a busy machine keys pressed earlier go nowhere.
    expect(page.locator("input[name=username]")).to_be_focused()
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    try:
        page.wait_for_url(f"{live_server.url}/")
    except Exception as exc:  # say what the page said instead of a bare timeout
        raise AssertionError(f"{username} could not sign in: {page.inner_text('body')}") from exc


def canvas_pixels(page, index: int = 0) -> list[int]:
    """Grey values of a 16x16 grid of points over a view's canvas, as shown (WebGL or 2-D)."""
    return page.evaluate(
        """(i) => {
          const view = window.ReaderViewer.current.views[i];
          const c = view.canvas;
          const all = view.readPixels(0, 0, c.width, c.height);
          const out = [];
          for (let y = 1; y <= 16; y++) for (let x = 1; x <= 16; x++) {
            out.push(all[Math.floor(c.height * y / 17) * c.width + Math.floor(c.width * x / 17)]);
          }
          return out;
        }""",
        index,
    )


def wait_until(page, script: str, arg=None, *, timeout: float = 30_000) -> None:
    """Waits until the function `script` (with `arg`) returns something truthy in the page: for
    a state no element shows (pixels read back, the browser's storage, resource timings); what
    an element shows is waited for with a selector or `expect`.

    Not page.wait_for_function: it evaluates its expression with eval() on every poll but the
    first, which the pages' CSP (script-src 'self', no 'unsafe-eval') refuses. page.evaluate
    hands the function to the browser without eval."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(script, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout / 1000:g} s: {script}")
        page.wait_for_timeout(50)


def wait_image_loaded(image, *, timeout: float = 30_000) -> None:
    """An <img> has loaded its picture (an inline <svg> is there already)."""
    if image.evaluate("(el) => el.tagName.toLowerCase()") == "svg":
        return
    expect(image).to_have_js_property("complete", True, timeout=timeout)
    assert image.evaluate("(img) => img.naturalWidth") > 0, image.get_attribute("src")


def finish_on_review(page) -> None:
    """Finish on the review page by keyboard, as a reader does: once the focus is on "I have
    finished" (autofocus) and the final button is enabled (no answer is still being sent),
    Space ticks the box and Enter submits. Pressed before then, the keys are lost."""
    wait_until(
        page,
        """() => { const box = document.activeElement;
                   const button = document.querySelector('[data-final-submit]');
                   return box && box.matches('[data-final-confirm]') && button
                          && !button.disabled; }""",
    )
    page.keyboard.press("Space")
    wait_until(page, "() => document.activeElement.checked === true")
    page.keyboard.press("Enter")


def press_on_autofocus(page, key: str = "Enter") -> None:
    """Press `key` once the page's autofocus element has the focus, as a reader who sees the
    page does. Chromium applies autofocus at the page's first rendering, which on a busy
    machine can come after the load event: a key pressed before then reaches the body and is
    lost (Start on the home page, the instructions' "Begin", "Your results")."""
    expect(page.locator("[autofocus]:visible").first).to_be_focused()
    page.keyboard.press(key)


def open_results_from_done(page) -> None:
    """On the "done" page, Enter opens "Your results" (its link has the autofocus)."""
    expect(page.locator("a[href$='/results/'][autofocus]")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url("**/results/")


def wait_for_image(page) -> None:
    """The viewer's first view shows its image (the centre pixel is not black)."""
    wait_until(
        page,
        """() => { const v = window.ReaderViewer && window.ReaderViewer.current
                           && window.ReaderViewer.current.views[0];
                   if (!v || !v.loaded) return false;
                   return v.readPixel(v.canvas.width / 2, v.canvas.height / 2) > 0; }""",
    )


def wait_seen(page, number: int | None = None) -> None:
    """The case (number `number`, if given) has been on screen for the reading policy's
    minimum dwell, so its answer keys act (reader.js sets data-seen)."""
    which = f"[data-case-number='{number}']" if number is not None else ""
    page.wait_for_selector(f"#workspace{which}[data-seen]")


def end_session(page) -> None:
    """The session ends (timeout, sign-out in another tab): its cookies go, while the browser
    still remembers who signed in last here (readerstudy.platform.browser_storage), so the same
    person signing in again keeps their drafts."""
    kept = [c for c in page.context.cookies() if c["name"] == LAST_USER_COOKIE]
    page.context.clear_cookies()
    if kept:
        page.context.add_cookies(kept)


def contents_reach_every_section(page) -> list[str]:
    """The analysis page's contents list every section of the page, in order, and each link
    brings its section to the top (or the page to its end); returns the sections."""
    nav = page.locator("nav#contents")
    nav.wait_for()
    sections = page.eval_on_selector_all("section[id]", "els => els.map(e => e.id)")
    linked = nav.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href').slice(1))")
    assert linked == sections
    for target in linked:
        page.evaluate("window.scrollTo(0, 0)")
        nav.locator(f'a[href="#{target}"]').click()
        expect(page).to_have_url(re.compile(f"#{re.escape(target)}$"))
        at = page.evaluate(
            """(id) => { const top = document.getElementById(id).getBoundingClientRect().top;
                 const end = scrollY + innerHeight >= document.documentElement.scrollHeight - 2;
                 return {top, end}; }""",
            target,
        )
        assert abs(at["top"]) <= 2 or at["end"], (target, at)
    return linked
