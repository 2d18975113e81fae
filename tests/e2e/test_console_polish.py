"""The console as an operator meets it: on a phone (390 px) and a desktop, in both themes and both
languages — no sideways scrolling, every text readable (WCAG AA contrast, measured), charts drawn
from real data, loading states under a slow API, log details in the reader's language, Markdown
rendered and sanitised, models fetched through the server from a provider that sends no CORS headers."""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from playwright.async_api import expect

from api.services.error_logs import ErrorRow
from models import Channel, Log, McpServer, Midjourney, QuotaData, Redemption, Task, Token, User
from models.enums import ChannelStatus, LogType, RedemptionStatus, Role, TokenStatus, UserStatus
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.fakes.upstreams import PROVIDER_MODELS, REQUESTS, upstream_app
from tests.helpers import make_user

PHONE = {"width": 390, "height": 844}
PAGES = ["/", "/about", "/pricing", "/playground", "/channel", "/token", "/redemption", "/topup", "/user", "/log",
         "/detail", "/midjourney", "/task", "/setting", "/setting?tab=operation", "/setting?tab=system",
         "/setting?tab=other"]

# Every element with its own text: its colour composited over the backgrounds behind it (and faded by
# any ancestor's opacity), the WCAG contrast ratio, and whether the text is large (3:1 suffices).
# Disabled controls are exempt, as WCAG exempts inactive components; a faded row that still works is not.
CONTRAST = """
() => {
  const parse = (c) => {
    const m = c && c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a), a: 1,
  });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  // Inactive: a disabled control, or inside an element marked disabled (WCAG exempts inactive components). A faded
  // element (opacity < 1) that still works is not exempt: its colours are measured as seen.
  const inactive = (el) => {
    for (let e = el; e; e = e.parentElement) {
      if (e.disabled || e.getAttribute('aria-disabled') === 'true') return true;
    }
    return false;
  };
  // Text and background colours as seen: backgrounds composited from the page down to the element, and every
  // ancestor's opacity applied (a faded group blends what it holds with what lies behind it).
  const seen = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let bg = parse(getComputedStyle(document.documentElement).backgroundColor) || { r: 255, g: 255, b: 255, a: 1 };
    if (bg.a < 1) bg = over(bg, { r: 255, g: 255, b: 255, a: 1 });
    const groups = [];
    for (const e of chain) {
      const style = getComputedStyle(e);
      if (Number(style.opacity) < 1) groups.push({ alpha: Number(style.opacity), behind: bg });
      const own = e === document.documentElement ? null : parse(style.backgroundColor);
      if (own && own.a > 0) bg = over(own, bg);
    }
    let fg = over(parse(getComputedStyle(el).color), bg);
    for (let i = groups.length - 1; i >= 0; i -= 1) {
      const { alpha, behind } = groups[i];
      fg = over({ ...fg, a: alpha }, behind);
      bg = over({ ...bg, a: alpha }, behind);
    }
    return { fg, bg };
  };
  const failures = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || ['SCRIPT', 'STYLE', 'OPTION', 'TITLE'].includes(el.tagName)) continue;
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    if (style.visibility !== 'visible' || rect.width === 0 || rect.height === 0 || inactive(el)) continue;
    if (el.closest('svg')) continue;  // chart drawings: SVG text takes its colour from fill, read by eye
    const { fg, bg } = seen(el);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5) - 0.01) {
      failures.push(`${el.tagName.toLowerCase()}.${String(el.className).trim().replace(/\\s+/g, '.')} `
        + `"${el.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)} (${style.color} on rgb(${Math.round(bg.r)}, `
        + `${Math.round(bg.g)}, ${Math.round(bg.b)}))`);
    }
  }
  return failures;
}
"""

# Under the dark theme, Bulma's "light" tags, notifications and buttons must not stay light patches: each one's
# background (as seen) is dark (relative luminance under 0.2; the dark page is ~0.008, Bulma's pastels 0.8-0.95).
LIGHT_PATCHES = """
() => {
  const parse = (c) => { const p = c.match(/rgba?\\(([^)]+)\\)/)[1].split(/[\\s,\\/]+/).map(Number); return p; };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  return Array.from(document.querySelectorAll('.tag.is-light, .notification.is-light, .button.is-light'))
    .filter((el) => el.getBoundingClientRect().width > 0)
    .filter((el) => lum(parse(getComputedStyle(el).backgroundColor)) >= 0.2)
    .map((el) => `${el.className} "${el.textContent.trim().slice(0, 30)}" ${getComputedStyle(el).backgroundColor}`);
}
"""


