"""Root saves an option (then sees "nothing changed"); dark theme; English and Chinese."""
from __future__ import annotations

import re

from playwright.async_api import expect

from models import Option
from models.db import close_database, init_database
from tests.e2e.conftest import shot
from tests.e2e.ui import login


async def _option(settings, key: str) -> str | None:
    await init_database(settings.database_url)
    try:
        row = await Option.filter(key=key).first()
        return row.value if row else None
    finally:
        await close_database()


async def test_root_saves_an_option_then_nothing_changed(page, settings) -> None:
    await login(page, "root", "123456")
    await page.goto("/setting?tab=other")
    card = page.get_by_test_id("card-systemName")
    await card.get_by_label("System name").fill("Browser Gateway")
    await card.get_by_role("button", name="Save").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Saved")
    await expect(page.get_by_test_id("system-name")).to_have_text("Browser Gateway")
    assert await _option(settings, "SystemName") == "Browser Gateway"
    await shot(page, "settings-other")

    await card.get_by_role("button", name="Save").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("You seem not to have changed anything")
    assert await _option(settings, "SystemName") == "Browser Gateway"


async def test_dark_theme_and_both_languages(page) -> None:
    await login(page, "root", "123456")
    await page.goto("/setting")
    html = page.locator("html")
    before = await html.get_attribute("data-theme")
    await page.get_by_test_id("theme-toggle").click()
    await expect(html).to_have_attribute("data-theme", "dark" if before != "dark" else "light")
    if before == "dark":
        await page.get_by_test_id("theme-toggle").click()
        await expect(html).to_have_attribute("data-theme", "dark")
    background = await page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == "rgb(20, 22, 26)"  # Bulma's dark palette
    await shot(page, "settings-dark-en")

    await page.get_by_test_id("language-switch").select_option("zh")
    await expect(page.get_by_test_id("sidebar")).to_contain_text("设置")
    await expect(page.locator("html")).to_have_attribute("lang", re.compile("^zh"))
    await shot(page, "settings-dark-zh")
    await page.get_by_test_id("language-switch").select_option("en")
    await expect(page.get_by_test_id("sidebar")).to_contain_text("Settings")
