"""The console's end-user screens in the browser against the real API and worker: tokens, redemption
codes and the wallet, usage logs, drawing and async task lists, model pricing and the playground
streaming from a fake upstream."""
from __future__ import annotations

import re
import time

import orjson
from playwright.async_api import expect

from api.services.billing.pricing import DEFAULT_MODEL_RATIO
from models import Log, Midjourney, Redemption, Task, Token, User
from models.enums import LogType, RedemptionStatus, TokenStatus
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.helpers import eventually, make_user
from tests.relay.fakes import REPLY, FakeUpstream

QUOTA = 10_000_000  # $20 at 500000 per unit
PASSWORD = "password123"  # make_user's


async def _new_user(settings, username: str, quota: int = QUOTA) -> User:
    async with database(settings):
        return await make_user(username, quota=quota)


async def _user(settings, user_id: int) -> User:
    async with database(settings):
        return await User.get(id=user_id)


async def _tokens(settings, user_id: int) -> list[Token]:
    async with database(settings):
        return await Token.filter(user_id=user_id).order_by("id")


async def _channel(backend: str, base_url: str, models: str) -> int:
    """An enabled OpenAI channel (abilities included) created through the console API as root."""
    async with console_api(backend, "root", "123456") as root:
        body = await root.post("/api/channel/", {"name": "e2e-upstream", "type": 1, "key": "sk-upstream-secret",
                                                 "models": models, "group": "default", "base_url": base_url})
    assert body["success"], body
    return body["data"][0]["id"]


def _is(method: str, path: str):
    return lambda r: r.request.method == method and r.url.split("?")[0].endswith(path)


async def test_token_create_toggle_delete(page, settings) -> None:
    alice = await _new_user(settings, "alice")
    await login(page, "alice", PASSWORD)
    await page.goto("/token")
    await expect(page.get_by_test_id("token-warning")).to_be_visible()

    # Create in the drawer (slides from the left)
    await page.get_by_test_id("token-toolbar").get_by_role("button", name="Add token").click()
    drawer = page.get_by_test_id("token-drawer")
    await expect(drawer).to_have_class(re.compile("is-left"))
    await drawer.get_by_test_id("token-name").fill("e2e-key")
    await drawer.get_by_test_id("token-quota").fill("2500000")
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("1 token created")
    [token] = await _tokens(settings, alice.id)
    assert (token.name, token.remain_quota, token.unlimited_quota, token.status) == (
        "e2e-key", 2_500_000, False, TokenStatus.ENABLED)
    row = page.get_by_test_id(f"token-row-{token.id}")
    await expect(row).to_contain_text("e2e-key")
    await expect(row).to_contain_text("$5.00")
    await row.get_by_role("button", name="View the key of e2e-key").click()
    await expect(page.get_by_test_id(f"token-key-{token.id}")).to_have_text(f"sk-{token.key}")
    await shot(page, "tokens")

    # Off, then on again: each waits for the server's answer (the row changes optimistically first)
    async with page.expect_response(_is("PUT", "/api/token/")) as answer:
        await row.get_by_role("button", name="Disable").click()
    body = await (await answer.value).json()
    assert body["success"] and body["data"]["status"] == TokenStatus.DISABLED, body
    await expect(row.get_by_test_id("token-status")).to_have_text("Disabled")
    assert (await _tokens(settings, alice.id))[0].status == TokenStatus.DISABLED

    async with page.expect_response(_is("PUT", "/api/token/")) as answer:
        await row.get_by_role("button", name="Enable").click()
    assert (await (await answer.value).json())["success"]
    await expect(row.get_by_test_id("token-status")).to_have_text("Enabled")
    assert (await _tokens(settings, alice.id))[0].status == TokenStatus.ENABLED

    # Delete (confirmed)
    await row.get_by_role("button", name="Delete").click()
    async with page.expect_response(_is("DELETE", f"/api/token/{token.id}/")) as answer:
        await page.get_by_test_id("confirm-modal").get_by_role("button", name="Confirm").click()
    assert (await (await answer.value).json())["success"]
    await expect(row).to_have_count(0)
    assert await _tokens(settings, alice.id) == []


