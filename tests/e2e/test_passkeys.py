"""Passkeys in Chromium, with its virtual authenticator (the DevTools WebAuthn domain through
Playwright's CDP session: CTAP2, internal transport, resident keys, user verification): a user adds a
passkey in the personal settings, logs out, signs in with it on the login page, and a copy of the
passkey carrying an older signature counter (re-added through WebAuthn.addCredential) is refused.

The console is opened at http://localhost:<port> — a secure context, and a host a relying party id
may be (an IP address may not) — and ServerAddress says the same address."""
from __future__ import annotations

import re

from playwright.async_api import expect

from models import PasskeyCredential, User
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.helpers import make_user

AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                 "isUserVerified": True, "automaticPresenceSimulation": True}


async def _logout(page) -> None:
    await page.get_by_test_id("user-menu").click()
    await page.get_by_role("button", name="Log out").click()
    await expect(page).to_have_url(re.compile(r"/login$"))


async def _passkeys(settings) -> list[PasskeyCredential]:
    async with database(settings):
        return await PasskeyCredential.all()


async def test_register_a_passkey_log_in_with_it_and_refuse_a_clone(browser, backend, settings) -> None:
    origin = backend.replace("127.0.0.1", "localhost")
    async with console_api(backend, "root", "123456") as root:
        for key, value in (("ServerAddress", origin), ("PasskeyLoginEnabled", "true")):
            body = await root.put("/api/option/", {"key": key, "value": value})
            assert body["success"], body
    async with database(settings):
        await make_user("alice", "alice-password", display_name="Alice")

    context = await browser.new_context(base_url=origin, viewport={"width": 1280, "height": 800}, locale="en-US")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    cdp = await context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable", {"enableUI": False})
    authenticator = (await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR}))["authenticatorId"]

    # Alice adds a passkey in her settings, from the keyboard.
    await login(page, "alice", "alice-password")
    await page.goto("/setting")
    card = page.get_by_test_id("passkeys-card")
    await expect(card).to_contain_text("You have no passkey yet.")
    await card.get_by_role("button", name="Add a passkey").focus()
    await page.keyboard.press("Enter")
    modal = page.get_by_test_id("passkey-add-modal")
    await expect(modal.get_by_label("Name")).to_be_focused()
    await page.keyboard.type("Work laptop")
    await page.keyboard.press("Enter")
    await expect(page.get_by_test_id("toaster")).to_contain_text("Passkey added")
    await expect(card.get_by_test_id("passkey-table")).to_contain_text("Work laptop")
    await shot(page, "passkeys-card")
    stored = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))["credentials"]
    assert len(stored) == 1 and stored[0]["isResidentCredential"] and stored[0]["rpId"] == "localhost"
    [row] = await _passkeys(settings)
    assert row.name == "Work laptop" and row.user_verified

    # Logged out, she signs in with it (no username: the passkey names her).
    await _logout(page)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page.get_by_test_id("user-menu")).to_have_text("Alice")
    await expect(page.get_by_test_id("toaster")).to_contain_text("Logged in!")
    [row] = await _passkeys(settings)
    assert row.last_used_time > 0
    copied = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))["credentials"][0]
    assert copied["signCount"] == row.sign_count and row.sign_count > 0

    # Once more, then the copy taken above (its counter one behind) stands in for the passkey.
    await _logout(page)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page.get_by_test_id("user-menu")).to_have_text("Alice")
    [row] = await _passkeys(settings)
    assert row.sign_count > copied["signCount"]
    await _logout(page)
    await cdp.send("WebAuthn.clearCredentials", {"authenticatorId": authenticator})
    await cdp.send("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": copied})
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("signature counter went back")
    await shot(page, "passkey-clone-refused")
    await expect(page.get_by_test_id("login-submit")).to_be_visible()
    async with database(settings):
        alice = await User.get(username="alice")
        [row] = await PasskeyCredential.filter(user_id=alice.id)
    assert row.clone_warning
    await context.close()
    assert not errors, errors
