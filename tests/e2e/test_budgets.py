"""Limits over time in the browser, against the real API and worker: a key's limits made in its form (a bad
entry first: the server's reason is shown and nothing is created), requests through the relay to a fake
upstream, then the key's usage bars with their reset in the key list and the form, the user's own limits
on the dashboard, the group limits edited in the settings; axe finds nothing critical or serious on them
in both languages and themes, at 1440 and 390 px."""
from __future__ import annotations

import aiohttp
from playwright.async_api import expect

from models import Option, Token, User
from tests.e2e.conftest import shot
from tests.e2e.test_accessibility import AXE, AXE_RUN, NO_TRANSITIONS
from tests.e2e.ui import console_api, database, login
from tests.helpers import make_user
from tests.relay.fakes import FakeUpstream

PASSWORD = "password123"  # make_user's
CALL_COST = 30_000  # gpt-4o-mini at (300 000, 25 000) tokens: $0.06


async def _fill_limit(drawer, row: int, *, window: str, measure: str, amount: str, hours: str = "",
                      soft: str = "") -> None:
    editor = drawer.get_by_test_id("token-limits")
    await editor.get_by_role("button", name="Add a limit").click()
    box = editor.get_by_test_id(f"token-limits-row-{row}")
    await box.get_by_label("Window").select_option(window)
    if hours:
        await box.get_by_label("Hours (1–744)").fill(hours)
    await box.get_by_label("Measure").select_option(measure)
    await box.get_by_test_id(f"token-limits-amount-{row}").fill(amount)
    if soft:
        await box.get_by_label("Soft alert % (optional)").fill(soft)


async def _axe(page) -> list[str]:
    await page.add_style_tag(content=NO_TRANSITIONS)
    found = await page.evaluate(AXE_RUN)
    return [f"{v['impact']} {v['id']}: {v['help']} {v['nodes']}" for v in found
            if v["impact"] in ("critical", "serious")]


