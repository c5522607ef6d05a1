"""Debian's Chromium driven by Playwright, for every test that opens elicitkit's pages (a pytest plugin).

The browser is `/usr/bin/chromium` (Debian's `chromium` package, which `./dev test` installs); Playwright never
downloads one of its own. `axe` is axe-core (the npm package, pinned), installed from the npm registry into a
temporary folder once per session, and `audit` runs it on a page for WCAG 2.0, 2.1 and 2.2 A and AA, in both
colour schemes, at a phone's size and a desktop's, and checks the page reflows at 400% zoom.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

# How long an `expect(...)` waits for the page to show something (Playwright's own default is 5 s): Chromium shares
# two cores with the servers under test and the rest of the suite, and a question's round trip through the tool
# under that load has taken longer than 5 s (the view's Cancel, seen on Python 3.12).
expect.set_options(timeout=20_000)

CHROMIUM = Path("/usr/bin/chromium")
# What this machine's Chromium needs to start headless and quietly (no sandbox as root, no calls home).
# Playwright gives every launch a fresh, empty profile directory of its own (it refuses --user-data-dir).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests drive Debian's Chromium. "
            "Run ./dev test (it installs it) or apt-get install chromium.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture
async def browser(chromium: Path) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


AXE = "axe-core@4.14.1"  # pinned: a new release may add rules
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
SCHEMES = ("light", "dark")
SIZES = {"phone": {"width": 375, "height": 812}, "desktop": {"width": 1280, "height": 800}}
ZOOMED = {"width": 320, "height": 256}
"""A 1280x1024 window at 400% zoom: WCAG 1.4.10 asks for no sideways scrolling at 320 CSS pixels."""


@pytest.fixture(scope="session")
def axe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """axe-core's `axe.min.js`, installed from the npm registry into a temporary folder."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "npm is missing: the accessibility tests install axe-core with it (apt-get install npm)", pytrace=False
        )
    prefix = tmp_path_factory.mktemp("axe")
    subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", AXE],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return prefix / "node_modules" / "axe-core" / "axe.min.js"


async def audit_context(browser: Browser, **options: Any) -> BrowserContext:
    """A context whose pages axe can be injected into: the pages' own Content-Security-Policy forbids inline
    scripts, so this context (and only this one) bypasses it. The CSP itself is tested elsewhere."""
    context = await browser.new_context(bypass_csp=True, viewport=SIZES["desktop"], color_scheme="light", **options)
    context.set_default_timeout(10_000)
    return context


def _violation(where: str, found: dict[str, Any]) -> str:
    nodes = "; ".join(f"{node['target']} {node.get('failureSummary', '')}" for node in found["nodes"][:5])
    return f"{where}: {found['id']} ({found['impact']}) {found['help']}: {nodes}"


async def audit(page: Page, axe: Path) -> list[str]:
    """Every WCAG 2.x A/AA violation axe finds on the page as it stands, in each colour scheme and size, and
    whether it scrolls sideways at 400% zoom; the page is left at the desktop size in the light scheme."""
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        await page.add_script_tag(path=str(axe))
    found: list[str] = []
    for scheme in SCHEMES:
        await page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        for name, size in SIZES.items():
            await page.set_viewport_size(size)  # type: ignore[arg-type]
            result = await page.evaluate(
                "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
                WCAG_TAGS,
            )
            found += [_violation(f"{scheme} {name}", violation) for violation in result["violations"]]
    await page.set_viewport_size(ZOOMED)  # type: ignore[arg-type]
    wide = await page.evaluate("() => document.documentElement.scrollWidth")
    if wide > ZOOMED["width"]:
        found.append(f"400% zoom: the page is {wide} px wide in a {ZOOMED['width']} px window")
    await page.emulate_media(color_scheme="light")
    await page.set_viewport_size(SIZES["desktop"])  # type: ignore[arg-type]
    return found
