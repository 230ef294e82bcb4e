"""Screenshots for the README and docs/, taken from a running `make demo` (Debian's Chromium).

Run: .venv/bin/python docs/take_screenshots.py PASSWORD [BASE_URL] [--predictions FILE.csv]
     [--only NAME ...]   (--help lists the names)
The upload preview needs a predictions file for the demo's questions; it is not confirmed.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script
from tools import headless_chromium

OUT = Path(__file__).resolve().parent / "screenshots"
ARGS = headless_chromium.launch_args()


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
    # Every view's image loaded: polled with evaluate, as wait_for_function evals its predicate,
    # which the page's CSP (no 'unsafe-eval') refuses on every poll but the first.
    loaded = (
        "() => { const v = window.ReaderViewer.current;"
        " return v && v.views.every((x) => x.loaded); }"
    )
    for _ in range(600):
        if page.evaluate(loaded):
            break
        page.wait_for_timeout(50)
    else:
        raise AssertionError("the case's images did not load in 30 s")
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


SHOTS = {
    "reader-case": "reader3's next case: the window it opens at, time left, a comment by T",
    "expert-queue": "the expert queue at 1280x720",
    "expert-review": "the review page of the queue's first question",
    "expert-evidence": "that page's evidence panel, scrolled into view",
    "pi-upload-preview": "the preview of a predictions upload (needs --predictions)",
    "pi-dashboard": "the PI dashboard",
    "pi-analysis": "the PI analysis page",
    "figures": "the accuracy, kappa and reading-time figures (PNG downloads)",
    "practice-feedback": "reader5's first case of the demo practice set: right or wrong, key",
    "reader-results": "reader5's results of the demo practice set at 1280x720",
    "progress": "reader5's progress page at 1280x720",
    "programme": "pi1's residents' progress at 1280x720",
}
ALIASES = {"reader": "reader-case"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Take the docs' screenshots (docs/screenshots/) from a running demo.",
        epilog="Screenshots: "
        + "; ".join(f"{name}: {what}" for name, what in SHOTS.items())
        + ". reader-conflict.png is taken by tests/browser/test_conflict_two_tabs.py (two real"
        " tabs on a study with shuffled options): run it and copy artifacts/reader-conflict.png.",
    )
    parser.add_argument("password", help="the demo's password (make demo DEMO_PASSWORD=...)")
    parser.add_argument("base", nargs="?", default="http://127.0.0.1:8000", help="the demo's URL")
    parser.add_argument("legacy_predictions", nargs="?", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--predictions", type=Path, help="a predictions CSV to preview")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=[*SHOTS, *ALIASES],
        help="only these screenshots (default: all; pi-upload-preview only with --predictions)",
    )
    args = parser.parse_args(argv)
    args.predictions = args.predictions or args.legacy_predictions
    if args.only:
        args.only = [ALIASES.get(name, name) for name in args.only]
        if "pi-upload-preview" in args.only and not args.predictions:
            parser.error("pi-upload-preview needs --predictions FILE.csv")
    return args


def main() -> None:
    args = parse_args()
    wanted = set(args.only or SHOTS)
    if not args.predictions:
        wanted.discard("pi-upload-preview")
    base, password = args.base, args.password
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=headless_chromium.PATH, args=ARGS)
        if "reader-case" in wanted:
            reader_case(browser, base, password)
        if "expert-queue" in wanted:
            queue = [("/s/demo/expert/", "expert-queue")]
            shoot(browser, base, password, "expert1", queue, LAPTOP)
        if "expert-review" in wanted:
            expert_first_question(browser, base, password)
        if "expert-evidence" in wanted:
            expert_evidence(browser, base, password)
        if "pi-upload-preview" in wanted:
            pi_upload_preview(browser, base, password, args.predictions)
        pages = [("/s/demo/dashboard/", "pi-dashboard"), ("/s/demo/analysis/", "pi-analysis")]
        pages = [(path, name) for path, name in pages if name in wanted]
        if pages:
            shoot(browser, base, password, "pi1", pages)
        if "figures" in wanted:
            figures(browser, base, password)
        # What readers get back, on pages that change nothing (reader5's practice sitting).
        learning = [
            ("/s/demo-practice/read/1/", "practice-feedback"),
            ("/s/demo-practice/results/", "reader-results"),
            ("/progress/", "progress"),
        ]
        learning = [(path, name) for path, name in learning if name in wanted]
        if learning:
            shoot(browser, base, password, "reader5", learning, LAPTOP)
        if "programme" in wanted:
            shoot(browser, base, password, "pi1", [("/progress/residents/", "programme")], LAPTOP)
        browser.close()


if __name__ == "__main__":
    main()