async def test_a_keys_limits_made_in_its_form_show_their_usage_after_requests(page, browser, backend, settings,
                                                                               aiohttp_server) -> None:
    fake = FakeUpstream(usage=(300_000, 25_000))
    fake.server = await aiohttp_server(fake.app())
    async with database(settings):
        alice = await make_user("alice", quota=10_000_000)
    async with console_api(backend, "root", "123456") as root:
        body = await root.post("/api/channel/", {"name": "good", "type": 1, "key": "sk-good", "models": "gpt-4o-mini",
                                                 "base_url": fake.url, "group": "default"})
        assert body["success"], body
        body = await root.put("/api/user/", {"id": alice.id, "limits": [{"window": "week", "requests": 2}]})
        assert body["success"], body

    # The form: three limits, the third refused by the server (its reason shown, no key made), then removed.
    await page.context.add_init_script(script=AXE)  # an init script is not held to the page's CSP
    await login(page, "alice", PASSWORD)
    await page.goto("/token")
    await page.get_by_role("button", name="Add token").click()
    drawer = page.get_by_test_id("token-drawer")
    await drawer.get_by_test_id("token-name").fill("budgeted")
    await _fill_limit(drawer, 0, window="day", measure="requests", amount="3")
    await _fill_limit(drawer, 1, window="rolling", hours="5", measure="quota", amount="0.2", soft="50")
    await expect(drawer.get_by_test_id("token-limits-row-1")).to_contain_text("= 100.0k quota units")
    await _fill_limit(drawer, 2, window="rolling", hours="2000", measure="tokens", amount="1000")
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text(
        "limits[2].window must be minute, hour, day, week, month or <N>h")
    await expect(drawer).to_be_visible()
    async with database(settings):
        assert await Token.filter(name="budgeted").count() == 0
    await shot(page, "budgets-key-form-refused")
    await drawer.get_by_role("button", name="Remove limit 3").click()
    await drawer.get_by_role("button", name="Submit").click()
    await expect(drawer).to_be_hidden()
    async with database(settings):
        token = await Token.get(name="budgeted")
    assert token.limits == '[{"window":"day","requests":3},{"window":"5h","quota":100000,"soft":50}]'

    # Two requests through the relay; a third is refused by the user's week (2 requests).
    headers = {"Authorization": f"Bearer sk-{token.key}"}
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hello."}]}
    async with aiohttp.ClientSession(base_url=backend) as http:
        for _ in range(2):
            async with http.post("/v1/chat/completions", json=chat, headers=headers) as r:
                assert r.status == 200, await r.text()
        async with http.post("/v1/chat/completions", json=chat, headers=headers) as r:
            assert r.status == 429 and "budget_exceeded" in await r.text()
        async with http.get("/api/usage/token", headers=headers) as r:
            bound = (await r.json())["data"]["binding_limit"]
    assert (bound["owner"], bound["window"], bound["used"], bound["remaining"]) == ("user", "week", 2, 0)

    # The key list and the form: each limit's bar, its figures and its reset.
    await page.reload()
    row = page.get_by_test_id(f"token-row-{token.id}")
    await expect(row.get_by_role("progressbar", name="Day · Requests: 2 of 3")).to_be_visible()
    rolling = row.get_by_role("progressbar", name="Rolling 5 h · Quota: $0.12 of $0.20")
    await expect(rolling).to_be_visible()
    await expect(rolling).to_have_class("progress is-small mb-1 is-warning")  # past its soft alert at 50 %
    await expect(row.get_by_test_id(f"token-usage-{token.id}-0-reset")).to_contain_text("Resets at ")
    await row.get_by_role("button", name="Edit").click()
    usage = page.get_by_test_id("token-limit-usage")
    await expect(usage).to_contain_text("2 of 3")
    await expect(usage).to_contain_text("soft alert at 50%")
    await expect(page.get_by_test_id("token-limits-row-1").get_by_label("Limit (amount)")).to_have_value("0.2")
    await shot(page, "budgets-key-form-usage")
    problems = {"en token form": await _axe(page)}
    await page.get_by_role("button", name="Cancel").click()

    # The dashboard: the user's own limit (spent) with its reset.
    await page.goto("/detail")
    mine = page.get_by_test_id("self-limits")
    await expect(mine).to_contain_text("My limits")
    spent = mine.get_by_role("progressbar", name="Week · Requests: 2 of 2")
    await expect(spent).to_have_class("progress is-small mb-1 is-danger")
    await expect(mine.get_by_test_id("self-limit-usage-0")).to_contain_text("Yours")
    await shot(page, "budgets-dashboard")

    # The group limits in the settings: a bad soft % refused with the server's reason, then saved.
    await page.evaluate("localStorage.clear()")
    await page.context.clear_cookies()
    await login(page, "root", "123456")
    await page.goto("/setting?tab=operation")
    card = page.get_by_test_id("card-group-limits")
    await card.get_by_test_id("group-limits-pick").select_option("default")
    await card.get_by_role("button", name="Add limits for this group").click()
    group = card.get_by_test_id("group-limits-default")
    await group.get_by_role("button", name="Add a limit").click()
    await group.get_by_label("Measure").select_option("tokens")
    await group.get_by_label("Limit", exact=True).fill("2000000")
    await group.get_by_label("Soft alert % (optional)").fill("200")
    await card.get_by_role("button", name="Save group limits").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text(
        "GroupLimits.default[0].soft must be an integer percentage from 1 to 100")
    async with database(settings):
        assert not await Option.filter(key="GroupLimits").exclude(value="").exists()
    await group.get_by_label("Soft alert % (optional)").fill("90")
    await card.get_by_role("button", name="Save group limits").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Group limits saved")
    async with database(settings):
        assert (await Option.get(key="GroupLimits")).value == \
            '{"default":[{"window":"day","tokens":2000000,"soft":90}]}'
    problems["en group limits"] = await _axe(page)
    assert problems == {k: [] for k in problems}, problems

    # Both languages and themes, desktop and phone: the user's views of their limits.
    for viewport in ({"width": 1440, "height": 900}, {"width": 390, "height": 844}):
        phone = viewport["width"] < 500
        context = await browser.new_context(base_url=backend, viewport=viewport, locale="en-US", is_mobile=phone,
                                            has_touch=phone)
        await context.add_init_script(script=AXE)
        view = await context.new_page()
        await login(view, "alice", PASSWORD)
        for theme in ("light", "dark"):
            for lang in ("en", "zh"):
                await view.evaluate("([t, l]) => { localStorage.setItem('theme', t); "
                                    "localStorage.setItem('i18nextLng', l); }", [theme, lang])
                await view.goto("/detail")
                await expect(view.get_by_test_id("self-limit-usage-1")).to_be_visible()  # the group's, now
                if lang == "zh":
                    await expect(view.get_by_test_id("self-limits")).to_contain_text("我的限额")
                    await expect(view.get_by_test_id("self-limit-usage-1")).to_contain_text("分组 default")
                problems[f"{viewport['width']} {theme} {lang} /detail"] = await _axe(view)
                await view.goto("/token")
                await view.get_by_test_id(f"token-row-{token.id}").get_by_role("button", name="编辑" if lang == "zh"
                                                                                else "Edit").click()
                await expect(view.get_by_test_id("token-limit-usage")).to_be_visible()
                problems[f"{viewport['width']} {theme} {lang} /token form"] = await _axe(view)
        await context.close()
    assert problems == {k: [] for k in problems}, problems
    async with database(settings):
        assert (await User.get(id=alice.id)).limits == '[{"window":"week","requests":2}]'
