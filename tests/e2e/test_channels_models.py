"""Channels and models an operator can trust, in the browser: a model without a price is flagged where it is
configured and priced in one click; a channel row's actions stay in view at desktop widths and a disabled
row stays readable in both themes; models are picked from the keyboard; a redeemed code leaves the field."""
from __future__ import annotations

import json
import re
import time

from playwright.async_api import expect

from models import Channel
from models.enums import ChannelStatus
from tests.conftest import ROOT
from tests.e2e.conftest import shot
from tests.e2e.test_console_polish import CONTRAST
from tests.e2e.ui import console_api, database, login

# The contrast sweep of test_console_polish, over the channel table's rows only.
ROWS_CONTRAST = CONTRAST.replace("document.body.querySelectorAll('*')",
                                 "document.querySelectorAll('[data-testid=channel-table] tbody *')")
assert ROWS_CONTRAST != CONTRAST


async def _channel(root, name: str, models: str, group: str = "default") -> int:
    body = await root.post("/api/channel/", {"name": name, "type": 1, "key": "sk-x", "models": models, "group": group})
    assert body["success"], body
    return body["data"][0]["id"]


async def test_an_unpriced_model_is_flagged_where_configured_and_priced_in_one_click(page, backend: str) -> None:
    async with console_api(backend, "root", "123456") as root:
        channel_id = await _channel(root, "lab", "gpt-4o,mystery-model")
    await login(page, "root", "123456")
    await page.goto("/channel")
    row = page.get_by_test_id(f"channel-row-{channel_id}")
    await expect(row.get_by_test_id("unpriced-models")).to_have_text("Without a price: mystery-model")

    # The channel form: the model is marked in the picker and named in a warning.
    await row.get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("channel-drawer")
    await expect(drawer.get_by_test_id("channel-unpriced-warning")).to_contain_text(
        "1 of the chosen models has no price (mystery-model)")
    mystery = drawer.get_by_test_id("picker-chosen").locator("[data-model='mystery-model']")
    await expect(mystery).to_contain_text("(no price)")
    await expect(drawer.get_by_role("option", name=re.compile("^mystery-model"))).to_contain_text("no price")
    await page.keyboard.press("Escape")
    await expect(drawer).to_have_count(0)

    # The pricing page lists it with its channel; "Set a price" makes it priced.
    await page.goto("/pricing")
    unpriced = page.get_by_test_id("pricing-unpriced")
    await expect(unpriced.get_by_test_id("unpriced-mystery-model")).to_contain_text(f"Offered by: lab (#{channel_id})")
    await expect(page.get_by_test_id("pricing-row-mystery-model")).to_have_count(0)
    await shot(page, "pricing-unpriced")
    await unpriced.get_by_role("button", name="Set a price for mystery-model").click()
    dialog = page.get_by_test_id("set-price-modal")
    await dialog.get_by_label("Model ratio").fill("2")
    await dialog.get_by_label("Completion ratio").fill("3")
    await dialog.get_by_label("Completion ratio").press("Enter")
    await expect(page.get_by_test_id("toaster")).to_contain_text("mystery-model now has a price")
    await expect(unpriced).to_have_count(0)
    price = page.get_by_test_id("pricing-row-mystery-model").get_by_test_id("pricing-price")
    await expect(price).to_contain_text("Prompt $4 / 1M tokens")
    await expect(price).to_contain_text("Completion $12 / 1M tokens")
    await page.goto("/channel")
    await expect(page.get_by_test_id(f"channel-row-{channel_id}")).to_be_visible()
    await expect(page.get_by_test_id(f"channel-row-{channel_id}").get_by_test_id("unpriced-models")).to_have_count(0)


REFUSED = "the upstream refused the connection (127.0.0.1:9): nothing listens there"


