"""Accounts in the browser: root changes the default password; a user registers through an invite
link, generates an access token and copies the invite link; root promotes, disables and edits them."""
from __future__ import annotations

import re

from playwright.async_api import expect

from api.services.passwords import sha256_hex
from models import User
from models.db import close_database, init_database
from models.enums import Role, UserStatus
from tests.e2e.conftest import shot
from tests.e2e.ui import login


async def _user(settings, username: str) -> User | None:
    await init_database(settings.database_url)
    try:
        return await User.filter(username=username).first()
    finally:
        await close_database()


async def _verify(hashed: str, password: str) -> bool:
    from api.services.passwords import verify_password

    return await verify_password(password, hashed)


async def test_root_changes_the_default_password(page, settings) -> None:
    await page.goto("/login")
    await page.get_by_label("Username").fill("root")
    await page.get_by_label("Password", exact=True).fill("123456")
    await page.get_by_test_id("login-submit").click()
    alert = page.get_by_test_id("alert-modal")
    await expect(alert).to_contain_text("You are using the default password!")
    await shot(page, "login-default-password")
    await alert.get_by_role("button", name="Close").click()

    await page.goto("/setting")
    await page.get_by_role("button", name="Change password").click()
    modal = page.get_by_test_id("password-modal")
    await modal.get_by_label("Current password").fill("123456")
    await modal.get_by_label("New password", exact=True).fill("a-much-better-password")
    await modal.get_by_label("Confirm new password").fill("a-much-better-password")
    await modal.get_by_role("button", name="Confirm").click()
    verify = page.get_by_test_id("verification-modal")  # a password change needs a fresh verification
    await verify.get_by_label("Password", exact=True).fill("123456")
    await verify.get_by_role("button", name="Verify").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Password changed!")
    root = await _user(settings, "root")
    assert await _verify(root.password, "a-much-better-password")
    assert not await _verify(root.password, "123456")


async def test_invite_register_token_and_admin_actions(page, browser, backend, settings) -> None:
    # Root's invite link
    await login(page, "root", "123456")
    await page.goto("/setting")
    invite = page.get_by_test_id("invite-link")
    await expect(invite).to_have_value(re.compile(r"/register\?aff=\w+"))
    link = await invite.input_value()
    aff_code = link.rsplit("=", 1)[1]

    # A visitor registers through it (another browser)
    visitor_context = await browser.new_context(base_url=backend, locale="en-US")
    await visitor_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=backend)
    visitor = await visitor_context.new_page()
    await visitor.goto(link.replace(link.split("/register")[0], backend))
    await expect(visitor.get_by_test_id("register-aff")).to_have_value(aff_code)
    await visitor.get_by_test_id("register-username").fill("alice")
    await visitor.get_by_test_id("register-password").fill("alice-password")
    await visitor.get_by_test_id("register-password2").fill("alice-password")
    await shot(visitor, "register")
    await visitor.get_by_test_id("register-submit").click()
    await expect(visitor.get_by_test_id("toaster")).to_contain_text("Registration successful!")
    alice = await _user(settings, "alice")
    root = await _user(settings, "root")
    assert alice is not None and alice.inviter_id == root.id

    # The user logs in, generates an access token and copies the invite link
    await login(visitor, "alice", "alice-password")
    await visitor.goto("/setting")
    await visitor.get_by_role("button", name="Generate system access token").click()
    token_box = visitor.get_by_test_id("access-token")
    await expect(token_box).to_have_value(re.compile(r"\S{16,}"))
    token = await token_box.input_value()
    assert (await _user(settings, "alice")).access_token == sha256_hex(token)
    await visitor.get_by_role("button", name="Copy invite link").click()
    await expect(visitor.get_by_test_id("toaster")).to_contain_text("Invite link copied to the clipboard")
    copied = await visitor.evaluate("navigator.clipboard.readText()")
    assert re.search(r"/register\?aff=\w+$", copied)
    assert copied == await visitor.get_by_test_id("invite-link").input_value()
    await shot(visitor, "settings-personal")
    await visitor_context.close()

    # Root promotes, disables and edits that user
    await page.goto("/user")
    row = page.get_by_test_id(f"user-row-{alice.id}")
    await row.get_by_role("button", name="Promote").click()
    await page.get_by_test_id("confirm-modal").get_by_role("button", name="Confirm").click()
    verify = page.get_by_test_id("verification-modal")  # root's role changes need a fresh verification
    await verify.get_by_label("Password", exact=True).fill("123456")
    async with page.expect_response(lambda r: r.url.endswith("/api/user/manage")) as answer:
        await verify.get_by_role("button", name="Verify").click()
    assert (await (await answer.value).json())["success"]  # the row updates optimistically before this
    await expect(row).to_contain_text("Admin")
    assert (await _user(settings, "alice")).role == Role.ADMIN

    await row.get_by_role("button", name="Disable").click()
    async with page.expect_response(lambda r: r.url.endswith("/api/user/manage")) as answer:
        await page.get_by_test_id("confirm-modal").get_by_role("button", name="Confirm").click()
    assert (await (await answer.value).json())["success"]
    await expect(row.get_by_role("button", name="Enable")).to_be_visible()
    assert (await _user(settings, "alice")).status == UserStatus.DISABLED

    await row.get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("edit-user-drawer")
    await drawer.get_by_label("Display name").fill("Alice A.")
    await drawer.get_by_label("Quota", exact=True).fill("1234567")
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("User info updated!")
    edited = await _user(settings, "alice")
    assert (edited.display_name, edited.quota) == ("Alice A.", 1234567)
    await shot(page, "users")
