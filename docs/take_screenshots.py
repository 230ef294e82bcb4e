"""Screenshots for the README, taken from a running `make demo` (Debian's Chromium).

Run: .venv/bin/python docs/take_screenshots.py PASSWORD [BASE_URL [PREDICTIONS.csv]] [--only reader]
(the upload preview needs a predictions file for the demo's questions; it is not confirmed;
--only reader: the reader's case page alone, leaving the other screenshots as they are.)
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parent / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def sign_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


LAPTOP = {"width": 1280, "height": 720}  # the expert pages must work on this screen


def shoot(
    browser,
    base: str,
    password: str,
    username: str,
    shots: list[tuple[str, str]],
    viewport: dict | None = None,
):
    context = browser.new_context(viewport=viewport or {"width": 1440, "height": 900})
    page = context.new_page()
    sign_in(page, base, username, password)
    for path, name in shots:
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(400)  # the viewer draws after the images decode
        page.screenshot(path=OUT / f"{name}.png")
    context.close()


def reader_case(browser, base: str, password: str) -> None:
    """reader3, partway through the demo, on their next case: the chest at the window it opens
    at (no preset pressed), the time left at their pace in the top bar, a comment typed by
    keyboard (T)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    sign_in(page, base, "reader3", password)
    page.goto(f"{base}/s/demo/read/")  # Resume: the first case not answered yet
    page.wait_for_selector("#workspace[data-seen]")
    page.wait_for_function(
        "() => { const viewer = window.ReaderViewer.current;"
        " return viewer && viewer.views.every((v) => v.loaded); }"
    )
    page.keyboard.press("2")
    page.keyboard.press("t")
    page.keyboard.type("Round opacities in both lungs")
    page.keyboard.press("Escape")
    page.wait_for_timeout(400)
    page.screenshot(path=OUT / "reader-case.png")
    context.close()


def _expert_at_top_question(browser, base: str, password: str):
    """expert1 on the review page of the queue's first question: (context, page)."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    sign_in(page, base, "expert1", password)
    page.goto(f"{base}/s/demo/expert/")
    page.locator("table a").first.click()
    return context, page


def expert_first_question(browser, base: str, password: str) -> None:
    """The top of the queue: the question with the strongest evidence of a problem."""
    context, page = _expert_at_top_question(browser, base, password)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(400)
    page.screenshot(path=OUT / "expert-review.png")
    context.close()


def expert_evidence(browser, base: str, password: str) -> None:
    """The review page's evidence panel (who chose what), scrolled into view at 1280x720."""
    context, page = _expert_at_top_question(browser, base, password)
    page.locator("#evidence table").wait_for()  # loaded by htmx
    page.locator("#evidence").evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(400)
    page.screenshot(path=OUT / "expert-evidence.png")
    context.close()


def pi_upload_preview(browser, base: str, password: str, csv_path: Path) -> None:
    """The preview of a predictions upload (nothing is written: the preview is not confirmed)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    sign_in(page, base, "pi1", password)
    page.goto(f"{base}/s/demo/analysis/#predictions")
    form = page.locator("#predictions form")
    form.locator("input[name=model]").fill("GPT-demo")
    form.locator("input[name=file]").set_input_files(str(csv_path))
    form.locator("button[type=submit]").click()
    page.locator(".prediction-preview").wait_for()
    page.screenshot(path=OUT / "pi-upload-preview.png", full_page=True)
    context.close()


FIGURES = {
    "accuracy_by_task": "figure-accuracy",
    "kappa_answer": "figure-kappa",
    "reading_time": "figure-reading-time",
}


def figures(browser, base: str, password: str) -> None:
    """The analysis figures as a PI downloads them (PNG, 300 dpi), 1600 px wide."""
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, base, "pi1", password)
    for name, out in FIGURES.items():
        response = context.request.get(f"{base}/s/demo/analysis/figure/{name}.png?download=1")
        image = Image.open(io.BytesIO(response.body()))
        height = round(image.height * 1600 / image.width)
        image.resize((1600, height), Image.Resampling.LANCZOS).save(OUT / f"{out}.png")
    context.close()


def main() -> None:
    args = sys.argv[1:]
    reader_only = "--only" in args and args[args.index("--only") + 1] == "reader"
    if "--only" in args:
        del args[args.index("--only") : args.index("--only") + 2]
    password = args[0]
    base = args[1] if len(args) > 1 else "http://127.0.0.1:8000"
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        reader_case(browser, base, password)
        if reader_only:
            browser.close()
            return
        shoot(browser, base, password, "expert1", [("/s/demo/expert/", "expert-queue")], LAPTOP)
        expert_first_question(browser, base, password)
        expert_evidence(browser, base, password)
        if len(sys.argv) > 3:  # a predictions file (CSV) to preview
            pi_upload_preview(browser, base, password, Path(sys.argv[3]))
        shoot(
            browser,
            base,
            password,
            "pi1",
            [("/s/demo/dashboard/", "pi-dashboard"), ("/s/demo/analysis/", "pi-analysis")],
        )
        figures(browser, base, password)
        browser.close()


if __name__ == "__main__":
    main()