async def _seed_rows(backend: str, settings) -> dict[str, int]:
    """Channels in every state a row shows: tested, manually disabled, disabled automatically by a failed test,
    failing its last test while enabled, untested with many groups and an unpriced model."""
    async with console_api(backend, "root", "123456") as root:
        ids = {name: await _channel(root, name, models, group) for name, models, group in (
            ("fast-openai-production", "gpt-4o,gpt-4o-mini", "default"),
            ("manually-off", "gpt-4o", "default"),
            ("tripped-by-its-test", "gpt-4o", "default"),
            ("failing-enabled", "gpt-4o", "default"),
            ("fresh-with-many-groups-and-a-long-name", "gpt-4o,unpriced-thing,another-unpriced", "default,vip,svip"))}
    now = int(time.time())
    async with database(settings):
        await Channel.filter(id=ids["fast-openai-production"]).update(response_time=800, test_time=now, balance=12.5)
        await Channel.filter(id=ids["manually-off"]).update(
            status=int(ChannelStatus.MANUALLY_DISABLED), response_time=4200, test_time=now)
        await Channel.filter(id=ids["tripped-by-its-test"]).update(
            status=int(ChannelStatus.AUTO_DISABLED), response_time=3, test_time=now,
            other_info=json.dumps({"status_reason": "Incorrect API key provided: sk-x****", "status_time": now}))
        await Channel.filter(id=ids["failing-enabled"]).update(
            response_time=2, test_time=now,
            other_info=json.dumps({"test_error": REFUSED, "test_error_time": now}))
    return ids


def _texts(lang: str) -> dict[str, str]:
    """The row's texts in `lang`, from the console's own translations."""
    strings = json.loads((ROOT / "frontend" / "src" / "i18n" / f"{lang}.json").read_text())
    channel, common = strings["channel"], strings["common"]
    return {"test": channel["test"], "edit": common["edit"], "copy": common["copy"], "delete": common["delete"],
            "balance": channel["updateBalance"], "batch": channel["batchOperations"], "untested": channel["untested"],
            "failed": channel["testFailed"],
            "unpriced": channel["unpricedModels"].replace("{{models}}", "unpriced-thing, another-unpriced")}


async def test_row_actions_in_view_at_desktop_widths_and_rows_readable(browser, backend: str, settings) -> None:
    ids = await _seed_rows(backend, settings)
    for theme, lang in (("light", "en"), ("dark", "zh")):
        text = _texts(lang)
        context = await browser.new_context(base_url=backend, viewport={"width": 1280, "height": 900}, locale="en-US")
        await context.add_init_script(f"localStorage.setItem('theme', '{theme}')")
        page = await context.new_page()
        await login(page, "root", "123456")
        await page.evaluate(f"localStorage.setItem('i18nextLng', '{lang}')")
        for width in (1280, 1440):
            await page.set_viewport_size({"width": width, "height": 900})
            await page.goto("/channel")
            table = page.get_by_test_id("channel-table")
            await expect(table.locator("tbody tr[data-testid^='channel-row-']")).to_have_count(len(ids))
            # No sideways scrolling: every action of every row is wholly in view.
            scroll = await page.locator(".table-container").evaluate("e => [e.scrollWidth, e.clientWidth]")
            assert scroll[0] <= scroll[1], (theme, width, scroll)
            for channel_id in ids.values():
                row = page.get_by_test_id(f"channel-row-{channel_id}")
                actions = row.locator("td.actions-cell .button")
                labels = await actions.all_inner_texts()
                assert {text["test"], text["edit"], text["copy"], text["delete"]} <= set(labels), labels
                for button in await actions.all():
                    await expect(button).to_be_in_viewport(ratio=1)
                await expect(row.get_by_role("button", name=text["balance"])).to_be_in_viewport(ratio=1)
            if width == 1280:  # with the batch column too
                await page.get_by_role("switch", name=text["batch"]).click()
                await expect(table.locator("tbody input[type=checkbox]")).to_have_count(len(ids))
                scroll = await page.locator(".table-container").evaluate("e => [e.scrollWidth, e.clientWidth]")
                assert scroll[0] <= scroll[1], (theme, width, "batch", scroll)
                await page.get_by_role("switch", name=text["batch"]).click()
            # A failing channel: a red "Failed" with its reason, never a green time; an untested one: a neutral dash.
            failing = page.get_by_test_id(f"channel-row-{ids['failing-enabled']}").get_by_test_id("response-time")
            await expect(failing).to_have_attribute("data-level", "failed")
            tripped = page.get_by_test_id(f"channel-row-{ids['tripped-by-its-test']}")
            await expect(tripped.get_by_test_id("response-time")).to_have_attribute("data-level", "failed")
            fresh = page.get_by_test_id(f"channel-row-{ids['fresh-with-many-groups-and-a-long-name']}")
            await expect(fresh.get_by_test_id("response-time")).to_have_text("—" + text["untested"])
            await expect(fresh.get_by_test_id("unpriced-models")).to_have_text(text["unpriced"])
        # The reasons open by keyboard (not only a hover title), and every text of the rows meets AA.
        await tripped.get_by_test_id("status-auto").focus()
        await page.keyboard.press("Enter")
        await expect(tripped.get_by_test_id("status-auto-reason")).to_contain_text("Incorrect API key provided")
        await failing.get_by_role("button", name=re.compile(text["failed"])).click()
        await expect(failing.get_by_test_id("test-failed-reason")).to_contain_text("nothing listens there")
        await page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
        assert await page.evaluate(ROWS_CONTRAST) == [], theme
        await shot(page, f"channels-{theme}-{lang}-1440")
        await context.close()


