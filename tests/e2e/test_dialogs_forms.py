"""Drawers and dialogs follow the dialog pattern (focus in, Tab trapped, Escape closes, focus back, page behind
inert); Enter does what the visible primary button does; settings saves keep other cards' edits and save the
payment card in order; clearing old logs asks first."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from playwright.async_api import Locator, Page, Route, expect

from models import Log, Option, User
from models.enums import LogType
from tests.e2e.ui import console_api, database, login
from tests.helpers import make_user

# The elements Tab can reach in a dialog, as the browser counts them (for the walk's length only).
TABBABLES = """d => [...d.querySelectorAll('a[href], button, input, select, textarea, iframe, [tabindex]')]
  .filter(e => e.tabIndex >= 0 && !e.disabled && e.type !== 'hidden' && e.checkVisibility()).length"""
INSIDE = "d => d.contains(document.activeElement) && document.activeElement !== d"
ACTIVE_DESCRIPTION = "() => document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : ''"


async def _options(settings, *keys: str) -> dict[str, str]:
    async with database(settings):
        return {o.key: o.value for o in await Option.filter(key__in=keys)}


@dataclass(frozen=True)
class DialogKind:
    name: str
    url: str
    opener: Callable[[Page], Locator]
    dialog: str  # its test id


KINDS = [
    DialogKind("channel drawer", "/channel",
               lambda p: p.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel"),
               "channel-drawer"),
    DialogKind("token drawer", "/token",
               lambda p: p.get_by_test_id("token-toolbar").get_by_role("button", name="Add token"), "token-drawer"),
    DialogKind("user edit drawer", "/user",
               lambda p: p.get_by_test_id("user-row-1").get_by_role("button", name="Edit"), "edit-user-drawer"),
    DialogKind("add user drawer", "/user", lambda p: p.get_by_role("button", name="Add user"), "add-user-drawer"),
    DialogKind("redemption drawer", "/redemption",
               lambda p: p.get_by_test_id("redemption-toolbar").get_by_role("button", name="Add redemption code"),
               "redemption-drawer"),
    DialogKind("confirm dialog", "/setting?tab=operation",
               lambda p: p.get_by_test_id("card-log").get_by_role("button", name="Clear old logs"), "confirm-modal"),
    DialogKind("change password dialog", "/setting",
               lambda p: p.get_by_role("button", name="Change password"), "password-modal"),
]


async def _check_focus_trap(page: Page, dialog: Locator, what: str) -> None:
    """Focus is inside; Tab walks round inside (and wraps), Shift+Tab too."""
    await expect(dialog).to_be_visible()
    assert await dialog.evaluate("d => d.contains(document.activeElement)"), f"{what}: focus did not move in"
    count = await dialog.evaluate(TABBABLES)
    assert count > 0, what
    start = await page.evaluate(ACTIVE_DESCRIPTION)
    for key in ("Tab", "Shift+Tab"):
        seen = []
        for _ in range(count + 1):
            await page.keyboard.press(key)
            active = await page.evaluate(ACTIVE_DESCRIPTION)
            assert await dialog.evaluate(INSIDE), f"{what}: {key} left the dialog for {active}"
            seen.append(active)
        assert len(set(seen)) < len(seen), f"{what}: {key} did not wrap round ({count} stops)"
    assert start  # the walk began inside, on a real element


async def test_every_drawer_and_dialog_takes_focus_traps_tab_closes_on_escape_and_gives_focus_back(
        page, settings, backend) -> None:
    async with database(settings):
        await make_user("bob")
    await login(page, "root", "123456")
    for kind in KINDS:
        await page.goto(kind.url)
        opener = kind.opener(page)
        await opener.focus()
        await page.keyboard.press("Enter")  # opened from the keyboard
        dialog = page.get_by_test_id(kind.dialog)
        await _check_focus_trap(page, dialog, kind.name)
        # The page behind is inert: its button takes no focus (so Enter cannot open a second dialog).
        assert await opener.evaluate("b => b.closest('[inert]') !== null"), kind.name
        await opener.evaluate("b => b.focus()")
        assert await dialog.evaluate("d => d.contains(document.activeElement)"), f"{kind.name}: focus got behind"
        await page.keyboard.press("Escape")
        await expect(dialog).to_be_hidden()
        await expect(opener).to_be_focused()
        assert await page.locator("[inert]").count() == 0, kind.name

    # The site notice opens by itself on load: the same pattern, and Escape dismisses it for good.
    async with console_api(backend, "root", "123456") as root:
        assert (await root.put("/api/option/", {"key": "Notice", "value": "Maintenance **tonight**"}))["success"]
    await page.goto("/token")
    notice = page.get_by_test_id("notice-modal")
    await _check_focus_trap(page, notice, "notice")
    await page.keyboard.press("Escape")
    await expect(notice).to_be_hidden()
    await page.reload()
    await expect(page.get_by_test_id("token-toolbar")).to_be_visible()
    await expect(notice).to_have_count(0)

    # A confirm's Escape is its Cancel: the switch it asked about stays on, and has focus again.
    await page.goto("/setting?tab=system")
    switch = page.get_by_test_id("card-login").get_by_label("Allow login with password")
    await switch.focus()
    await page.keyboard.press("Space")  # turning it off asks first
    confirm = page.get_by_test_id("confirm-modal")
    await expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()  # a dangerous question starts on Cancel
    await page.keyboard.press("Escape")
    await expect(confirm).to_be_hidden()
    await expect(switch).to_be_checked()
    await expect(switch).to_be_focused()

    # Enter in the change-password dialog submits it.
    await page.goto("/setting")
    await page.get_by_role("button", name="Change password").click()
    dialog = page.get_by_test_id("password-modal")
    await expect(dialog.get_by_label("Current password")).to_be_focused()
    await page.keyboard.type("123456")
    await dialog.get_by_label("New password", exact=True).fill("password456")
    await dialog.get_by_label("Confirm new password").fill("password456")
    await dialog.get_by_label("Confirm new password").press("Enter")
    # The verification dialog opens on top, its field focused; Enter there verifies and the change goes through.
    verify = page.get_by_test_id("verification-modal")
    await expect(verify.get_by_label("Password", exact=True)).to_be_focused()
    await page.keyboard.type("123456")
    await page.keyboard.press("Enter")
    await expect(page.get_by_test_id("toaster")).to_contain_text("Password changed!")
    await expect(dialog).to_be_hidden()


async def test_enter_in_add_quota_adds_it_and_enter_elsewhere_saves(page, settings) -> None:
    async with database(settings):
        bob = await make_user("bob", quota=1000)
    puts: list[str] = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" and "/api/user/" in r.url else None)
    await login(page, "root", "123456")
    await page.goto("/user")
    await page.get_by_test_id(f"user-row-{bob.id}").get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("edit-user-drawer")
    await expect(drawer.get_by_label("Username")).to_have_value("bob")
    await drawer.get_by_label("Add quota").fill("250")
    await drawer.get_by_label("Add quota").press("Enter")
    await expect(drawer.get_by_label("Quota", exact=True)).to_have_value("1250")
    await expect(drawer.get_by_label("Add quota")).to_have_value("")
    await expect(drawer).to_be_visible()  # the form stays: nothing was saved
    assert puts == []

    await drawer.get_by_label("Display name").fill("Bob B.")
    await drawer.get_by_label("Display name").press("Enter")  # Enter in an ordinary field: the drawer's Submit
    await expect(page.get_by_test_id("toaster")).to_contain_text("User info updated!")
    await expect(drawer).to_be_hidden()
    async with database(settings):
        saved = await User.get(id=bob.id)
    assert (saved.quota, saved.display_name) == (1250, "Bob B.")
    assert len(puts) == 1


async def test_saving_one_card_keeps_another_cards_unsaved_edit_and_enter_saves_a_card(page, settings) -> None:
    await login(page, "root", "123456")
    await page.goto("/setting?tab=operation")
    general = page.get_by_test_id("card-general")
    quota = page.get_by_test_id("card-quota")
    await general.get_by_label("Top-up link").fill("https://shop.example.com")  # not saved yet
    await quota.get_by_label("Initial quota of new users").fill("4242")
    async with page.expect_response(lambda r: r.request.method == "GET" and r.url.endswith("/api/option/")):
        await quota.get_by_label("Initial quota of new users").press("Enter")  # saves the quota card, then reloads
    await expect(page.get_by_test_id("toaster")).to_contain_text("Saved")
    saved = await _options(settings, "QuotaForNewUser", "TopUpLink")
    assert (saved["QuotaForNewUser"], saved.get("TopUpLink", "")) == ("4242", "")
    await expect(general.get_by_label("Top-up link")).to_have_value("https://shop.example.com")
    await expect(quota.get_by_label("Initial quota of new users")).to_have_value("4242")

    async with page.expect_response(lambda r: r.request.method == "GET" and r.url.endswith("/api/option/")):
        await general.get_by_role("button", name="Save General settings").click()
    assert (await _options(settings, "TopUpLink"))["TopUpLink"] == "https://shop.example.com"


async def test_payment_card_enables_with_its_secrets_in_one_save_every_time_and_names_a_refused_option(
        page, settings, backend) -> None:
    async with console_api(backend, "root", "123456") as root:
        assert (await root.put("/api/option/", {"key": "ServerAddress", "value": backend}))["success"]
    await login(page, "root", "123456")

    async def slow_secrets(route: Route) -> None:
        """A secret's request takes a longer way (network latency): sent together, the switch would arrive first."""
        if route.request.method == "PUT" and "Stripe" in (route.request.post_data or ""):
            await asyncio.sleep(0.3)
        await route.continue_()

    await page.route("**/api/option/", slow_secrets)
    await page.goto("/setting?tab=system")
    card = page.get_by_test_id("card-payment")
    switch = card.get_by_label("Enable online payment")

    def switch_put(r) -> bool:
        return (r.request.method == "PUT" and r.url.endswith("/api/option/")
                and "PaymentEnabled" in (r.request.post_data or ""))

    for attempt in range(3):
        await switch.check()
        await card.get_by_label("Stripe API secret").fill(f"sk_test_{attempt}")
        await card.get_by_label("Stripe webhook signing secret").fill(f"whsec_{attempt}")
        await card.get_by_label("Stripe price ID").fill(f"price_{attempt}")
        async with page.expect_response(switch_put) as answer:
            await card.get_by_role("button", name="Save Payment settings").click()
        assert (await (await answer.value).json())["success"], f"attempt {attempt}: enabling was refused"
        assert await _options(settings, "PaymentEnabled", "StripePriceId") == {
            "PaymentEnabled": "true", "StripePriceId": f"price_{attempt}"}
        await expect(card.get_by_label("Stripe API secret")).to_have_value("")
        await switch.uncheck()
        async with page.expect_response(switch_put) as answer:
            await card.get_by_role("button", name="Save Payment settings").click()
        assert (await (await answer.value).json())["success"]

    await card.get_by_label("Minimum top-up (US dollars)").fill("7")
    await card.get_by_label("Top-up group ratios").fill('{"vip": -1}')
    await card.get_by_role("button", name="Save Payment settings").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text(
        "Not saved: Top-up group ratios (TopupGroupRatio must be a JSON object of non-negative numbers)")
    assert (await _options(settings, "MinTopUp"))["MinTopUp"] == "7"
    await expect(card.get_by_label("Top-up group ratios")).to_have_value('{"vip": -1}')  # kept for a retry


