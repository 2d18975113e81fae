"""The audit page in the browser against the real API and worker: root's changes listed with their
actor, address and fields, the details dialog opened and closed from the keyboard, a filter, both
exports downloaded without the secret they recorded; an admin's sidebar offers the page, a user's
does not; the Chinese page, and the list on a phone without the page overflowing."""
from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from models import AuditEntry
from models.enums import Role
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.helpers import eventually, make_user

SECRET = "sk-e2e-audit-channel-secret-424242"


async def _written(settings, count: int) -> list[AuditEntry]:
    async def enough() -> list[AuditEntry] | None:
        async with database(settings):
            rows = await AuditEntry.all().order_by("id")
        return rows if len(rows) >= count else None

    return await eventually(enough, timeout=30, interval=0.2)


async def test_the_audit_page(page, backend, settings) -> None:
    async with console_api(backend, "root", "123456") as root:
        made = await root.post("/api/channel/", {"name": "main", "type": 1, "key": SECRET, "models": "gpt-4o",
                                                 "group": "default"})
        channel_id = made["data"][0]["id"]
        assert (await root.put("/api/channel/", {"id": channel_id, "name": "main-2"}))["success"]
        assert (await root.put("/api/option/", {"key": "SMTPServer", "value": "mx.example"}))["success"]
    entries = await _written(settings, 3)  # the worker moved them from Redis into the table
    assert [e.action for e in entries] == ["channel.create", "channel.update", "option.set"]
    async with database(settings):
        await make_user("ann", role=Role.ADMIN)
        await make_user("bob")

    await login(page, "root", "123456")  # root's default password: a reminder dialog covers the page
    link = page.get_by_test_id("sidebar").get_by_role("link", name="Audit log")
    await expect(link).to_have_attribute("href", "/audit")
    await page.goto("/audit")
    await expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    update = page.get_by_test_id(f"audit-row-{entries[1].id}")
    await expect(update).to_contain_text("channel.update")
    await expect(update).to_contain_text("root")
    await expect(update).to_contain_text("127.0.0.1")
    await expect(update).to_contain_text(f"Channel {channel_id}")
    await shot(page, "audit-list")

    # The details from the keyboard: focus the button, Enter opens, Escape closes, focus comes back.
    details = page.get_by_role("button", name=f"Details of entry {entries[1].id}")
    await details.focus()
    await page.keyboard.press("Enter")
    dialog = page.get_by_test_id("audit-details")
    await expect(dialog.get_by_test_id("audit-field-name")).to_contain_text("main")
    await expect(dialog.get_by_test_id("audit-field-name")).to_contain_text("main-2")
    await shot(page, "audit-details")
    await page.keyboard.press("Escape")
    await expect(dialog).to_have_count(0)
    await expect(details).to_be_focused()

    # A filter, typed and submitted with Enter; it stays in the address.
    await page.get_by_label("Action").fill("option.")
    await page.get_by_label("Action").press("Enter")
    await expect(page.get_by_test_id(f"audit-row-{entries[2].id}")).to_be_visible()
    await expect(update).to_have_count(0)
    assert "action=option." in page.url
    await page.get_by_label("Action").fill("")
    await page.get_by_label("Action").press("Enter")
    await expect(update).to_be_visible()

    # Both exports: the files of the applied filters, without the channel's key.
    for fmt in ("ndjson", "csv"):
        async with page.expect_download() as download_info:
            await page.get_by_test_id(f"audit-export-{fmt}").click()
        download = await download_info.value
        assert download.suggested_filename == f"audit.{fmt}"
        text = Path(await download.path()).read_text(encoding="utf-8")
        assert "channel.create" in text and "channel.update" in text
        assert SECRET not in text

    # Chinese
    await page.evaluate("localStorage.setItem('i18nextLng', 'zh')")
    await page.reload()
    await expect(page.get_by_role("heading", name="审计日志")).to_be_visible()
    await expect(page.get_by_role("columnheader", name="操作者")).to_be_visible()
    await expect(page.get_by_role("button", name="导出 CSV")).to_be_visible()
    # On a phone: the table scrolls inside its container, the page itself does not overflow.
    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(update).to_be_visible()
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await shot(page, "audit-phone-zh")
    await page.evaluate("localStorage.setItem('i18nextLng', 'en')")


async def test_the_sidebar_offers_the_audit_page_to_admins_only(page, backend, settings) -> None:
    async with database(settings):
        await make_user("ann", role=Role.ADMIN)
        await make_user("bob")
    await login(page, "bob", "password123")
    await expect(page.get_by_test_id("sidebar").get_by_role("link", name="Logs")).to_be_visible()
    await expect(page.get_by_test_id("sidebar").get_by_role("link", name="Audit log")).to_have_count(0)
    await page.goto("/audit")
    await expect(page.get_by_role("heading", name="Audit log")).to_have_count(0)
    await page.context.clear_cookies()
    await page.evaluate("localStorage.clear()")
    await login(page, "ann", "password123")
    await page.get_by_test_id("sidebar").get_by_role("link", name="Audit log").click()
    await expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
