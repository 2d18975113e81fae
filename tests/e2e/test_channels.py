"""Root manages a channel that points at a local fake provider, in the browser."""
from __future__ import annotations

import re

from playwright.async_api import expect

from models import Channel
from models.db import close_database, init_database
from models.enums import ChannelStatus
from tests.e2e.conftest import shot
from tests.e2e.ui import login
from tests.fakes.upstreams import upstream_app


async def _channels(settings) -> list[Channel]:
    await init_database(settings.database_url)
    try:
        return await Channel.all().order_by("id")
    finally:
        await close_database()


async def test_create_test_edit_copy_disable_delete(page, settings, aiohttp_server) -> None:
    provider = await aiohttp_server(upstream_app())
    base_url = str(provider.make_url("/healthy"))
    await login(page, "root", "123456")
    await page.goto("/channel")

    # Create
    await page.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel").click()
    drawer = page.get_by_test_id("channel-drawer")
    await drawer.get_by_test_id("channel-name").fill("fake-openai")
    await drawer.get_by_test_id("channel-key").fill("sk-upstream-secret")
    await drawer.get_by_test_id("channel-base-url").fill(base_url + "/")
    await drawer.get_by_label("Custom model names").fill("gpt-4o-mini")
    await drawer.get_by_role("button", name="Add", exact=True).click()
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Channel created!")
    [channel] = await _channels(settings)
    assert (channel.name, channel.key, channel.base_url, channel.models) == (
        "fake-openai", "sk-upstream-secret", base_url, "gpt-4o-mini")
    row = page.get_by_test_id(f"channel-row-{channel.id}")
    await expect(row.get_by_test_id("response-time")).to_have_attribute("data-level", "untested")
    assert "sk-upstream-secret" not in await page.content()

    # Test: a real request through the channel's adaptor to the fake provider
    await row.get_by_role("button", name="Test", exact=True).click()
    await expect(page.get_by_test_id("toaster")).to_contain_text(re.compile(r"Channel fake-openai tested successfully"))
    await expect(row.get_by_test_id("response-time")).to_have_attribute("data-level", "green")
    [channel] = await _channels(settings)
    assert channel.test_time > 0
    await shot(page, "channels")

    # Edit
    await row.get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("channel-drawer")
    await drawer.get_by_test_id("channel-name").fill("fake-renamed")
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Channel updated!")
    [channel] = await _channels(settings)
    assert channel.name == "fake-renamed" and channel.key == "sk-upstream-secret"  # an empty key keeps it

    # Copy
    await row.get_by_role("button", name="Copy").click()
    await page.get_by_test_id("confirm-modal").get_by_role("button", name="Confirm").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Channel copied")
    original, copy = await _channels(settings)
    assert copy.name == "fake-renamed_copy" and copy.key == original.key and copy.used_quota == 0
    await expect(page.get_by_test_id(f"channel-row-{copy.id}")).to_be_visible()

    # Disable
    async with page.expect_response(lambda r: r.url.endswith("/api/channel/") and r.request.method == "PUT") as put:
        await row.get_by_role("button", name="Disable").click()
    assert (await (await put.value).json())["success"]  # the row greys optimistically before this
    await expect(row).to_have_class(re.compile("is-disabled-row"))
    assert (await _channels(settings))[0].status == ChannelStatus.MANUALLY_DISABLED

    # Delete
    await row.get_by_role("button", name="Delete").click()
    await page.get_by_test_id("confirm-modal").get_by_role("button", name="Confirm").click()
    await expect(row).to_have_count(0)
    assert [c.id for c in await _channels(settings)] == [copy.id]


async def test_the_form_and_the_list_read_the_providers_catalogue(page, settings) -> None:
    """What the form says of a type comes from the server's catalogue (GET /api/channel/types): the
    key format, the `other` field, the notice, presets; a retired type's channel says why."""
    await init_database(settings.database_url)
    try:
        retired = await Channel.create(type=16, name="glm-v3", key="id.secret", models="chatglm_pro")
    finally:
        await close_database()
    await login(page, "root", "123456")
    await page.goto("/channel")
    row = page.get_by_test_id(f"channel-row-{retired.id}")
    await expect(row.get_by_test_id("channel-type-retired")).to_have_attribute(
        "title", re.compile(r"Zhipu took the ChatGLM v3 models offline in 2023"))

    await page.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel").click()
    drawer = page.get_by_test_id("channel-drawer")
    types = drawer.get_by_test_id("channel-type")
    labels = await types.locator("option").all_text_contents()
    assert "AWS Bedrock" in labels and "Baidu Qianfan V2" in labels
    assert not any("ChatGLM v3" in label or "PaLM" in label for label in labels)  # retired: not offered
    await types.select_option("33")
    await expect(drawer.get_by_test_id("channel-key-format")).to_contain_text("BedrockApiKey|Region")
    await types.select_option("3")
    await expect(drawer.get_by_test_id("channel-type-notice")).to_contain_text("sent as the deployment name")
    await expect(drawer.get_by_text("API version (empty: v1 API)")).to_be_visible()
    await types.select_option("14")
    await drawer.get_by_test_id("channel-preset").select_option("moonshot")
    await expect(drawer.get_by_test_id("channel-base-url")).to_have_value("https://api.moonshot.cn/anthropic")
