"""The console loads from the API process, in both languages and both themes."""
from __future__ import annotations

from tests.e2e.conftest import shot


async def test_login_page_renders(page) -> None:
    await page.goto("/login")
    await page.wait_for_load_state("networkidle")
    await shot(page, "login-en")
    body = await page.inner_text("body")
    assert "AI Gateway" in body