async def test_root_creates_codes_and_a_user_redeems_one(page, browser, backend, settings) -> None:
    alice = await _new_user(settings, "alice", quota=1_000_000)

    # Root creates two codes in the drawer; the download offer follows
    await login(page, "root", "123456")
    await page.goto("/redemption")
    await page.get_by_test_id("redemption-toolbar").get_by_role("button", name="Add redemption code").click()
    drawer = page.get_by_test_id("redemption-drawer")
    await drawer.get_by_label("Name").fill("e2e-codes")
    await drawer.get_by_label("Quota").fill("250000")
    await drawer.get_by_label("Number of codes").fill("2")
    async with page.expect_response(_is("POST", "/api/redemption/")) as answer:
        await drawer.get_by_role("button", name="Submit").click()
    keys = (await (await answer.value).json())["data"]
    await expect(page.get_by_test_id("toaster")).to_contain_text("Redemption codes created!")
    offer = page.get_by_test_id("confirm-modal")
    await expect(offer).to_contain_text("Download the redemption codes?")
    await offer.get_by_role("button", name="Cancel").click()
    async with database(settings):
        codes = await Redemption.filter(name="e2e-codes").order_by("id")
    assert sorted(c.key for c in codes) == sorted(keys) and len(keys) == 2
    assert all((c.quota, c.status, c.used_user_id) == (250000, RedemptionStatus.UNUSED, 0) for c in codes)
    for code in codes:
        await expect(page.get_by_test_id(f"redemption-row-{code.id}")).to_contain_text("Unused")
    await shot(page, "redemptions")

    # The user redeems one on the wallet page (another browser)
    context = await browser.new_context(base_url=backend, locale="en-US", viewport={"width": 1280, "height": 800})
    try:
        user_page = await context.new_page()
        await login(user_page, "alice", PASSWORD)
        await user_page.goto("/topup")
        await expect(user_page.get_by_test_id("wallet-balance")).to_have_text("$2.00")
        await user_page.get_by_test_id("redeem-code").fill(codes[0].key)
        async with user_page.expect_response(_is("POST", "/api/user/topup")) as answer:
            await user_page.get_by_test_id("redeem-submit").click()
        assert (await (await answer.value).json())["data"] == 250000
        await expect(user_page.get_by_test_id("redeem-success-modal")).to_contain_text("Quota redeemed: $0.50")
        await expect(user_page.get_by_test_id("toaster")).not_to_contain_text("Redeemed!")  # the dialog says it, once
        await expect(user_page.get_by_test_id("wallet-balance")).to_have_text("$2.50")
        await shot(user_page, "wallet")
    finally:
        await context.close()
    assert (await _user(settings, alice.id)).quota == 1_250_000
    async with database(settings):
        used = await Redemption.get(id=codes[0].id)
        other = await Redemption.get(id=codes[1].id)
    assert (used.status, used.used_user_id) == (RedemptionStatus.USED, alice.id)
    assert other.status == RedemptionStatus.UNUSED

    # Root's list shows who redeemed it
    await page.reload()
    await expect(page.get_by_test_id(f"redemption-row-{codes[0].id}")).to_contain_text("Used")


async def test_logs_show_a_consume_row_with_its_cost(page, settings) -> None:
    now = int(time.time())
    other = orjson.dumps({"model_ratio": 0.075, "completion_ratio": 4, "group_ratio": 1, "frt": 1200}).decode()
    async with database(settings):
        alice = await make_user("alice", quota=QUOTA)
        bob = await make_user("bob")
        mine = await Log.create(user_id=alice.id, username="alice", type=int(LogType.CONSUME), created_at=now,
                                token_name="e2e-key", model_name="gpt-4o-mini", quota=123456, prompt_tokens=1000,
                                completion_tokens=250, use_time=4, is_stream=True, channel_id=9, other=other)
        theirs = await Log.create(user_id=bob.id, username="bob", type=int(LogType.CONSUME), created_at=now,
                                  model_name="gpt-4o", quota=777)
    await login(page, "alice", PASSWORD)
    await page.goto("/log")
    row = page.get_by_test_id(f"log-row-{mine.id}")
    await expect(row.get_by_test_id("log-cost")).to_have_text("$0.246912")
    await expect(row).to_contain_text("gpt-4o-mini")
    await expect(row).to_contain_text("e2e-key")
    await expect(row).to_contain_text("Consumption")
    await expect(row.get_by_test_id("stream-badge")).to_have_text("Stream")
    await expect(row.get_by_test_id("use-time")).to_have_attribute("data-level", "green")
    await expect(page.get_by_test_id("log-stat-quota")).to_have_text("Quota consumed: $0.25")
    await expect(page.get_by_test_id(f"log-row-{theirs.id}")).to_have_count(0)
    await expect(page.locator("[data-testid^=log-row-]")).to_have_count(1)
    await row.get_by_role("button", name=f"Price breakdown of log {mine.id}").click()
    await expect(page.get_by_test_id(f"price-detail-{mine.id}")).to_contain_text("Model ratio 0.075")
    await shot(page, "logs")


