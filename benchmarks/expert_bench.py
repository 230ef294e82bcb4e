"""Expert review speed in a real browser: Enter ("save and next") -> the next question ready,
beside a full load of a review page.

One run, on the reader benchmark's study (every question its own real radiograph, 1841 x 1955)
served by gunicorn with production settings (DEBUG=0, WhiteNoise) on SQLite in a temporary
directory, driven by Debian's Chromium through Playwright at 1280 x 720:

- full load: navigation to a question's review page not seen before in this browser (static
  files cached, the question's images not), until the question is ready;
- save and next: Enter on a reviewed question (defaults accepted), after the expert has looked at
  it for a moment (the next question, its evidence and its images are fetched meanwhile), until
  the next question is ready.

"Ready" is the same for both: the review page shows the question the server chose, its viewer
has every image loaded (it draws on load) and its evidence panel is in place; the time is taken
at the first animation frame where that holds, from the page's own clock (performance.now; the
key event's timeStamp for Enter; navigation start for a load).

Run: .venv/bin/python benchmarks/expert_bench.py [--questions 10] [--out results.json]
Acceptance (issue 34): save-and-next p50 <= 0.25 of a full load's p50 (median of 10, same run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reader_bench import (  # run as a script: its own folder is on sys.path above
    BASE,
    CHROMIUM,
    PASSWORD,
    prepare,
    server_env,
    sign_in,
    start_server,
    summary,
)

from tools import headless_chromium  # on the path since reader_bench

LOOK_MS = 400  # how long the expert looks at a question before pressing Enter
VIEWPORT = {"width": 1280, "height": 720}

# The page's own test of "ready", run every animation frame from the moment it matters.
READY = """
window.__ready = (item) => {
  const w = document.getElementById('workspace');
  const v = window.ReaderViewer && window.ReaderViewer.current;
  return !!(w && (item === undefined || w.dataset.item !== String(item)) && v
    && v.root.isConnected && v.views.length && v.views.every((x) => x.loaded)
    && document.querySelector('#evidence table.evidence-shares'));
};
document.addEventListener('DOMContentLoaded', () => {
  const loop = () => {
    if (!window.__ready()) { requestAnimationFrame(loop); return; }
    window.__loadedAt = performance.now();
    document.documentElement.dataset.benchLoaded = "1";
  };
  loop();
});
window.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter') return;
  const from = document.getElementById('workspace').dataset.item;
  window.__enterAt = e.timeStamp;
  window.__doneAt = null;
  delete document.documentElement.dataset.benchDone;
  const loop = () => {
    if (!window.__ready(from)) { requestAnimationFrame(loop); return; }
    window.__doneAt = performance.now();
    document.documentElement.dataset.benchDone = "1";
  };
  requestAnimationFrame(loop);
}, true);
"""


def add_experts(names: list[str]) -> list[int]:
    """Experts of the bench study (Django is set up by prepare()); the study's item ids."""
    from django.contrib.auth import get_user_model

    from readerstudy.models import Membership, ReaderStudy, Role

    study = ReaderStudy.objects.get(slug="bench")
    for name in names:
        user = get_user_model().objects.create_user(name, password=PASSWORD)
        Membership.objects.create(study=study, user=user, role=Role.EXPERT)
    return list(study.items.order_by("position").values_list("id", flat=True))


def full_loads(browser, items: list[int]) -> list[float]:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(READY)
    page = context.new_page()
    sign_in(page, "expert_load")
    page.goto(f"{BASE}/s/bench/expert/")  # warms the static files
    times = []
    for item in items:
        page.goto(f"{BASE}/s/bench/expert/{item}/")
        page.wait_for_selector("html[data-bench-loaded]", state="attached")
        times.append(page.evaluate("window.__loadedAt"))
        print(f"  full load of question {item}: {times[-1]:.1f} ms", flush=True)
    context.close()
    return times


def saves_and_next(browser, count: int) -> list[float]:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(READY)
    page = context.new_page()
    sign_in(page, "expert_next")
    page.goto(f"{BASE}/s/bench/expert/next/")
    page.wait_for_selector("html[data-bench-loaded]", state="attached")
    times = []
    for _ in range(count):
        page.wait_for_timeout(LOOK_MS)
        page.wait_for_selector("#workspace[data-next-ready]")
        page.keyboard.press("d")  # defaults: ratings 4, medium
        page.keyboard.press("a")  # accept
        page.keyboard.press("Enter")
        page.wait_for_selector("html[data-bench-done]", state="attached")
        times.append(page.evaluate("window.__doneAt - window.__enterAt"))
        print(f"  save and next: {times[-1]:.1f} ms", flush=True)
    context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=10, help="questions per measurement")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if not 2 <= args.questions <= 100:
        parser.error("--questions must be between 2 and 100")

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="expert-bench-"))
    env = server_env(work)
    server = None
    n = args.questions
    try:
        print(f"Preparing a {2 * n + 2}-question study with its own radiographs ...", flush=True)
        prepare(env, work, 2 * n + 2, [])
        items = add_experts(["expert_load", "expert_next"])
        server = start_server(env, work / "gunicorn.log")
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=headless_chromium.launch_args(),
            )
            # The loads open the last questions: the ones save-and-next reaches are new to
            # its browser too (another context: its own cache).
            load = full_loads(browser, items[-n:])
            advance = saves_and_next(browser, n)
            browser.close()
    finally:
        if server and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)

    result = {
        "full_review_page_load": summary(load),
        "save_and_next": summary(advance),
        "ratio_p50": round(statistics.median(advance) / statistics.median(load), 3),
        "conditions": {
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
            "server": "gunicorn 2 workers x 4 threads, DEBUG=0, SQLite",
            "browser": "Chromium (Debian) headless, 1280x720, GPU off",
            "look_ms_before_enter": LOOK_MS,
        },
    }
    print(json.dumps(result, indent=2))
    ok = result["ratio_p50"] <= 0.25
    print(
        f"save and next p50 {result['save_and_next']['p50_ms']} ms; full load p50 "
        f"{result['full_review_page_load']['p50_ms']} ms; ratio {result['ratio_p50']} "
        f"({'meets' if ok else 'misses'} <= 0.25)"
    )
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