async def test_models_are_picked_from_the_keyboard(page, backend: str) -> None:
    await login(page, "root", "123456")
    await page.goto("/channel")
    await page.get_by_test_id("theme-toggle").click()  # the picker in the dark theme
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await page.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel").click()
    drawer = page.get_by_test_id("channel-drawer")
    chosen = drawer.get_by_test_id("picker-chosen")
    # A new channel is offered its type's models.
    offer = drawer.get_by_test_id("channel-type-models-offer")
    await expect(offer).to_contain_text(re.compile(r"OpenAI offers \d+ models"))
    await expect(chosen.locator("[data-model]")).to_have_count(0)
    search = drawer.get_by_role("combobox", name="Models")
    await search.focus()
    await page.keyboard.type("gpt-4o-mini")
    listbox = drawer.get_by_role("listbox", name="Model choices")
    options = listbox.get_by_role("option")
    await expect(options.first).to_have_text(re.compile("gpt-4o-mini"))
    count = await options.count()
    await page.keyboard.press("Enter")  # chooses the active (first) option; the channel is not submitted
    await expect(options.first).to_have_attribute("aria-selected", "true")
    if count > 1:
        await page.keyboard.press("ArrowDown")
        await page.keyboard.press("Enter")
        await expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    await expect(chosen.locator("[data-model]")).to_have_count(min(count, 2))
    await expect(page.get_by_test_id("toaster").locator(".notification")).to_have_count(0)
    await page.keyboard.press("Escape")  # clears the search; the drawer stays
    await expect(search).to_have_value("")
    await expect(drawer).to_be_visible()
    assert await options.count() > count
    await page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    drawer_contrast = CONTRAST.replace("document.body.querySelectorAll('*')",
                                       "document.querySelectorAll('[data-testid=channel-models] *')")
    assert await page.evaluate(drawer_contrast) == []
    await shot(page, "channel-model-picker")
    await page.keyboard.press("Escape")  # now the drawer's
    await expect(drawer).to_have_count(0)


async def test_a_redeemed_code_leaves_the_field(page, backend: str) -> None:
    async with console_api(backend, "root", "123456") as root:
        created = await root.post("/api/redemption/", {"name": "gift", "quota": 500000, "count": 1})
        [code] = created["data"]
    await login(page, "root", "123456")
    await page.goto("/topup")
    await page.get_by_test_id("redeem-code").fill(code)
    await page.get_by_test_id("redeem-submit").click()
    await expect(page.get_by_test_id("redeem-success-modal")).to_be_visible()
    await expect(page.get_by_test_id("redeem-code")).to_have_value("")
    await page.keyboard.press("Escape")
    await expect(page.get_by_test_id("redeem-code")).to_have_value("")
