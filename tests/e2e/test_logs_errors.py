"""Failures and refunds in the usage logs, in the browser against the real API and worker: a relayed
call that failed shows as an error row (English and Chinese), a failed task's refund as a negative
cost marking its charge, and the log page's "consumed" equal to the dashboard's total; the Chinese
headers stay on one line at 1280 and 390 px."""
from __future__ import annotations

import asyncio
import time

import aiohttp
from playwright.async_api import expect

from api.upstream.catalogue import ChannelType
from models import Log, Token
from models.enums import LogType
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.helpers import eventually, make_user
from tests.relay.fakes import FakeUpstream, new_key
from tests.upstream.providers.fake_tasks import SUNO_KEY, FakeSuno

PASSWORD = "password123"  # make_user's

# The lines of text of every header cell of the log table: 1 each when none wraps.
HEADER_LINES = """() => Array.from(document.querySelectorAll('[data-testid="log-table"] th')).map((th) => {
  const range = document.createRange();
  range.selectNodeContents(th);
  return new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size;
})"""


async def _channel(root, **fields) -> None:
    body = await root.post("/api/channel/", {"group": "default", **fields})
    assert body["success"], body


async def _rows(settings) -> dict[str, list[Log]]:
    async with database(settings):
        rows = await Log.all().order_by("id")
    return {"error": [r for r in rows if r.type == LogType.ERROR],
            "refund": [r for r in rows if (r.request_id or "").startswith("task-refund:")],
            "consume": [r for r in rows if r.type == LogType.CONSUME]}


async def test_a_failed_call_and_a_refund_in_the_logs(page, backend, settings, aiohttp_server) -> None:
    good, bad, suno = FakeUpstream(usage=(300_000, 25_000)), FakeUpstream(fail_status=502), FakeSuno()
    for fake in (good, bad, suno):
        fake.server = await aiohttp_server(fake.app())
    key = new_key()
    async with database(settings):
        alice = await make_user("alice", quota=10_000_000)
        await Token.create(user_id=alice.id, key=key, name="e2e-key", unlimited_quota=True)
    async with console_api(backend, "root", "123456") as root:
        await _channel(root, name="good", type=1, key="sk-good", models="gpt-4o-mini", base_url=good.url)
        await _channel(root, name="bad", type=1, key="sk-bad", models="gpt-4", base_url=bad.url)
        await _channel(root, name="suno", type=int(ChannelType.SUNO), key=SUNO_KEY, models="suno_music",
                       base_url=suno.url)

    headers = {"Authorization": f"Bearer sk-{key}"}
    chat = {"messages": [{"role": "user", "content": "Say hello."}]}
    async with aiohttp.ClientSession(base_url=backend) as http:
        async with http.post("/v1/chat/completions", json={**chat, "model": "gpt-4o-mini"}, headers=headers) as r:
            assert r.status == 200
        async with http.post("/v1/chat/completions", json={**chat, "model": "gpt-4"}, headers=headers) as r:
            assert r.status == 502
        async with http.post("/suno/submit/music", json={"prompt": "foxes"}, headers=headers) as r:
            music = (await r.json())["data"]
    suno.tasks[music].update(status="failed", fail_reason="no clips")
    from workers.broker import send  # the worker fixture set the broker up on the test's Redis

    await asyncio.to_thread(send, "tasks.poll_suno", time.time())

    async def written() -> dict[str, list[Log]] | None:
        rows = await _rows(settings)
        return rows if rows["error"] and rows["refund"] and len(rows["consume"]) == 2 else None

    rows = await eventually(written, timeout=30, interval=0.3)
    [error], [refund] = rows["error"], rows["refund"]
    charge = next(r for r in rows["consume"] if r.model_name == "suno_music")
    chat_cost = next(r for r in rows["consume"] if r.model_name == "gpt-4o-mini").quota
    assert chat_cost == 30_000 and charge.quota == refund.quota == 50_000  # $0.06 and $0.10

    await login(page, "alice", PASSWORD)
    await page.goto("/log")
    row = page.get_by_test_id(f"log-row-{error.id}")
    await expect(row).to_contain_text("Error")
    await expect(row.get_by_test_id("log-error-status")).to_have_text("HTTP 502")
    await expect(row.get_by_test_id("log-content")).to_contain_text("fake failure 502")
    await expect(row.get_by_test_id("log-cost")).to_have_text("")
    refund_row = page.get_by_test_id(f"log-row-{refund.id}")
    await expect(refund_row.get_by_test_id("log-cost")).to_have_text("-$0.100000")
    await expect(refund_row.get_by_test_id("log-refund-tag")).to_have_text("Refund")
    charge_row = page.get_by_test_id(f"log-row-{charge.id}")
    await expect(charge_row.get_by_test_id("log-cost")).to_have_text("$0.100000")
    await expect(charge_row.get_by_test_id("log-refunded-tag")).to_have_text("Refunded")
    total = f"${chat_cost / 500_000:.2f}"  # the chat alone: the task's charge came back
    await expect(page.get_by_test_id("log-stat-quota")).to_have_text(f"Quota consumed: {total}")
    await expect(page.get_by_test_id("log-stat-fallbacks")).to_have_text("Served by a fallback: 0")
    await page.get_by_label("Log type").select_option(label="Error")
    await expect(page.locator("[data-testid^=log-row-]")).to_have_count(1)
    await expect(page.get_by_test_id(f"log-row-{error.id}")).to_be_visible()
    await shot(page, "logs-error-row")
    await page.goto("/detail")
    await expect(page.get_by_test_id("detail-total-quota")).to_have_text(f"Quota consumed: {total}")

    # In Chinese: the same rows, headers on one line on a desktop and on a phone.
    await page.evaluate("localStorage.setItem('i18nextLng', 'zh')")
    await page.goto("/log")
    row = page.get_by_test_id(f"log-row-{error.id}")
    await expect(row).to_contain_text("错误")
    await expect(row.get_by_test_id("log-error-status")).to_have_text("HTTP 502")
    await expect(page.get_by_test_id(f"log-row-{refund.id}").get_by_test_id("log-refund-tag")).to_have_text("退款")
    await expect(page.get_by_test_id("log-stat-quota")).to_have_text(f"消耗额度：{total}")
    await expect(page.get_by_test_id("log-stat-fallbacks")).to_have_text("由回退模型应答：0")
    assert set(await page.evaluate(HEADER_LINES)) == {1}
    await shot(page, "logs-zh")
    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(row).to_be_attached()
    assert set(await page.evaluate(HEADER_LINES)) == {1}
    await page.goto("/detail")
    await expect(page.get_by_test_id("detail-total-quota")).to_have_text(f"消耗额度：{total}")
