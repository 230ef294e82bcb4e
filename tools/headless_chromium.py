"""Debian's Chromium as the browser tests, the benchmarks and the screenshot script launch it
through Playwright (never a downloaded browser): its path and its switches, in one place.

Chromium honours only the last `--disable-features` on its command line, whole: Playwright
passes its own list first, so a list of ours replaces Playwright's unless it carries it too.
`launch_args` passes one list holding both; tests/browser/test_harness.py fails when a new
Playwright disables a feature this copy of its list does not name.
"""

from __future__ import annotations

import os

PATH = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")

# Playwright 1.65.2's own list (its chromiumSwitches), kept because ours comes last.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)

# The omnibox's popup, which no page we drive has: Chromium's headless mode (156) builds it as
# WebUI pages, a renderer of their own beside every page, kept up to date at every navigation.
# Without them the browser tests take 28 % less of the machine's CPU (test_reading_safety, 22
# tests: 78.7 s -> 56.3 s of busy CPU, machine-wide; docs/benchmarks.md).
UNUSED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")

NO_GPU = ("--disable-gpu",)
# WebGL drawn by SwiftShader on the CPU: the viewer's own renderer, where a test measures it.
SWIFTSHADER_GL = ("--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader")


def launch_args(graphics: tuple[str, ...] = NO_GPU) -> list[str]:
    """Playwright's `args` for Chromium: no sandbox (containers, CI), nothing fetched in the
    background, `graphics` (no GPU by default), and one `--disable-features`."""
    disabled = ",".join((*PLAYWRIGHT_DISABLED_FEATURES, *UNUSED_FEATURES))
    return [
        "--no-sandbox",
        *graphics,
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--disable-features={disabled}",
    ]
