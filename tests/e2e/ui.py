"""Steps shared by the browser tests."""
from __future__ import annotations


async def login(page, username: str, password: str) -> None:
    await page.goto("/login")
    await page.get_by_label("Username").fill(username)
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_test_id("login-submit").click()
    await page.get_by_test_id("user-menu").wait_for()


async def toast_text(page) -> str:
    toaster = page.get_by_test_id("toaster")
    await toaster.locator(".notification").first.wait_for()
    return await toaster.inner_text()
