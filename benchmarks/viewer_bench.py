"""Frames per second while dragging window/level in the image viewer, on both renderers.

The real viewer (templates/annotation/_viewer.html + static/js/viewer*.js + app.css) shows the
real RG1 chest CR (1841 x 1955, 15-bit) derived by the real pipeline, full screen in a
1920 x 1080 CSS-pixel window at device scale factor 1 and 2 (3840 x 2160 device pixels), in
headless Debian Chromium. A scripted 2-s drag moves the pointer continuously; a frame is one
viewer redraw (each in requestAnimationFrame, so at most the display rate, 60 Hz).

Paths: `webgl` the default (full-depth texture, window/level in a fragment shader), `canvas` the
fallback without WebGL (full depth, canvas 2D). The former 8-bit canvas path (`?viewer=canvas8`)
was removed from the viewer; its figures stay in docs/benchmarks.md as a past run. Headless Chromium
has no GPU here: WebGL runs on SwiftShader, a software rasteriser, on the same CPU cores as
everything else.

Run: .venv/bin/python benchmarks/viewer_bench.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import http.server
import os
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools import headless_chromium

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("ENV_FILE", os.devnull)

CHROMIUM = headless_chromium.PATH
CHROMIUM_ARGS = headless_chromium.launch_args(headless_chromium.SWIFTSHADER_GL)
VIEWPORT = {"width": 1920, "height": 1080}
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="/static/css/app.css">
<style>.viewer {{ position: fixed; inset: 0; }}</style></head>
<body class="reading"><div id="workspace" class="workspace">{viewer}</div>
<script src="/static/js/viewer-keys.js"></script>
<script src="/static/js/viewer-window.js"></script>
<script src="/static/js/viewer.js"></script>
<script>window.ReaderViewer.init(document.getElementById("workspace"));</script>
</body></html>"""


DRAG = """(duration) => new Promise((resolve) => {
  const viewer = window.ReaderViewer.current, figure = viewer.views[0].figure;
  const r = figure.getBoundingClientRect();
  const x0 = r.left + r.width / 2, y0 = r.top + r.height / 2;
  const fire = (type, x, y) => figure.dispatchEvent(new PointerEvent(type, {
    bubbles: true, clientX: x, clientY: y, button: 0, buttons: 1, pointerId: 1, isPrimary: true,
  }));
  fire("pointerdown", x0, y0);
  const frames0 = viewer.frames;
  let step = 0, start = null, last = null, worst = 0;
  function tick(now) {
    if (start === null) start = now;
    if (last !== null) worst = Math.max(worst, now - last);
    last = now;
    if (now - start >= duration) {
      fire("pointerup", x0, y0);
      resolve({ frames: viewer.frames - frames0, elapsed: now - start, worst });
      return;
    }
    step += 1;
    const offset = (step % 40) - 20;  // back and forth: the window keeps changing
    fire("pointermove", x0 + 3 * offset, y0 + 2 * offset);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})"""


# Cost of one redraw on its own: render, then wait for the pixels (a 1-pixel read-back makes
# WebGL finish its work), median of 15 with a changed window each time.
COST = """() => {
  const v = window.ReaderViewer.current.views[0], times = [];
  for (let i = 0; i < 15; i++) {
    v.state.width *= i % 2 ? 1.01 : 0.99;
    const t0 = performance.now();
    v.readPixels(0, 0, 1, 1);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[7];
}"""


def build_site(site: Path) -> None:
    """Derive RG1 with the real pipeline and render the real viewer template around it."""
    import django

    django.setup()
    from django.template.loader import render_to_string
    from pydicom.data import get_testdata_file

    from annotation.selectors import _reader_image
    from readerstudy.imaging import derive_display_image
    from readerstudy.models import Image

    media = site / "media"
    derived = derive_display_image(Path(get_testdata_file("RG1_UNCR.dcm")), media)
    image = Image(view_position="PA", **derived.image_fields())
    reader_image = dataclasses.replace(
        _reader_image(image),
        url=f"/media/{derived.display}",
        thumbnail_url="",
        depth_url=f"/media/{derived.depth}",
    )
    viewer = render_to_string("annotation/_viewer.html", {"images": [reader_image]})
    (site / "index.html").write_text(PAGE.format(viewer=viewer))
    (site / "static").symlink_to(ROOT / "static")


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def measure(browser, base: str, renderer: str, scale: int, seconds: float) -> dict:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=scale)
    page = context.new_page()
    query = "" if renderer == "webgl" else f"?viewer={renderer}"
    page.goto(f"{base}/index.html{query}")
    # The readout is written once the loaded image is drawn (a selector: no eval, as on the
    # real pages, whose CSP refuses it).
    page.wait_for_selector(".wl-readout:not(:empty)", state="attached")
    page.wait_for_timeout(500)
    info = page.evaluate(
        "() => { const v = window.ReaderViewer.current.views[0];"
        " return [v.renderer.name, v.canvas.width, v.canvas.height]; }"
    )
    # The drag runs inside the page: one pointer move per animation frame, as a hand moving
    # the mouse delivers at least one per frame. (Driving it through Playwright's mouse costs a
    # round trip per move and would measure the driver, not the viewer.)
    result = page.evaluate(DRAG, seconds * 1000)
    cost = page.evaluate(COST)
    context.close()
    assert info[0] == renderer, f"asked for {renderer}, the viewer used {info[0]}"
    return {
        "renderer": renderer,
        "scale": scale,
        "canvas": f"{info[1]} x {info[2]}",
        "fps": result["frames"] / (result["elapsed"] / 1000),
        "worst": result["worst"],
        "cost": cost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        build_site(site)
        server, base = serve(site)
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            gl = browser.new_page().evaluate(
                "() => { const gl = document.createElement('canvas').getContext('webgl2');"
                " const d = gl && gl.getExtension('WEBGL_debug_renderer_info');"
                " return gl ? gl.getParameter(d ? d.UNMASKED_RENDERER_WEBGL : gl.RENDERER)"
                " : 'none'; }"
            )
            for scale in (1, 2):
                for renderer in ("webgl", "canvas"):
                    rows.append(measure(browser, base, renderer, scale, args.seconds))
            browser.close()
        server.shutdown()
    load = os.getloadavg()
    print(f"WebGL: {gl}")
    print(
        f"Load average during the run: {load[0]:.2f} / {load[1]:.2f} (1 / 5 min), "
        f"{os.cpu_count()} cores"
    )
    print()
    print(
        "| path | device scale | canvas (device px) | frames/s while dragging | longest frame "
        "| one redraw alone (median) |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    names = {
        "webgl": "full depth, WebGL2",
        "canvas": "fallback: full depth, canvas 2D",
    }
    for row in rows:
        print(
            f"| {names[row['renderer']]} | {row['scale']}x | {row['canvas']} | "
            f"{row['fps']:.1f} | {row['worst']:.0f} ms | {row['cost']:.0f} ms |"
        )


if __name__ == "__main__":
    main()