async def test_clearing_old_logs_asks_first_and_says_how_many_went(page, settings) -> None:
    month = 30 * 24 * 3600
    async with database(settings):
        for i in range(3):
            await Log.create(user_id=1, username="root", type=int(LogType.CONSUME),
                             created_at=int(time.time()) - 3 * month + i)
        recent = await Log.create(user_id=1, username="root", type=int(LogType.CONSUME), content="recent")
    await login(page, "root", "123456")
    await page.goto("/setting?tab=operation")
    card = page.get_by_test_id("card-log")
    chosen = await card.get_by_label("Clear logs before").input_value()  # a month ago by default
    await card.get_by_role("button", name="Clear old logs").click()
    confirm = page.get_by_test_id("confirm-modal")
    await expect(confirm).to_contain_text("Clear old logs?")
    await expect(confirm).to_contain_text(f"Every log recorded before {chosen.replace('T', ' ')}:00 will be deleted.")
    await page.keyboard.press("Escape")
    await expect(confirm).to_be_hidden()
    async with database(settings):
        assert await Log.filter(type=int(LogType.CONSUME)).count() == 4

    await card.get_by_role("button", name="Clear old logs").click()
    await confirm.get_by_role("button", name="Delete the logs").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("3 logs cleaned!")
    async with database(settings):
        assert [log.id for log in await Log.filter(type=int(LogType.CONSUME))] == [recent.id]

