"""Debian's Chromium driven by Playwright, for every test that opens elicitkit's pages (a pytest plugin).

The browser is `/usr/bin/chromium` (Debian's `chromium` package, which `./dev test` installs); Playwright never
downloads one of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

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
