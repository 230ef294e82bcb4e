"""Reading speed in a real browser: Enter -> next case drawn, beside a fresh case-page load.

One run, on a study whose every case has its own real radiograph (1841 x 1955 display PNG,
about 1.5 MB), served by gunicorn with production settings (DEBUG=0, WhiteNoise) on SQLite in a
temporary directory, driven by Debian's Chromium through Playwright:

- fresh load: navigation to a case page not seen before in this browser (static files cached,
  the case's images not), until its images are drawn;
- advance: Enter on a case after the reader has looked at it for a moment (the next case and
  its images are prefetched meanwhile), until the next case's images are drawn.

"Drawn" is the page's own signal: reader.js sets `data-drawn` on the case at the first animation
frame after the viewer reports its images loaded (it draws them on load), i.e. when the frame
showing them begins. The moment the viewer's canvas holds the image ("canvas drawn") is reported
beside it, and so is the start of the animation frame after the drawn one (the drawn frame
has been rendered and composited by then: an upper bound on when the image is on screen). Times
come from the page's clock (performance.now and the key event's timeStamp), not from the driver.

Run: .venv/bin/python benchmarks/reader_bench.py [--cases 15] [--out results.json]
Acceptance (issue 11): advance p50 <= 50 ms and advance / fresh load <= 0.25.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script
from tools import headless_chromium

ROOT = Path(__file__).resolve().parents[1]
PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
PASSWORD = "reader-bench-pass-1"
CHROMIUM = headless_chromium.PATH
LOOK_MS = 400  # how long the "reader" looks at a case before pressing Enter


def server_env(work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "reader-bench-" + "x7Kp3" * 10,
        "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
        "MEDIA_ROOT": str(work / "media"),
        "STATIC_ROOT": str(work / "static"),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "AXES_ENABLED": "0",
    }


def write_study_file(folder: Path, n_cases: int, bits: int = 16) -> Path:
    """A ReXVQA-shaped file: one question per case, each case its own real radiograph.

    Each case's image is the pydicom sample PA chest (RG1_UNCR, 1841 x 1955) shifted and
    brightened by a case-specific amount, so every display image has its own content hash and
    URL: the browser cache cannot stand in for the prefetch.
    """
    import numpy as np
    import pydicom
    from PIL import Image
    from pydicom.data import get_testdata_file

    from readerstudy.rexvqa_synthetic import instance_path, record, write_file

    stored = pydicom.dcmread(get_testdata_file("RG1_UNCR.dcm")).pixel_array.astype(np.int64)
    base = (stored.max() - stored) * (60000 // max(1, int(stored.max())))
    records = {}
    for c in range(n_cases):
        rel = instance_path(
            patient=f"p{c:04d}",
            accession=f"a{c:04d}",
            study_uid=f"1.7.{c}",
            series_uid=f"1.6.{c}",
            instance="0.png",
        )
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        variant = np.roll(base, 23 * c, axis=1) + 97 * c
        if bits == 16:  # as ReXVQA's deid_png files: the viewer windows them at full depth
            Image.fromarray(np.clip(variant, 0, 65535).astype(np.uint16)).save(target)
        else:
            Image.fromarray((np.clip(variant, 0, 65535) >> 8).astype(np.uint8)).save(target)
        records[f"bench-{c:04d}"] = record(
            question=f"Where are the masses most numerous? (case {c})",
            options=["Lower zones", "Upper zones", "Hila", "No masses"],
            correct="A",
            task="Location and Distribution Assessment",
            study_id=f"bench-study-{c:04d}",
            images=[rel],
            views=["PA"],
            modality=None,
            correct_answer_explanation="Benchmark explanation.",
            category="Lung",
            subcategory="Mass",
            StudyInstanceUid=f"1.7.{c}",
            PatientAge="058Y",
            PatientSex="F",
            Indication="Shortness of breath.",
            Findings="Benchmark findings.",
            Impression="Benchmark impression.",
            **{"class": "distribution"},
        )
    return write_file(folder, records, name="bench")


def prepare(
    env: dict[str, str], work: Path, n_cases: int, readers: list[str], bits: int = 16
) -> None:
    """Database, static files, the study and its readers, in this process (Django set up on
    the benchmark's settings), through the commands a PI uses."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    quiet = {"verbosity": 0, "stdout": io.StringIO()}
    call_command("migrate", "--noinput", **quiet)
    call_command("collectstatic", "--noinput", **quiet)
    path = write_study_file(work / "rexvqa", n_cases, bits)
    call_command("import_rexvqa", str(path), "--dataset", "Reader bench", **quiet)
    for name in readers:
        get_user_model().objects.create_user(name, password=PASSWORD)
    call_command(
        "create_study",
        "bench",
        "--dataset",
        "Reader bench",
        "--sample",
        str(n_cases),
        "--one-per-case",
        "--readers",
        ",".join(readers),
        **quiet,
    )


def start_server(env: dict[str, str], log: Path) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "readerstudy.config.wsgi",
        f"--bind=127.0.0.1:{PORT}",
        "--workers=2",
        "--threads=4",
        "--timeout=60",
    ]
    with log.open("a") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{BASE}/healthz", timeout=5).status_code == 200:
                return process
        except requests.RequestException:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGTERM)
    raise RuntimeError(f"gunicorn did not come up; see {log}")