async def test_pricing_lists_the_models_of_an_enabled_channel(page, backend, settings) -> None:
    await _new_user(settings, "alice")
    await _channel(backend, "https://upstream.invalid", "gpt-4o-mini,claude-3-haiku-20240307")
    await login(page, "alice", PASSWORD)
    await page.goto("/pricing")
    await expect(page.get_by_test_id("pricing-group-banner")).to_contain_text("Your group is default")
    rows = page.get_by_test_id("pricing-table").locator("tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.first).to_have_attribute("data-testid", "pricing-row-gpt-4o-mini")  # gpt first
    row = page.get_by_test_id("pricing-row-gpt-4o-mini")
    await expect(row.get_by_test_id("availability")).to_have_attribute("data-available", "true")
    prompt_price = DEFAULT_MODEL_RATIO["gpt-4o-mini"] * 2
    await expect(row.get_by_test_id("pricing-price")).to_contain_text(f"Prompt ${prompt_price:g} / 1M tokens")
    await expect(page.get_by_test_id("pricing-row-claude-3-haiku-20240307")).to_be_visible()
    await page.get_by_label("Fuzzy search by model name").fill("haiku")
    await expect(rows).to_have_count(1)
    await page.get_by_label("Fuzzy search by model name").fill("")
    await shot(page, "pricing")


async def test_playground_streams_and_the_worker_bills_the_user(page, backend, settings, aiohttp_server) -> None:
    fake = FakeUpstream(usage=(13, 7))
    fake.server = await aiohttp_server(fake.app())
    alice = await _new_user(settings, "alice")
    await _channel(backend, fake.url, "gpt-4o-mini,mj_imagine,swap_face,suno_music")  # task models beside a chat one
    failed: list[str] = []
    # Only the playground's own relay calls (/pg/…) count here: what the login page and the dashboard
    # were still loading when the test left them (the logo, the deferred chart code, their API calls)
    # is aborted by the navigation, as in any browser.
    page.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}") if "/pg/" in r.url else None)
    await login(page, "alice", PASSWORD)
    await page.goto("/playground")
    await expect(page.locator("#pg-model")).to_have_value("gpt-4o-mini")
    await expect(page.locator("#pg-model option")).to_have_text(["gpt-4o-mini"])  # chat models only
    await page.get_by_test_id("chat-input").fill("Say hello")
    async with page.expect_response(_is("POST", "/pg/chat/completions")) as answer:
        await page.get_by_test_id("chat-send").click()
    assert (await answer.value).status == 200
    reply = page.get_by_test_id("chat-message").last
    await expect(reply).to_have_attribute("data-status", "complete", timeout=60_000)  # a hang guard
    await (await answer.value).finished()
    assert failed == []  # the reply's stream was read to its end, not aborted
    await expect(reply).to_have_attribute("data-role", "assistant")
    await expect(reply).to_contain_text(REPLY)
    await shot(page, "playground")
    [seen] = fake.seen
    assert seen.body["stream"] is True and seen.body["model"] == "gpt-4o-mini"
    assert seen.body["messages"][-1] == {"role": "user", "content": "Say hello"}

    async def billed() -> User | None:
        user = await _user(settings, alice.id)
        return user if user.quota < QUOTA else None

    user = await eventually(billed, timeout=20, interval=0.3)
    assert user.used_quota == QUOTA - user.quota > 0 and user.request_count == 1


