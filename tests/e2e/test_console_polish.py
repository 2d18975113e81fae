"""The console as an operator meets it: on a phone (390 px) and a desktop, in both themes and both
languages — no sideways scrolling, every text readable (WCAG AA contrast, measured), charts drawn
from real data, loading states under a slow API, log details in the reader's language, Markdown
rendered and sanitised, models fetched through the server from a provider that sends no CORS headers."""
from __future__ import annotations

import asyncio
import time

from playwright.async_api import expect

from models import QuotaData
from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, database, login
from tests.fakes.upstreams import PROVIDER_MODELS, REQUESTS, upstream_app
from tests.helpers import make_user

PHONE = {"width": 390, "height": 844}
PAGES = ["/", "/about", "/pricing", "/playground", "/channel", "/token", "/redemption", "/topup", "/user", "/log",
         "/detail", "/midjourney", "/task", "/setting", "/setting?tab=operation", "/setting?tab=system",
         "/setting?tab=other"]

# Every element with its own text: its colour composited over the backgrounds behind it, the WCAG
# contrast ratio, and whether the text is large (3:1 suffices). Disabled and faded (opacity < 1)
# elements are exempt, as WCAG exempts inactive components.
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
  const background = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.push(parse(getComputedStyle(e).backgroundColor));
    let bg = parse(getComputedStyle(document.documentElement).backgroundColor) || { r: 255, g: 255, b: 255, a: 1 };
    if (bg.a < 1) bg = over(bg, { r: 255, g: 255, b: 255, a: 1 });
    for (let i = chain.length - 1; i >= 0; i -= 1) if (chain[i] && chain[i].a > 0) bg = over(chain[i], bg);
    return bg;
  };
  const faded = (el) => {
    for (let e = el; e; e = e.parentElement) {
      if (Number(getComputedStyle(e).opacity) < 1 || e.disabled) return true;
      if (e.getAttribute('aria-disabled') === 'true') return true;
    }
    return false;
  };
  const failures = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || ['SCRIPT', 'STYLE', 'OPTION', 'TITLE'].includes(el.tagName)) continue;
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    if (style.visibility !== 'visible' || rect.width === 0 || rect.height === 0 || faded(el)) continue;
    if (el.closest('svg')) continue;  // chart drawings: SVG text takes its colour from fill, read by eye
    const bg = background(el);
    const fg = over(parse(style.color), bg);
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


async def test_every_text_is_readable_in_both_themes(browser, backend: str, settings) -> None:
    await _seed_usage(settings)
    async with console_api(backend, "root", "123456") as root:
        body = await root.post("/api/redemption/", {"name": "promo", "count": 1, "quota": 100000})
        assert body["success"], body
        for key, value in (("Notice", ""),):
            await root.put("/api/option/", {"key": key, "value": value})
    async with console_api(backend, "alice", "password123") as alice:
        await alice.post("/api/token/", {"name": "ci", "unlimited_quota": True, "expired_time": -1})
        await alice.post("/api/token/", {"name": "capped", "remain_quota": 5000, "expired_time": -1})
    failures: dict[str, list[str]] = {}
    for theme in ("light", "dark"):
        context = await browser.new_context(base_url=backend, viewport={"width": 1280, "height": 800}, locale="en-US")
        await context.add_init_script(f"localStorage.setItem('theme', '{theme}')")
        page = await context.new_page()
        for who, password in (("root", "123456"), ("alice", "password123")):
            await login(page, who, password)
            for path in PAGES:
                await _visit(page, path)
                await page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
                found = await page.evaluate(CONTRAST)
                if found:
                    failures[f"{theme} {who} {path}"] = found
            await shot(page, f"contrast-{theme}-{who}-settings")
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
