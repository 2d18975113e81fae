"""GET /api/pricing: models of enabled channels with their prices, cached until channels or prices change."""
from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from api import keys
from models import Ability, Channel
from models.enums import ChannelStatus
from tests.helpers import ApiClient, both_databases, eventually, make_user


async def channel_with(models: list[str], groups: list[str], status: ChannelStatus = ChannelStatus.ENABLED,
                       ability_enabled: bool = True) -> Channel:
    channel = await Channel.create(name="c", key="sk-upstream", status=int(status), models=",".join(models),
                                   group=",".join(groups))
    await Ability.bulk_create([Ability(group=g, model=m, channel_id=channel.id, enabled=ability_enabled)
                               for m in models for g in groups])
    return channel


@pytest.fixture
async def catalogue() -> None:
    await channel_with(["gpt-4o", "claude-3-haiku-20240307", "dall-e-3"], ["default"])
    await channel_with(["gpt-4o", "my-unpriced-model"], ["vip", "default"])
    await channel_with(["gpt-4"], ["default"], status=ChannelStatus.AUTO_DISABLED)
    await channel_with(["o1"], ["default"], ability_enabled=False)


def by_name(body: dict) -> dict[str, dict]:
    return {e["model_name"]: e for e in body["data"]}


@both_databases
async def test_public_pricing_lists_models_of_enabled_channels(anon: ApiClient, catalogue) -> None:
    body = await anon.get("/api/pricing")
    assert body["success"] is True
    assert [e["model_name"] for e in body["data"]] == ["gpt-4o", "claude-3-haiku-20240307", "dall-e-3"]
    entries = by_name(body)
    assert entries["gpt-4o"] == {"model_name": "gpt-4o", "quota_type": 0, "model_ratio": 2.5,
                                 "completion_ratio": 4.0, "model_price": 0.0,
                                 "enable_groups": ["default", "vip"], "owner_by": "",
                                 "cache_ratio": 0.5, "cache_creation_ratio": None, "cache_creation_1h_ratio": None}
    claude = entries["claude-3-haiku-20240307"]
    assert (claude["completion_ratio"], claude["cache_ratio"], claude["cache_creation_ratio"]) == (5.0, 0.1, 1.25)
    assert claude["cache_creation_1h_ratio"] == 2  # a one-hour write: 2 × input, as Anthropic bills it
    assert entries["dall-e-3"]["cache_ratio"] is None and entries["dall-e-3"]["cache_creation_1h_ratio"] is None
    assert entries["dall-e-3"]["quota_type"] == 1 and entries["dall-e-3"]["model_price"] == 0.04
    assert body["group_ratio"] == {"default": 1, "vip": 1, "svip": 1}
    assert body["user_group"] is None and "default" in body["usable_group"]


async def test_options_override_prices_and_groups(client, root: ApiClient, anon: ApiClient, catalogue) -> None:
    await root.put("/api/option/", {"key": "ModelRatio", "value": '{"my-unpriced-model": 3, "gpt-4o": 2}'})
    await root.put("/api/option/", {"key": "CompletionRatio", "value": '{"gpt-4o": 1.5}'})
    await root.put("/api/option/", {"key": "ModelPrice", "value": '{"claude-3-haiku-20240307": 0.01}'})
    await root.put("/api/option/", {"key": "GroupRatio", "value": '{"default": 1, "vip": 0.5}'})
    await root.put("/api/option/", {"key": "CacheRatio", "value": '{"gpt-4o": 0.25}'})
    bad = await root.put("/api/option/", {"key": "CreateCacheRatio", "value": '{"gpt-4o": -1}'})
    assert bad["success"] is False  # a negative ratio is refused, nothing changed
    bad = await root.put("/api/option/", {"key": "CreateCacheRatio1h", "value": '{"gpt-4o": "2"}'})
    assert bad["success"] is False  # a ratio is a number
    await root.put("/api/option/", {"key": "CreateCacheRatio1h", "value": '{"gpt-4o": 1.5}'})

    async def updated() -> dict | None:
        body = await anon.get("/api/pricing")
        entries = by_name(body)
        done = "my-unpriced-model" in entries and entries["gpt-4o"]["model_ratio"] == 2
        cached = entries["gpt-4o"]["cache_ratio"] == 0.25 and entries["gpt-4o"]["cache_creation_1h_ratio"] == 1.5
        return body if done and cached else None

    body = await eventually(updated)
    entries = by_name(body)
    assert entries["gpt-4o"]["completion_ratio"] == 1.5
    assert (entries["gpt-4o"]["cache_ratio"], entries["gpt-4o"]["cache_creation_ratio"]) == (0.25, None)
    assert entries["gpt-4o"]["cache_creation_1h_ratio"] == 1.5  # its own entry, without a five-minute one
    assert entries["my-unpriced-model"]["model_ratio"] == 3 and entries["my-unpriced-model"]["enable_groups"] == [
        "default", "vip"]
    claude = entries["claude-3-haiku-20240307"]
    assert claude["quota_type"] == 1 and claude["model_price"] == 0.01
    assert body["group_ratio"] == {"default": 1, "vip": 0.5}


async def test_logged_in_caller_gets_their_group(client, anon: ApiClient, catalogue) -> None:
    await make_user("vera", group="svip")
    browser = TestClient(client.server)
    try:
        vera = ApiClient(browser)
        await vera.login("vera", "password123")
        body = await vera.get("/api/pricing")
        assert body["user_group"] == "svip" and "svip" in body["usable_group"]
        # A stale user header is just a visitor on this public route.
        body = await vera.get("/api/pricing", headers={"New-Api-User": "999999"})
        assert body["success"] and body["user_group"] is None
    finally:
        await browser.session.close()  # its cookie jar only; the server belongs to `client`


async def test_cached_until_a_channel_event(client, anon: ApiClient, catalogue) -> None:
    first = await anon.get("/api/pricing")
    await channel_with(["gpt-4o-mini"], ["default"])
    assert (await anon.get("/api/pricing"))["data"] == first["data"]  # served from the cache
    await client.app[keys.EVENTS].publish("channel", id=0)

    async def has_new_model() -> bool:
        return "gpt-4o-mini" in by_name(await anon.get("/api/pricing"))

    await eventually(has_new_model)
    await Channel.filter(models="gpt-4o-mini").update(status=int(ChannelStatus.MANUALLY_DISABLED))
    await client.app[keys.EVENTS].publish("channel", id=0)

    async def gone() -> bool:
        return "gpt-4o-mini" not in by_name(await anon.get("/api/pricing"))

    await eventually(gone)
