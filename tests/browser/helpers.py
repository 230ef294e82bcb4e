"""Shared set-up for browser tests: a study whose images are real derived radiographs."""

from pathlib import Path

from django.conf import settings
from pydicom.data import get_testdata_file

from readerstudy.imaging import derive_display_image
from readerstudy.models import Image, Role
from tests.factories import PASSWORD, MembershipFactory, UserFactory, build_study


def study_with_radiographs(n_questions: int = 6, **kwargs):
    study = build_study(n_questions, **kwargs)
    derived = derive_display_image(
        Path(get_testdata_file("RG1_UNCR.dcm")), Path(settings.MEDIA_ROOT), max_size=1024
    )
    Image.objects.filter(case__dataset=study.dataset).update(**derived.image_fields())
    return study


def reader_of(study, username: str = "resident"):
    user = UserFactory(username=username)
    MembershipFactory(study=study, user=user, role=Role.READER)
    return user


def sign_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    # Type only once autofocus has landed: on a busy machine keys pressed earlier go nowhere.
    page.wait_for_function("document.activeElement && document.activeElement.name === 'username'")
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


def wait_for_image(page) -> None:
    page.wait_for_function(
        """() => { const v = window.ReaderViewer && window.ReaderViewer.current
                           && window.ReaderViewer.current.views[0];
                   if (!v || !v.loaded) return false;
                   return v.readPixel(v.canvas.width / 2, v.canvas.height / 2) > 0; }"""
    )


def end_session(page) -> None:
    """The session ends (timeout, sign-out in another tab): its cookies go, while the browser
    still remembers who signed in last here (readerstudy.browser_storage), so the same person
    signing in again keeps their drafts."""
    kept = [c for c in page.context.cookies() if c["name"] == "rs_last_user"]
    page.context.clear_cookies()
    if kept:
        page.context.add_cookies(kept)
