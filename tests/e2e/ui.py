"""Steps shared by the browser tests."""
from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import aiohttp

from models.db import close_database, init_database
from tests.helpers import ApiClient


async def login(page, username: str, password: str) -> None:
    await page.goto("/login")
    await page.get_by_label("Username").fill(username)
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_test_id("login-submit").click()
    await page.get_by_test_id("user-menu").wait_for(state="attached")  # inside the collapsed menu on a phone


async def toast_text(page) -> str:
    toaster = page.get_by_test_id("toaster")
    await toaster.locator(".notification").first.wait_for()
    return await toaster.inner_text()


@contextlib.asynccontextmanager
async def database(settings) -> AsyncIterator[None]:
    """The test's database, opened in the test process for a few reads or writes (the backend is another process)."""
    await init_database(settings.database_url)
    try:
        yield
    finally:
        await close_database()


@contextlib.asynccontextmanager
async def console_api(backend: str, username: str, password: str) -> AsyncIterator[ApiClient]:
    """The console API of the backend process as `username` (cookie session + New-Api-User header)."""
    async with aiohttp.ClientSession(base_url=backend, cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        api = ApiClient(http)  # type: ignore[arg-type]  # the same request() interface as a TestClient
        await api.login(username, password)
        yield api
