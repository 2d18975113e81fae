"""The console's shell and what it says when things go wrong: a list that failed to load shows the error with a
Retry (not "No data"), network failures are told in the reader's language, the footer's credit line, the New Year
easter egg on its days only, the phone playground's input in view."""
from __future__ import annotations

from playwright.async_api import expect

from tests.e2e.conftest import shot
from tests.e2e.ui import console_api, login


def _token_list(url: str) -> bool:
    return "/api/token/?" in url


async def test_a_failed_list_load_shows_the_error_and_retry_loads_it(page, backend: str) -> None:
    async with console_api(backend, "root", "123456") as root:
        assert (await root.post("/api/token/", {"name": "ops", "unlimited_quota": True, "expired_time": -1}))["success"]
    await login(page, "root", "123456")
    failing = True

    async def answer(route) -> None:
        if failing:
            await route.fulfill(status=500, content_type="application/json",
                                body='{"success": false, "message": "database unreachable", "data": null}')
        else:
            await route.continue_()

    await page.route(_token_list, answer)
    await page.goto("/token")
    error = page.get_by_test_id("table-error")
    await expect(error).to_be_visible()
    await expect(error).to_contain_text("The list could not be loaded: database unreachable")
    await expect(page.get_by_test_id("table-empty")).to_have_count(0)
    await expect(page.locator("[data-testid^='token-row-']")).to_have_count(0)
    await expect(page.get_by_test_id("pagination-total")).to_have_text("—")  # neither "Loading..." nor "0 in total"
    await shot(page, "token-list-failed")
    failing = False
    await error.get_by_role("button", name="Retry").click()
    await expect(page.locator("[data-testid^='token-row-']")).to_have_count(1)
    await expect(page.get_by_test_id("table-error")).to_have_count(0)
    await expect(page.get_by_test_id("pagination-total")).to_have_text("1 in total")


async def test_a_network_failure_is_told_in_chinese(page, backend: str) -> None:
    await login(page, "root", "123456")
    await page.evaluate("localStorage.setItem('i18nextLng', 'zh')")
    await page.route(_token_list, lambda route: route.abort("failed"))  # the browser's own "Failed to fetch"
    await page.goto("/token")
    await expect(page.get_by_test_id("toaster")).to_contain_text("无法正常连接至服务器！请检查网络后重试")
    await expect(page.get_by_test_id("table-error")).to_contain_text("列表加载失败：无法正常连接至服务器！")
    await expect(page.get_by_test_id("table-error").get_by_role("button", name="重试")).to_be_visible()
    for text in ("Failed to fetch", "NetworkError", "Load failed"):
        assert text not in await page.locator("body").inner_text()


async def test_the_footer_credits_the_version_and_the_open_source_projects(page, backend: str) -> None:
    async with page.expect_response(lambda r: r.url.endswith("/api/status")) as answer:
        await page.goto("/about")
    version = (await (await answer.value).json())["data"]["version"]
    credit = page.get_by_test_id("footer-credit")
    await expect(credit).to_contain_text(f"AI Gateway {version} · compatible with the open-source New API and One API")
    await expect(credit.get_by_role("link", name="New API")).to_have_attribute("href", "https://github.com/QuantumNous/new-api")
    await expect(credit.get_by_role("link", name="One API")).to_have_attribute("href", "https://github.com/songquanpeng/one-api")
    await page.get_by_test_id("language-switch").select_option("zh")
    await expect(credit).to_contain_text(f"AI Gateway {version} · 兼容开源项目 New API 与 One API")
    async with console_api(backend, "root", "123456") as root:
        footer = {"key": "Footer", "value": "<p>Run by <b>Example Ops</b></p>"}
        assert (await root.put("/api/option/", footer))["success"]
    await page.reload()
    await expect(page.get_by_test_id("footer")).to_have_text("Run by Example Ops")
    await expect(page.get_by_test_id("footer-credit")).to_have_count(0)


async def test_the_new_year_easter_egg_on_its_days_only(browser, backend: str) -> None:
    for day, shown in (("2027-01-01T10:00:00", True), ("2027-02-09T10:00:00", True), ("2027-02-24T20:00:00", True),
                       ("2027-01-02T10:00:00", False), ("2027-02-25T10:00:00", False)):
        phone = day.startswith("2027-02-09")  # the lantern fits the phone's top bar too
        context = await browser.new_context(base_url=backend, locale="en-US",
                                            viewport={"width": 390, "height": 844} if phone else None)
        page = await context.new_page()
        await page.clock.set_fixed_time(day)
        await page.goto("/about")
        await page.get_by_test_id("footer").wait_for()
        await expect(page.get_by_role("button", name="Happy New Year"), day).to_have_count(1 if shown else 0)
        if phone:
            assert await page.evaluate("document.documentElement.scrollWidth") <= 390
            await expect(page.get_by_role("button", name="Happy New Year")).to_be_in_viewport()
        await context.close()
    # The lantern wishes a happy new year with fireworks that stop after 3 s; none for a reader who prefers less motion.
    for motion in ("no-preference", "reduce"):
        context = await browser.new_context(base_url=backend, locale="en-US", reduced_motion=motion)
        page = await context.new_page()
        await page.clock.install(time="2027-02-12T10:00:00")  # the page's timers run on the test's clock
        await page.goto("/about")
        await page.get_by_test_id("footer").wait_for()
        await page.clock.pause_at("2027-02-12T10:01:00")
        await page.get_by_role("button", name="Happy New Year").click()
        await expect(page.get_by_test_id("toaster")).to_contain_text("Happy New Year!!!")
        fireworks = page.get_by_test_id("fireworks")
        if motion == "reduce":
            await expect(fireworks).to_have_count(0)
        else:
            await expect(fireworks).to_be_visible()
            assert await fireworks.evaluate("e => getComputedStyle(e).pointerEvents") == "none"
            await shot(page, "new-year")
            await page.clock.run_for(2_900)  # however long the screenshot took: the page's 2.9 s
            await expect(fireworks).to_be_visible()
            await page.clock.run_for(200)
            await expect(fireworks).to_have_count(0)  # stopped by itself at 3 s (the reload is due at 10 s)
        await context.close()


async def test_the_phone_playground_shows_its_input_without_scrolling(browser, backend: str) -> None:
    context = await browser.new_context(base_url=backend, viewport={"width": 390, "height": 844}, locale="en-US",
                                        is_mobile=True, has_touch=True)
    page = await context.new_page()
    await login(page, "root", "123456")
    await page.goto("/playground")
    chat_input = page.get_by_test_id("chat-input")
    await expect(chat_input).to_be_in_viewport()
    box = await chat_input.bounding_box()
    settings_box = await page.get_by_test_id("playground-settings").bounding_box()
    assert box is not None and settings_box is not None
    assert box["y"] + box["height"] <= 844 and box["y"] < settings_box["y"], (box, settings_box)
    assert box["width"] >= 300, box  # the message field has the bar's width (Send and Clear below it)
    assert await page.evaluate("window.scrollY") == 0
    await shot(page, "phone-playground")
    await context.close()