def sign_in(page, username: str) -> None:
    page.goto(f"{BASE}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{BASE}/")


# Waits are selectors: page.wait_for_function evals its predicate, which the page's CSP (no
# 'unsafe-eval') refuses on every poll but the first.
def drawn(n: int) -> str:
    """Case n's images are drawn (reader-cases.js sets data-drawn)."""
    return f"#workspace[data-case-number='{n}'][data-drawn]"


# The frame that begins at data-drawn still has to be rendered and composited (with software
# GL, a WebGL canvas is read back for the software compositor then): the next animation frame
# begins once it is done, so its start bounds when the image was really on screen.
NEXT_FRAME_INIT = """document.addEventListener('reader:drawn', (e) => {
  const n = e.target.dataset.caseNumber;
  requestAnimationFrame(() => {
    window.__frameDone = { n, at: performance.now() };
    document.documentElement.dataset.frameDone = n;
  });
}, true);"""


def frame_done(n: int) -> str:
    """The frame after case n's images were drawn has begun (NEXT_FRAME_INIT)."""
    return f"html[data-frame-done='{n}']"


def fresh_loads(browser, cases: int, query: str = "") -> tuple[list[float], list[float]]:
    """Navigation start -> images drawn (and -> the frame after), each case new to this
    browser's image cache."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script(NEXT_FRAME_INIT)
    page = context.new_page()
    sign_in(page, "bench_load")
    page.goto(f"{BASE}/s/bench/read/instructions/")  # warms the static files, as mid-study
    times, done = [], []
    for number in range(1, cases + 1):
        page.goto(f"{BASE}/s/bench/read/{number}/{query}")
        page.wait_for_selector(drawn(number), state="attached")
        times.append(page.evaluate("Number(document.getElementById('workspace').dataset.drawn)"))
        page.wait_for_selector(frame_done(number), state="attached")
        done.append(page.evaluate("window.__frameDone.at"))
    context.close()
    return times, done


def advances(browser, cases: int, query: str = "") -> tuple[list[float], list[float], list[float]]:
    """Enter (the key event's own time) -> the next case's images drawn."""
    from readerstudy.vocabulary import LETTERS

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script(NEXT_FRAME_INIT)
    page = context.new_page()
    sign_in(page, "bench_advance")
    page.goto(f"{BASE}/s/bench/read/1/{query}")
    page.wait_for_selector(drawn(1), state="attached")
    page.evaluate(
        """() => window.addEventListener('keydown', (e) => {
             if (e.key === 'Enter') window.__enterAt = e.timeStamp; }, true)"""
    )
    times, canvas, done = [], [], []
    for number in range(1, cases + 1):
        # The reader looks at the case (seconds, in real reading); meanwhile the next case and
        # its images are prefetched and decoded (reader.js marks data-next-ready).
        page.wait_for_timeout(LOOK_MS)
        page.wait_for_selector("#workspace[data-next-ready]")
        page.keyboard.press(LETTERS[number % len(LETTERS)])
        page.keyboard.press("Enter")
        page.wait_for_selector(drawn(number + 1), state="attached")
        times.append(
            page.evaluate(
                "Number(document.getElementById('workspace').dataset.drawn) - window.__enterAt"
            )
        )
        steps = page.evaluate(
            """() => { const m = (n) => performance.getEntriesByName(n).at(-1).startTime;
                       return [m('reader:shown') - window.__enterAt,
                               m('reader:viewer-loaded') - window.__enterAt,
                               m('reader:drawn') - window.__enterAt]; }"""
        )
        canvas.append(steps[1])
        page.wait_for_selector(frame_done(number + 1), state="attached")
        done.append(page.evaluate("window.__frameDone.at - window.__enterAt"))
        print(
            f"  case {number}: swapped in {steps[0]:.1f} ms, canvas drawn {steps[1]:.1f} ms, "
            f"frame {steps[2]:.1f} ms, next frame {done[-1]:.1f} ms",
            flush=True,
        )
        page.wait_for_selector(f"#save-status:has-text('Saved — case {number}')")
    context.close()
    return times, canvas, done


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p90_ms": round(ordered[max(0, int(0.9 * len(ordered)) - 1)], 1),
        "min_ms": round(ordered[0], 1),
        "max_ms": round(ordered[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=15, help="cases per measurement")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument(
        "--viewer",
        choices=["auto", "canvas"],
        default="auto",
        help="the viewer's renderer: auto (WebGL2 where available) or its 2-D canvas",
    )
    parser.add_argument(
        "--bits", type=int, choices=[8, 16], default=16, help="source PNG depth (16: ReXVQA's)"
    )
    args = parser.parse_args()
    if not 2 <= args.cases <= 200:
        parser.error("--cases must be between 2 and 200")

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="reader-bench-"))
    env = server_env(work)
    server = None
    try:
        print(f"Preparing a {args.cases + 1}-case study with its own radiographs ...", flush=True)
        prepare(env, work, args.cases + 1, ["bench_load", "bench_advance"], args.bits)
        server = start_server(env, work / "gunicorn.log")
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=headless_chromium.launch_args(),
            )
            query = f"?viewer={args.viewer}" if args.viewer != "auto" else ""
            load, load_done = fresh_loads(browser, args.cases, query)
            advance, canvas, advance_done = advances(browser, args.cases, query)
            browser.close()
    finally:
        if server and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)

    result = {
        "fresh_case_load": summary(load),
        "enter_to_next_drawn": summary(advance),
        "enter_to_next_canvas_drawn": summary(canvas),
        "ratio_p50": round(statistics.median(advance) / statistics.median(load), 3),
        # The same, each until the next animation frame begins (the drawn frame is done).
        "fresh_case_load_next_frame": summary(load_done),
        "enter_to_next_frame": summary(advance_done),
        "ratio_next_frame_p50": round(
            statistics.median(advance_done) / statistics.median(load_done), 3
        ),
        "conditions": {
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
            "server": "gunicorn 2 workers x 4 threads, DEBUG=0, SQLite",
            "browser": "Chromium (Debian) headless, 1440x900, GPU off",
            "look_ms_before_enter": LOOK_MS,
            "source_bits": args.bits,
            "viewer": args.viewer,
        },
    }
    print(json.dumps(result, indent=2))
    ok = result["ratio_p50"] <= 0.25 and result["enter_to_next_drawn"]["p50_ms"] <= 50
    print(
        f"Enter -> next case drawn p50 {result['enter_to_next_drawn']['p50_ms']} ms; "
        f"fresh case load p50 {result['fresh_case_load']['p50_ms']} ms; "
        f"ratio {result['ratio_p50']} ({'meets' if ok else 'misses'} <= 0.25 and <= 50 ms)"
    )
    print(
        f"until the frame after: Enter p50 {result['enter_to_next_frame']['p50_ms']} ms; "
        f"fresh load p50 {result['fresh_case_load_next_frame']['p50_ms']} ms; "
        f"ratio {result['ratio_next_frame_p50']}"
    )
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
