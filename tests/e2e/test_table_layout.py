"""Every table of the console shows all its columns at 1440 px, in English and in Chinese: each header and each
cell lies inside the visible part of its scroll box (no column starts past the window's edge or behind a
sideways scroll), with the longest real content of each column in the rows: an upstream's error text, a
refund's reason, a price breakdown, long names. On a phone the log list keeps two columns (the time with the
type, and the details, into which the others fold), both in view."""
from __future__ import annotations

import json
import time

from api.services.error_logs import ErrorRow
from models import Channel, Log, Token, User
from models.enums import LogType
from tests.e2e.test_console_polish import _seed_every_state, _seed_usage
from tests.e2e.ui import database, login

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
# (page, the test ids of its tables)
TABLES = (("/log", ("log-table",)), ("/channel", ("channel-table",)), ("/mcp-servers", ("mcp-table",)),
          ("/token", ("token-table",)),
          ("/user", ("user-table",)), ("/redemption", ("redemption-table",)), ("/midjourney", ("mj-table",)),
          ("/task", ("task-table",)), ("/audit", ("audit-table",)), ("/pricing", ("pricing-table",)),
          ("/detail", ("detail-model-table", "detail-time-table", "detail-user-table")))
# An upstream's answer as the relay keeps it in the log (a real OpenAI quota error).
UPSTREAM_ERROR = ("You exceeded your current quota, please check your plan and billing details. For more information "
                  "on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors. "
                  "(request id: req_8d3c1f0a2b4e4d6f9a7b5c3e1d0f2a4b)")
REFUND = ("Task suno-9f1c2e7a-3b4d-4c5e-8f6a-7b8c9d0e1f2a failed (upstream task failed: the music model timed out "
          "after 600 seconds), $1.234567 refunded")
LONG_MODEL = "claude-3-5-sonnet-20241022-vertex-europe-west1"

# The cells (headers and data) of a table that leave the visible part of its scroll box or of the window:
# "column n: header|row r: text (left..right outside lo..hi)".
OUTSIDE = """(testId) => {
  const table = document.querySelector(`[data-testid="${testId}"]`);
  if (!table) return [`no table ${testId}`];
  const box = (table.closest('.table-container') || table.parentElement).getBoundingClientRect();
  const lo = Math.max(box.left, 0), hi = Math.min(box.right, document.documentElement.clientWidth);
  const out = [];
  Array.from(table.rows).forEach((row, r) => Array.from(row.cells).forEach((cell, c) => {
    const rect = cell.getBoundingClientRect();
    if (rect.left < lo - 0.5 || rect.right > hi + 0.5) {
      out.push(`column ${c + 1} ${r === 0 ? 'header' : `row ${r}`}: "${cell.textContent.trim().slice(0, 40)}"`
        + ` (${Math.round(rect.left)}..${Math.round(rect.right)} outside ${Math.round(lo)}..${Math.round(hi)})`);
    }
  }));
  return out;
}"""


async def _seed_longest(settings) -> None:
    """The longest real content of the columns, newest first: a failed call with its upstream's error, a refund
    with its reason, a call with its price breakdown, a long model, token and channel name."""
    now = int(time.time())
    async with database(settings):
        alice = await User.get(username="alice")
        channel = await Channel.get(name="enabled")
        await Channel.filter(id=channel.id).update(name="openai-primary-us-east-pool-with-a-long-name",
                                                   tag="production-us-east-1")
        await Token.create(user_id=alice.id, key="longestname".ljust(48, "k"), name="ci-pipeline-production-key-02",
                           remain_quota=500_000)
        common = {"user_id": alice.id, "username": "alice", "token_name": "ci-pipeline-production-key-02"}
        breakdown = json.dumps({"frt": 2300, "model_ratio": 1.5, "completion_ratio": 5, "group_ratio": 0.8,
                                "cache_tokens": 1200, "cache_ratio": 0.1,
                                "admin_info": {"use_channel": [channel.id, channel.id + 1, channel.id + 2]}})
        await Log.create(type=int(LogType.CONSUME), model_name=LONG_MODEL, quota=1_234_567, prompt_tokens=123_456,
                         completion_tokens=65_432, use_time=48, is_stream=True, channel_id=channel.id,
                         other=breakdown, created_at=now - 3, **common)
        await Log.create(type=int(LogType.SYSTEM), content=REFUND, quota=617_283, created_at=now - 2,
                         request_id=f"task-refund:suno:{now}", **common)
        failed = ErrorRow(request_id="longest-error-1", user_id=alice.id, username="alice", token_id=0,
                          token_name=common["token_name"], model=LONG_MODEL, group="default", status=429,
                          message=UPSTREAM_ERROR, error_type="insufficient_quota", error_code="insufficient_quota",
                          channel_id=channel.id, channel_name=channel.name, channel_type=1,
                          used_channels=[channel.id, channel.id + 1])
        await Log.create(**{**failed.log_fields(), "created_at": now - 1})


async def test_every_column_of_every_table_shows_at_1440_px_in_both_languages(browser, backend: str,
                                                                             settings) -> None:
    await _seed_usage(settings)
    await _seed_every_state(settings, backend)
    await _seed_longest(settings)
    context = await browser.new_context(base_url=backend, viewport=DESKTOP, locale="en-US")
    page = await context.new_page()
    await login(page, "root", "123456")
    outside: dict[str, list[str]] = {}
    for lang in ("en", "zh"):
        await page.evaluate(f"localStorage.setItem('i18nextLng', '{lang}')")
        for path, tables in TABLES:
            await page.goto(path)
            for test_id in tables:
                await page.get_by_test_id(test_id).locator("tbody tr td").first.wait_for()
            await page.wait_for_load_state("networkidle")
            for test_id in tables:
                found = await page.evaluate(OUTSIDE, test_id)
                if found:
                    outside[f"{lang} {path} {test_id}"] = found
    await context.close()

    context = await browser.new_context(base_url=backend, viewport=PHONE, locale="en-US", is_mobile=True,
                                        has_touch=True)
    page = await context.new_page()
    await login(page, "root", "123456")
    for lang, folded in (("en", "Model"), ("zh", "模型")):
        await page.evaluate(f"localStorage.setItem('i18nextLng', '{lang}')")
        await page.goto("/log")
        table = page.get_by_test_id("log-table")
        await table.locator("tbody tr td").first.wait_for()
        await page.wait_for_load_state("networkidle")
        assert await table.locator("thead th").count() == 2
        failed_call = table.locator("tbody tr", has_text="You exceeded your current quota")
        assert folded in await failed_call.get_by_test_id("log-folded").inner_text()  # its model, folded in
        found = await page.evaluate(OUTSIDE, "log-table")
        if found:
            outside[f"{lang} phone /log log-table"] = found
    await context.close()
    assert outside == {}, "\n".join(f"{where}: {found}" for where, found in outside.items())