async def _seed_usage(settings) -> None:
    """A user with keys, logs and dashboard data, so that tags, badges and charts are on the pages."""
    async with database(settings):
        user = await make_user("alice", quota=5_000_000)
        hour = int(time.time()) // 3600 * 3600
        await QuotaData.bulk_create([
            QuotaData(user_id=user.id, username="alice", model_name=model, created_at=hour - back * 3600,
                      count=count, quota=quota, token_used=quota // 10)
            for back, model, count, quota in ((0, "gpt-4o", 3, 900_000), (1, "gpt-4o", 2, 400_000),
                                              (1, "claude-3-haiku", 5, 300_000), (2, "gpt-4o-mini", 7, 70_000))])


async def _visit(page, path: str) -> None:
    await page.goto(path)
    await page.get_by_test_id("sidebar-toggle").wait_for()
    await page.wait_for_load_state("networkidle")


async def test_a_phone_never_scrolls_sideways(browser, backend: str, settings) -> None:
    await _seed_usage(settings)
    context = await browser.new_context(base_url=backend, viewport=PHONE, locale="en-US", is_mobile=True,
                                        has_touch=True)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await login(page, "root", "123456")
    wide = {}
    for path in PAGES:
        await _visit(page, path)
        width = await page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[path] = width
    assert wide == {}
    # The top bar fits, its menu opens with aligned items, and the sidebar opens over the page, not beside it.
    await _visit(page, "/log")
    bar = await page.locator("nav.navbar").bounding_box()
    assert bar is not None and bar["width"] <= PHONE["width"]
    burger = await page.locator(".navbar-burger").bounding_box()
    assert burger is not None and burger["x"] + burger["width"] <= PHONE["width"]
    await expect(page.get_by_test_id("sidebar")).to_be_hidden()
    await page.get_by_test_id("sidebar-toggle").click()
    await expect(page.get_by_test_id("sidebar")).to_be_visible()
    await page.get_by_test_id("sidebar").get_by_role("link", name="Tokens").click()
    await expect(page).to_have_url(f"{backend}/token")
    await expect(page.get_by_test_id("sidebar")).to_be_hidden()  # closed after navigating
    await page.locator(".navbar-burger").click()
    menu = page.locator(".navbar-menu")
    await expect(menu).to_be_visible()
    items = [(await item.inner_text(), await item.bounding_box())
             for item in await menu.locator("a.navbar-item, button.navbar-item, button.navbar-link").all()]
    assert {text for text, _ in items} >= {"Home", "About", "Root User", "Settings", "Log out"}
    # one column: every item starts at the left edge (a submenu item indented), none beyond the screen
    assert all(box["x"] < 2 and box["x"] + box["width"] <= PHONE["width"] for _, box in items), items
    texts = [await item.evaluate("e => e.getBoundingClientRect().left + parseFloat(getComputedStyle(e).paddingLeft)")
             for item in await menu.locator("a.navbar-item, button.navbar-item, button.navbar-link").all()]
    assert max(texts) - min(texts) <= 16, texts
    await shot(page, "phone-tokens-menu")
    await page.locator(".navbar-burger").click()
    await _visit(page, "/detail")
    await shot(page, "phone-dashboard")
    await context.close()
    assert not errors, errors


async def test_the_sidebar_comes_back_when_the_window_widens(page) -> None:
    await login(page, "root", "123456")
    await _visit(page, "/log")
    sidebar = page.get_by_test_id("sidebar")
    await expect(sidebar).to_be_visible()
    await page.set_viewport_size({"width": 500, "height": 800})
    await expect(sidebar).to_be_hidden()
    await page.set_viewport_size({"width": 1280, "height": 800})
    await expect(sidebar).to_be_visible()
    await page.goto("/log")
    await expect(sidebar).to_be_visible()


async def _seed_every_state(settings, backend: str) -> None:
    """Everything a page can show at once, so that the contrast sweep measures it: disabled, auto-disabled and
    failing channels, tokens, users and codes in every status, every log type (failed calls, a refund and the
    charge it gave back), drawing and async tasks in every status and submit result (failures with their reasons)."""
    now = int(time.time())
    async with console_api(backend, "root", "123456") as root:
        for key, value in (("Notice", ""), ("DrawingEnabled", "true"), ("TaskEnabled", "true"),
                           ("DataExportEnabled", "true")):
            assert (await root.put("/api/option/", {"key": key, "value": value}))["success"]
        for name, models in (("enabled", "gpt-4o"), ("paused", "gpt-4o-mini"), ("broken", "claude-3-haiku"),
                             ("unpriced", "no-price-model-x")):
            body = await root.post("/api/channel/", {"name": name, "type": 1, "key": "sk-x", "models": models,
                                                     "group": "default"})
            assert body["success"], body
        body = await root.post("/api/redemption/", {"name": "promo", "count": 3, "quota": 100000})
        assert body["success"], body
    async with database(settings):
        alice = await User.get(username="alice")  # _seed_usage's
        await make_user("bob", status=UserStatus.DISABLED)
        await make_user("carol", role=Role.ADMIN)
        channels = {c.name: c for c in await Channel.all()}
        await Channel.filter(id=channels["enabled"].id).update(response_time=850, test_time=now - 60, balance=12.5)
        await Channel.filter(id=channels["paused"].id).update(status=int(ChannelStatus.MANUALLY_DISABLED))
        await Channel.filter(id=channels["broken"].id).update(
            status=int(ChannelStatus.AUTO_DISABLED), response_time=0, test_time=now - 30,
            other_info=json.dumps({"status_reason": "upstream answered 401: invalid api key", "status_time": now - 30,
                                   "test_error": "upstream answered 401: invalid api key"}))
        token_states: list[tuple[TokenStatus, dict[str, Any]]] = [
            (TokenStatus.ENABLED, {"unlimited_quota": True}),
            (TokenStatus.ENABLED, {"model_limits_enabled": True, "model_limits": "gpt-4o"}),
            (TokenStatus.DISABLED, {}), (TokenStatus.EXPIRED, {"expired_time": now - 3600}),
            (TokenStatus.EXHAUSTED, {"remain_quota": 0})]
        for index, (token_status, extra) in enumerate(token_states):
            await Token.create(user_id=alice.id, key=f"contrast{index:02d}".ljust(48, "k"), name=f"key-{index}",
                               status=int(token_status), **{"remain_quota": 500_000, **extra})
        # MCP servers up (tested, priced, narrowed), disabled by hand and down with the health check's reason
        await McpServer.create(name="docs", url="https://docs.example/mcp", groups='["default","vip"]',
                               tools='["search"]', price=1000, test_time=now - 60, response_time=420, tool_count=3,
                               headers='{"Authorization": "Bearer mcp-secret"}')
        await McpServer.create(name="paused", url="https://paused.example/mcp", groups='["default"]',
                               status=int(ChannelStatus.MANUALLY_DISABLED))
        await McpServer.create(name="legacy", url="https://legacy.example/sse", transport="sse", groups="[]",
                               status=int(ChannelStatus.AUTO_DISABLED), status_reason="http: 401 Unauthorized",
                               test_time=now - 30, response_time=90)
        codes = await Redemption.all().order_by("id")
        await Redemption.filter(id=codes[1].id).update(status=int(RedemptionStatus.DISABLED))
        await Redemption.filter(id=codes[2].id).update(status=int(RedemptionStatus.USED), used_user_id=alice.id)
        consume = json.dumps({"frt": 900, "model_ratio": 2.5, "completion_ratio": 4, "group_ratio": 1,
                              "admin_info": {"use_channel": [channels["enabled"].id]}})
        slow = json.dumps({"frt": 12000, "model_ratio": 2.5, "completion_ratio": 4, "group_ratio": 1})
        common: dict[str, Any] = {"user_id": alice.id, "username": "alice", "token_name": "key-0"}
        await Log.bulk_create([
            Log(type=int(LogType.TOPUP), content="Redeemed code #1 for $1.00", quota=500_000, created_at=now - 50,
                **common),
            Log(type=int(LogType.CONSUME), model_name="gpt-4o", quota=15_000, prompt_tokens=1000,
                completion_tokens=500, use_time=3, is_stream=True, channel_id=channels["enabled"].id, other=consume,
                created_at=now - 40, **common),
            Log(type=int(LogType.CONSUME), model_name="gpt-4o", quota=9_000, prompt_tokens=900, use_time=150,
                other=slow, created_at=now - 35, **common),
            Log(type=int(LogType.CONSUME), model_name="gpt-4o", quota=1_000, use_time=400, created_at=now - 33,
                **common),
            Log(type=int(LogType.MANAGE), content="Administrator added $5.00", created_at=now - 30, **common),
            Log(type=int(LogType.SYSTEM), content="Quota reminder", created_at=now - 25, **common)])
        failed = ErrorRow(request_id="contrast-error-1", user_id=alice.id, username="alice", token_id=0,
                          token_name="key-0", model="no-price-model-x", group="default", status=503,
                          message="no price configured for model no-price-model-x", error_type="gateway_error",
                          error_code="model_price_error", channel_id=channels["unpriced"].id,
                          channel_name="unpriced", channel_type=1, used_channels=[channels["unpriced"].id])
        await Log.create(**{**failed.log_fields(), "created_at": now - 20})
        # a task charged then refunded: the charge and the refund row name each other
        refunded = await Task.create(user_id=alice.id, task_id="suno-refunded", platform="suno", action="MUSIC",
                                     status="FAILURE", progress="100%", fail_reason="upstream task failed: timeout",
                                     channel_id=channels["enabled"].id, submit_time=now - 15, finish_time=now - 10,
                                     billing=json.dumps({"settlement_id": "contrast-charge-1"}))
        await Log.create(type=int(LogType.CONSUME), model_name="suno_music", quota=100_000, created_at=now - 15,
                         request_id="contrast-charge-1", other=json.dumps({"task_id": "suno-refunded"}), **common)
        await Log.create(type=int(LogType.SYSTEM), content="Task suno-refunded failed, $0.20 refunded",
                         quota=100_000, created_at=now - 10, request_id=f"task-refund:suno:{refunded.id}", **common)
        for index, task_status in enumerate(("SUCCESS", "NOT_START", "SUBMITTED", "IN_PROGRESS", "QUEUED", "UNKNOWN",
                                             "")):
            await Task.create(user_id=alice.id, task_id=f"suno-{index}", platform="suno",
                              action=("MUSIC", "LYRICS")[index % 2], status=task_status, progress=f"{index * 15}%",
                              channel_id=channels["enabled"].id, submit_time=now - 100 + index,
                              finish_time=now - 20 if task_status == "SUCCESS" else 0)
        for index, (mj_status, code, action) in enumerate((
                ("SUCCESS", 1, "IMAGINE"), ("NOT_START", 21, "UPSCALE"), ("SUBMITTED", 22, "VARIATION"),
                ("IN_PROGRESS", 1, "BLEND"), ("FAILURE", 0, "DESCRIBE"), ("MODAL", 1, "ZOOM"), ("CANCEL", 1, "PAN"))):
            await Midjourney.create(user_id=alice.id, mj_id=f"mj-{index}", action=action, prompt="a red fox",
                                    prompt_en="a red fox", code=code, status=mj_status, progress=f"{index * 15}%",
                                    channel_id=channels["enabled"].id, submit_time=(now - 200 + index) * 1000,
                                    finish_time=(now - 100) * 1000 if mj_status in ("SUCCESS", "FAILURE") else 0,
                                    image_url="https://img.example/fox.png" if mj_status == "SUCCESS" else "",
                                    fail_reason="banned prompt: the upstream refused it" if mj_status == "FAILURE"
                                    else "")


ADMIN_PAGES = ("/channel", "/redemption", "/user")  # a user is told no: visited as the administrator only


def _token_list(url: str) -> bool:
    return "/api/token/?" in url


# Every page in both themes and both languages as the administrator (who sees every column and the admin
# pages); as the user in one language per theme. ~100 page loads.
SWEEP = (("light", "en", ("root", "alice")), ("light", "zh", ("root",)), ("dark", "en", ("root",)),
         ("dark", "zh", ("root", "alice")))


async def test_every_text_is_readable_in_both_themes(browser, backend: str, settings) -> None:
    await _seed_usage(settings)
    await _seed_every_state(settings, backend)
    failures: dict[str, list[str]] = {}
    for theme, lang, people in SWEEP:
        context = await browser.new_context(base_url=backend, viewport={"width": 1280, "height": 800}, locale="en-US")
        await context.add_init_script(f"localStorage.setItem('theme', '{theme}')")
        page = await context.new_page()
        for who in people:
            await login(page, who, "123456" if who == "root" else "password123")
            await page.evaluate(f"localStorage.setItem('i18nextLng', '{lang}')")
            for path in PAGES if who == "root" else [p for p in PAGES if p not in ADMIN_PAGES]:
                await _visit(page, path)
                await page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
                found = await page.evaluate(CONTRAST)
                if theme == "dark":
                    found += await page.evaluate(LIGHT_PATCHES)
                if found:
                    failures[f"{theme} {lang} {who} {path}"] = found
            # a list that failed to load: its error row and Retry button
            await page.route(_token_list, lambda route: route.fulfill(status=502, body="Bad Gateway"))
            await _visit(page, "/token")
            await page.get_by_test_id("table-error").wait_for()
            found = await page.evaluate(CONTRAST)
            if found:
                failures[f"{theme} {lang} {who} /token (failed load)"] = found
            await page.unroute(_token_list)
            await shot(page, f"contrast-{theme}-{lang}-{who}-failed-list")
            await page.evaluate("localStorage.setItem('i18nextLng', 'en')")
            await page.context.clear_cookies()
        await context.close()
    assert failures == {}, "\n".join(f"{where}: {found}" for where, found in failures.items())


async def test_charts_draw_the_dashboard_data(page, settings) -> None:
    await _seed_usage(settings)
    await login(page, "alice", "password123")
    await page.goto("/detail")
    pie = page.get_by_test_id("detail-chart-models")
    bars = page.get_by_test_id("detail-chart-time")
    await expect(pie.locator(".recharts-pie-sector")).to_have_count(3)
    await expect(bars.locator(".recharts-bar-rectangle path").first).to_be_visible()
    assert await bars.locator(".recharts-bar-rectangle path").count() >= 4  # one per model and hour
    await expect(pie).to_contain_text("gpt-4o")
    await page.get_by_test_id("detail-metric").select_option("count")
    await expect(bars.locator(".recharts-yAxis")).to_contain_text("8")
    # a model has one colour in both charts, whatever the measure
    legend = ("els => Object.fromEntries(els.map(e => [e.textContent.trim(), "
              "e.querySelector('path').getAttribute('fill')]))")
    pie_colours = await pie.locator(".recharts-legend-item").evaluate_all(legend)
    bar_colours = await bars.locator(".recharts-legend-item").evaluate_all(legend)
    assert pie_colours == bar_colours and len(set(pie_colours.values())) == 3, (pie_colours, bar_colours)
    await shot(page, "dashboard-charts")
    await page.get_by_test_id("theme-toggle").click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await shot(page, "dashboard-charts-dark")


async def test_a_slow_api_shows_loading_then_the_data(page, settings) -> None:
    await _seed_usage(settings)
    await login(page, "alice", "password123")
    release = asyncio.Event()

    async def hold(route) -> None:
        await release.wait()
        await route.continue_()

    await page.route("**/api/log/self**", hold)
    await page.goto("/log")
    await expect(page.get_by_test_id("table-loading")).to_be_visible()
    await expect(page.get_by_test_id("pagination-total")).to_have_text("Loading...")
    await expect(page.get_by_test_id("log-stat-rpm")).to_have_text("RPM: …")
    release.set()
    await expect(page.get_by_test_id("table-loading")).to_have_count(0)
    await expect(page.get_by_test_id("pagination-total")).to_contain_text("total")


async def test_log_details_in_the_readers_language(page, settings, backend: str) -> None:
    async with database(settings):
        await make_user("alice", quota=1000)
    async with console_api(backend, "root", "123456") as root:
        body = await root.post("/api/redemption/", {"name": "gift", "count": 1, "quota": 500000})
        [code] = body["data"]
    async with console_api(backend, "alice", "password123") as alice:
        assert (await alice.post("/api/user/topup", {"key": code}))["success"]
    await login(page, "alice", "password123")
    await page.goto("/log")
    content = page.get_by_test_id("log-content").first
    await expect(content).to_have_text("Redeemed code #1 for $1.00")
    await page.get_by_test_id("language-switch").select_option("zh")
    await expect(content).to_have_text("通过兑换码 #1 充值 $1.00")
    await expect(page.locator("html")).to_have_attribute("lang", "zh")
    await page.get_by_test_id("language-switch").select_option("en")
    await expect(page.locator("html")).to_have_attribute("lang", "en")


async def test_markdown_is_rendered_and_sanitised(page, backend: str) -> None:
    async with console_api(backend, "root", "123456") as root:
        markdown = ("# Welcome\n\nThe **fast** gateway. [Docs](https://docs.example)\n\n"
                    "<img src=x onerror=\"window.__pwned = 1\"><script>window.__pwned = 2</script>")
        assert (await root.put("/api/option/", {"key": "HomePageContent", "value": markdown}))["success"]
    await page.goto("/")
    home = page.get_by_test_id("home-content-html")
    await expect(home.locator("h1")).to_have_text("Welcome")
    await expect(home.locator("strong")).to_have_text("fast")
    await expect(home.locator("a[href='https://docs.example']")).to_have_text("Docs")
    assert await home.locator("script").count() == 0
    assert await page.evaluate("window.__pwned") is None


async def test_models_fetched_through_the_server(page, aiohttp_server) -> None:
    """The fake provider answers /v1/models without any CORS header: a browser could not read it itself."""
    provider = await aiohttp_server(upstream_app())
    await login(page, "root", "123456")
    await page.goto("/channel")
    await page.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel").click()
    drawer = page.get_by_test_id("channel-drawer")
    await drawer.get_by_test_id("channel-key").fill("sk-upstream")
    await drawer.get_by_test_id("channel-base-url").fill(str(provider.make_url("/healthy")))
    async with page.expect_response(lambda r: r.url.endswith("/api/channel/fetch_models")) as answer:
        await drawer.get_by_role("button", name="Fetch models from the provider").click()
    assert (await (await answer.value).json())["success"]
    for model in PROVIDER_MODELS:
        await expect(drawer.get_by_test_id("channel-models")).to_contain_text(model)
    [headers] = [headers for _, tail, headers, _ in provider.app[REQUESTS] if tail == "v1/models"]
    assert headers.get("Authorization") == "Bearer sk-upstream"


async def _overlaps(page, toaster, drawer) -> list[str]:
    """The drawer's fields that the toast covers."""
    box = await toaster.locator(".notification").first.bounding_box()
    assert box is not None
    covered = []
    for field in await drawer.locator("input, select, textarea, button").all():
        other = await field.bounding_box()
        if other and not (other["x"] >= box["x"] + box["width"] or other["x"] + other["width"] <= box["x"]
                          or other["y"] >= box["y"] + box["height"] or other["y"] + other["height"] <= box["y"]):
            covered.append(await field.evaluate("e => e.outerHTML.slice(0, 80)"))
    return covered


async def test_a_toast_never_covers_the_fields_of_an_open_drawer(page) -> None:
    await login(page, "root", "123456")
    for path, toolbar, add, drawer_id in (("/channel", "channel-toolbar", "Add channel", "channel-drawer"),
                                          ("/token", "token-toolbar", "Add token", "token-drawer")):
        await page.goto(path)
        await page.get_by_test_id(toolbar).get_by_role("button", name=add).click()
        drawer = page.get_by_test_id(drawer_id)
        if drawer_id == "token-drawer":
            await drawer.get_by_test_id("token-name").fill("")
        await drawer.get_by_role("button", name="Submit").click()
        toaster = page.get_by_test_id("toaster")
        await toaster.locator(".notification").first.wait_for()
        assert await _overlaps(page, toaster, drawer) == [], path
        await shot(page, f"toast-over-{drawer_id}")
        await page.goto("/")


async def test_row_actions_stay_on_one_line_at_1440(page, backend: str, settings) -> None:
    await _seed_usage(settings)
    async with console_api(backend, "root", "123456") as root:
        assert (await root.post("/api/channel/", {"name": "one", "type": 1, "key": "sk-x", "models": "gpt-4o",
                                                  "group": "default"}))["success"]
        assert (await root.post("/api/token/", {"name": "ops", "unlimited_quota": True, "expired_time": -1}))["success"]
    await page.set_viewport_size({"width": 1440, "height": 900})
    await login(page, "root", "123456")
    for path, rows in (("/channel", "channel-row-"), ("/user", "user-row-"), ("/token", "token-row-")):
        await page.goto(path)
        cells = page.locator(f"[data-testid^='{rows}'] td.actions-cell")
        await cells.first.wait_for()
        for cell in await cells.all():
            tops = {round((await b.bounding_box())["y"]) for b in await cell.locator(".button").all()
                    if await b.is_visible()}
            assert len(tops) == 1, (path, tops)
