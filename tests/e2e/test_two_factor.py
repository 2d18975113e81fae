"""Root turns two-factor login on in the console, logs in again with a code, and verifies with a backup code in
the dialog that the console opens before a channel's stored key is shown.

The backend is another process on the real clock: codes are pyotp's for now (the setup) and for the next step
(the login: within the accepted drift, after the step the setup spent)."""
from __future__ import annotations

import time

import pyotp
from playwright.async_api import expect

from models import Channel
from tests.e2e.conftest import shot
from tests.e2e.ui import database, login


async def test_set_up_two_factor_log_in_with_a_code_and_verify_before_a_channel_key(page, settings) -> None:
    async with database(settings):
        channel = await Channel.create(name="vault", type=1, key="sk-e2e-stored-key-0123456789", models="gpt-4o")
    await login(page, "root", "123456")
    await page.goto("/setting")

    # Set up: the QR code of the otpauth URI, the secret, ten backup codes, then a code of the app.
    card = page.get_by_test_id("twofa-card")
    await card.get_by_role("button", name="Set up two-factor login").click()
    dialog = page.get_by_role("dialog", name="Set up two-factor login")
    await dialog.get_by_role("button", name="Start").click()
    qr = dialog.get_by_test_id("twofa-qr")
    await expect(qr).to_be_visible()
    assert (await qr.get_attribute("data-uri") or "").startswith("otpauth://totp/")
    secret = (await dialog.get_by_test_id("twofa-secret").inner_text()).strip()
    codes = (await dialog.get_by_test_id("backup-codes").locator("li").all_inner_texts())
    assert len(codes) == 10
    await shot(page, "two-factor-setup")
    await dialog.get_by_label("Code of the app").fill(pyotp.TOTP(secret).now())
    await dialog.get_by_label("Code of the app").press("Enter")
    await expect(page.get_by_test_id("toaster")).to_contain_text("Two-factor login is on")
    await expect(card.get_by_test_id("twofa-state")).to_contain_text("Backup codes left: 10")

    # Log in again, in a browser without the session: the password, then the code step (keyboard only).
    await page.context.clear_cookies()
    await page.evaluate("localStorage.clear()")
    await page.goto("/login")
    await page.get_by_label("Username").fill("root")
    await page.get_by_label("Password", exact=True).fill("123456")
    await page.get_by_label("Password", exact=True).press("Enter")
    code_field = page.get_by_label("Code of the app or a backup code")
    await expect(code_field).to_be_focused()
    await shot(page, "two-factor-login")
    await code_field.fill(pyotp.TOTP(secret).at(time.time() + 30))
    await code_field.press("Enter")
    await page.get_by_test_id("user-menu").wait_for(state="attached")

    # The stored key: the server asks for a fresh verification; a backup code gives it, then the key shows.
    await page.goto("/channel")
    await page.get_by_test_id(f"channel-row-{channel.id}").get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("channel-drawer")
    await drawer.get_by_role("button", name="Show the stored key").click()
    verify = page.get_by_role("dialog", name="Verify it is you")
    field = verify.get_by_label("Code of the authenticator app")
    await expect(field).to_be_focused()
    await shot(page, "verification-dialog")
    await page.keyboard.type(codes[0])
    await page.keyboard.press("Enter")
    await expect(verify).to_have_count(0)
    await expect(drawer.get_by_test_id("channel-stored-key")).to_have_value("sk-e2e-stored-key-0123456789")