async def test_drawing_and_async_task_lists_for_a_user_and_an_admin(page, browser, backend, settings) -> None:
    now = int(time.time())  # inside the default ranges: drawing from 30 days back (ms), tasks from today (s)
    async with database(settings):
        alice = await make_user("alice", quota=QUOTA)
        bob = await make_user("bob")
        mj_mine = await Midjourney.create(user_id=alice.id, mj_id="mj-alice", action="IMAGINE", prompt="a red fox",
                                          channel_id=5, submit_time=(now - 60) * 1000, finish_time=(now - 30) * 1000,
                                          status="SUCCESS", progress="100%", code=1)
        mj_theirs = await Midjourney.create(user_id=bob.id, mj_id="mj-bob", action="UPSCALE", prompt="a blue whale",
                                            channel_id=6, submit_time=(now - 10) * 1000, status="IN_PROGRESS",
                                            progress="40%", code=1)
        task_mine = await Task.create(user_id=alice.id, task_id="suno-alice", platform="suno", action="MUSIC",
                                      status="SUCCESS", progress="100%", channel_id=5, submit_time=now,
                                      finish_time=now + 40, data='{"title": "fox song"}')
        task_theirs = await Task.create(user_id=bob.id, task_id="suno-bob", platform="suno", action="LYRICS",
                                        status="FAILURE", progress="100%", channel_id=6, submit_time=now)

    # A user: own rows only, no channel column, no channel id in the task JSON
    await login(page, "alice", PASSWORD)
    async with page.expect_response(_is("GET", "/api/mj/self/")) as answer:
        await page.goto("/midjourney")
    assert (await (await answer.value).json())["data"]["total"] == 1
    table = page.get_by_test_id("mj-table")
    row = page.get_by_test_id(f"mj-row-{mj_mine.id}")
    await expect(row).to_contain_text("a red fox")
    await expect(row).to_contain_text("Imagine")
    await expect(row.get_by_test_id("task-progress")).to_have_attribute("data-value", "100")
    await expect(row.get_by_test_id("task-duration")).to_have_text("30.0 s")
    await expect(page.get_by_test_id(f"mj-row-{mj_theirs.id}")).to_have_count(0)
    await expect(table.locator("thead")).not_to_contain_text("Channel")
    await expect(page.get_by_test_id("table-error")).to_have_count(0)
    await shot(page, "drawing-user")

    async with page.expect_response(_is("GET", "/api/task/self")) as answer:
        await page.goto("/task")
    assert (await (await answer.value).json())["data"]["total"] == 1
    row = page.get_by_test_id(f"task-row-{task_mine.id}")
    await expect(row.get_by_test_id("task-status")).to_have_text("Success")
    await expect(page.get_by_test_id(f"task-row-{task_theirs.id}")).to_have_count(0)
    await row.get_by_role("button", name="suno-alice").click()
    modal = page.get_by_test_id("task-json-modal")
    await expect(modal).to_contain_text('"title": "fox song"')
    assert "channel_id" not in await modal.inner_text()
    await shot(page, "tasks-user")

    # An admin: everyone's rows with their channel, and the channel filter
    context = await browser.new_context(base_url=backend, locale="en-US", viewport={"width": 1280, "height": 800})
    try:
        admin = await context.new_page()
        await login(admin, "root", "123456")
        await admin.goto("/midjourney")
        await expect(admin.locator("[data-testid^=mj-row-]")).to_have_count(2)
        await expect(admin.get_by_test_id(f"mj-row-{mj_theirs.id}").get_by_test_id("mj-status")).to_have_text(
            "In progress")
        await admin.get_by_label("Channel ID").fill("5")
        async with admin.expect_response(lambda r: "/api/mj/?" in r.url and "channel_id=5" in r.url) as answer:
            await admin.get_by_role("button", name="Query").click()
        assert (await (await answer.value).json())["data"]["total"] == 1
        await expect(admin.locator("[data-testid^=mj-row-]")).to_have_count(1)
        await expect(admin.get_by_test_id(f"mj-row-{mj_mine.id}")).to_contain_text("5")
        await shot(admin, "drawing-admin")

        await admin.goto("/task")
        await expect(admin.locator("[data-testid^=task-row-]")).to_have_count(2)
        await expect(admin.get_by_test_id(f"task-row-{task_theirs.id}").get_by_test_id("task-status")).to_have_text(
            "Failed")
        await admin.get_by_label("Channel ID").fill("6")
        async with admin.expect_response(lambda r: "/api/task/?" in r.url and "channel_id=6" in r.url) as answer:
            await admin.get_by_role("button", name="Query").click()
        assert [i["task_id"] for i in (await (await answer.value).json())["data"]["items"]] == ["suno-bob"]
        await expect(admin.locator("[data-testid^=task-row-]")).to_have_count(1)
        await shot(admin, "tasks-admin")
    finally:
        await context.close()
