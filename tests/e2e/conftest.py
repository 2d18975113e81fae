"""Browser tests: the real backend (API + worker on a migrated database) serving the console build,
driven in Debian's Chromium by Playwright (no browser download)."""
from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.conftest import ROOT
from tests.helpers import start_api_process

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# CONSOLE_BUILD: another build directory (a checkout building several consoles side by side).
BUILD = Path(os.environ.get("CONSOLE_BUILD") or ROOT / "frontend" / "build")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "screenshots"))
# How long an `expect` waits for the page to get there: a bound on a hang, not a speed (Playwright's
# own 5 s is a second of work on a machine five times as busy).
expect.set_options(timeout=20_000)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def console_build() -> Path:
    """The console's production build (made here when missing or older than the sources)."""
    frontend = ROOT / "frontend"
    sources = [frontend / "package.json", *(frontend / "src").rglob("*"), *(frontend / "public").rglob("*"),
               *(frontend / "scripts").rglob("*")]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    index = BUILD / "index.html"
    if not index.exists() or index.stat().st_mtime < newest:
        if not (frontend / "node_modules").exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=frontend, check=True)
        subprocess.run(["npm", "run", "build"], cwd=frontend, check=True,
                       env={**os.environ, "CI": "true", "BUILD_PATH": str(BUILD)})
    return BUILD


@pytest.fixture
async def backend(settings, spawn, console_build: Path, worker) -> str:
    """Base URL of a real API process serving the console, with a worker on the same database."""
    return await start_api_process(spawn, settings, name="api-e2e", FRONTEND_DIR=str(console_build),
                                   RATE_LIMIT_CRITICAL="100000", RATE_LIMIT_API="100000")


@pytest.fixture
async def browser() -> AsyncIterator:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        instance = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        await instance.close()


@pytest.fixture
async def page(browser, backend: str):
    context = await browser.new_context(base_url=backend, viewport={"width": 1280, "height": 800},
                                        locale="en-US")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    await context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


async def shot(page, name: str) -> None:
    """Keep a screenshot of the screen under test (for review; `make screenshots`)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True, animations="disabled")
