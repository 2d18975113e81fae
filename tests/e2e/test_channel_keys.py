"""Root creates a multi-key channel in the browser, opens its keys panel and disables one key."""
from __future__ import annotations

import re

from playwright.async_api import expect

from models import Channel, keyring
from tests.e2e.conftest import shot
from tests.e2e.ui import database, login

KEYS = [f"sk-e2e-pool-{n}-{'abcdefghijkl' * 2}" for n in range(3)]  # long enough to be masked


async def _pool(settings) -> tuple[Channel, keyring.Keyring]:
    async with database(settings):
        [channel] = await Channel.all()
    return channel, keyring.load(channel.key, channel.channel_info)


async def test_create_a_multi_key_channel_and_disable_one_key(page, settings) -> None:
    await login(page, "root", "123456")
    await page.goto("/channel")

    # Create: one channel holding the three keys
    await page.get_by_test_id("channel-toolbar").get_by_role("button", name="Add channel").click()
    drawer = page.get_by_test_id("channel-drawer")
    await drawer.get_by_test_id("channel-name").fill("pool")
    await drawer.get_by_role("switch", name="Multi-key channel").check()
    await expect(drawer.get_by_test_id("channel-key-format")).to_contain_text(
        "one key per line; all go into this channel")
    await drawer.get_by_test_id("channel-key").fill("\n".join(KEYS))
    await expect(drawer.get_by_test_id("channel-key-mode")).to_have_value("affinity")
    await drawer.get_by_test_id("channel-tag").fill("team-a")
    await drawer.get_by_label("Custom model names").fill("gpt-4o-mini")
    await drawer.get_by_role("button", name="Add", exact=True).click()
    await drawer.get_by_role("button", name="Submit").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Channel created!")
    channel, ring = await _pool(settings)
    assert (channel.name, channel.tag, ring.multi, ring.mode, ring.keys) == ("pool", "team-a", True, "affinity", KEYS)
    row = page.get_by_test_id(f"channel-row-{channel.id}")
    await expect(row.get_by_test_id("channel-key-count")).to_have_text("3 keys")
    await expect(row.get_by_test_id("channel-tag")).to_have_text("team-a")

    # The keys panel, from the channel's form: the keys masked, all enabled
    await row.get_by_role("button", name="Edit").click()
    drawer = page.get_by_test_id("channel-drawer")
    await expect(drawer.get_by_test_id("channel-key-count")).to_have_text("This channel holds 3 keys.")
    await drawer.get_by_role("button", name="Manage keys").click()
    panel = page.get_by_test_id("keys-panel")
    await expect(panel.locator("tbody tr[data-testid^='key-row-']")).to_have_count(3)
    await expect(panel.get_by_test_id("keys-counts")).to_contain_text("Enabled: 3")
    second = panel.get_by_test_id("key-row-1")
    await expect(second.get_by_test_id("key-status")).to_have_text("Enabled")
    await expect(second.get_by_test_id("key-preview")).to_have_text(f"{KEYS[1][:6]}…{KEYS[1][-4:]}")

    # Disable the second key: its status, why and since when
    await second.get_by_role("button", name="Disable").click()
    await expect(page.get_by_test_id("toaster")).to_contain_text("Key #2 disabled")
    await expect(second.get_by_test_id("key-status")).to_have_text("Disabled by hand")
    await expect(second.get_by_test_id("key-disabled-reason")).to_have_text(
        re.compile(r"^No reason given \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$"))
    await expect(panel.get_by_test_id("keys-counts")).to_contain_text("Enabled: 2")
    await expect(panel.get_by_test_id("keys-counts")).to_contain_text("Disabled by hand: 1")
    await expect(panel.get_by_test_id("key-row-0").get_by_test_id("key-status")).to_have_text("Enabled")
    await shot(page, "channel-keys")
    _, ring = await _pool(settings)
    assert [ring.status(i) for i in range(3)] == [1, 2, 1]
    content = await page.content()
    assert not any(key in content for key in KEYS)

    # The filter shows the disabled key alone
    await panel.get_by_label("Key status").select_option("2")
    await expect(panel.locator("tbody tr[data-testid^='key-row-']")).to_have_count(1)
    await expect(panel.get_by_test_id("key-row-1")).to_be_visible()

    # Back to the list: the channel says one of its keys is disabled
    await panel.get_by_role("button", name="Close").first.click()
    await page.get_by_test_id("channel-drawer").get_by_role("button", name="Cancel").click()
    await expect(row.get_by_test_id("channel-key-count")).to_have_text("3 keys · 1 disabled")
