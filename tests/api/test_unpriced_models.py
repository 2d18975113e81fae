"""Models without a price, said where they are configured: the channel list and form, the pricing page
for administrators; and a channel's last failed test kept with its reason."""
from __future__ import annotations

import orjson
import pytest

from api import keys
from api.console.handlers.pricing import PricingCache
from models import Channel
from tests.api.test_pricing import channel_with
from tests.fakes.upstreams import INVALID_KEY_ERROR, upstream_app
from tests.helpers import ApiClient


@pytest.fixture
async def offered() -> None:
    await channel_with(["gpt-4o", "my-unpriced-model"], ["default", "vip"])
    await channel_with(["my-unpriced-model", "other-unpriced"], ["default"])


async def test_channel_pages_name_their_unpriced_models(root: ApiClient, offered) -> None:
    body = await root.get("/api/channel/?p=0&page_size=10")
    assert {i["models"]: i["unpriced_models"] for i in body["data"]["items"]} == {
        "gpt-4o,my-unpriced-model": ["my-unpriced-model"],
        "my-unpriced-model,other-unpriced": ["my-unpriced-model", "other-unpriced"]}
    found = await root.get("/api/channel/search?keyword=&model=gpt-4o&p=0&page_size=10")
    assert [i["unpriced_models"] for i in found["data"]["items"]] == [["my-unpriced-model"]]


async def test_the_form_asks_which_of_its_models_have_no_price(client, root: ApiClient, login_as) -> None:
    body = await root.post("/api/channel/unpriced", {"models": ["gpt-4o", " new-thing ", "dall-e-3", "new-thing"]})
    assert body == {"success": True, "message": "", "data": ["new-thing"]}
    assert (await root.post("/api/channel/unpriced", {"models": "gpt-4o"}))["success"] is False
    user, _ = await login_as("alice")
    assert (await user.post("/api/channel/unpriced", {"models": ["x"]}))["success"] is False


async def test_pricing_lists_unpriced_models_for_administrators_until_priced(
        client, root: ApiClient, anon: ApiClient, offered) -> None:
    assert "unpriced" not in await anon.get("/api/pricing")
    body = await root.get("/api/pricing")
    assert [(u["model_name"], [c["name"] for c in u["channels"]]) for u in body["unpriced"]] == [
        ("my-unpriced-model", ["c", "c"]), ("other-unpriced", ["c"])]
    assert "my-unpriced-model" not in {e["model_name"] for e in body["data"]}
    options = {o["key"]: o["value"] for o in (await root.get("/api/option/"))["data"]}
    ratios = {**orjson.loads(options["ModelRatio"]), "my-unpriced-model": 3}
    await root.put("/api/option/", {"key": "ModelRatio", "value": orjson.dumps(ratios).decode()})
    body = await root.get("/api/pricing")  # at once in this process (its event may come later)
    assert [u["model_name"] for u in body["unpriced"]] == ["other-unpriced"]
    assert "my-unpriced-model" in {e["model_name"] for e in body["data"]}


async def test_a_failed_test_is_kept_with_its_reason_until_one_succeeds(root: ApiClient, aiohttp_server) -> None:
    provider = await aiohttp_server(upstream_app())
    channel = await Channel.create(name="c", key="sk-x", models="gpt-4o", base_url=str(provider.make_url("/invalid")),
                                   other_info=orjson.dumps({"status_reason": "earlier", "status_time": 1}).decode())
    assert (await root.get(f"/api/channel/test/{channel.id}"))["success"] is False
    info = orjson.loads((await Channel.get(id=channel.id)).other_info)
    assert info["test_error"] == INVALID_KEY_ERROR["error"]["message"] and info["test_error_time"] > 0
    assert info["status_reason"] == "earlier"  # the automatic-disable reason stays
    await Channel.filter(id=channel.id).update(base_url=str(provider.make_url("/healthy")))
    assert (await root.get(f"/api/channel/test/{channel.id}"))["success"] is True
    assert orjson.loads((await Channel.get(id=channel.id)).other_info) == {"status_reason": "earlier", "status_time": 1}


class _NoEvents:
    """An event bus that never delivers (events arrive late, or not at all)."""

    def subscribe(self, kind: str, callback: object) -> None:
        pass


async def test_the_price_list_follows_this_process_price_options_without_their_event(client, offered) -> None:
    options = client.server.app[keys.OPTIONS]
    cache = PricingCache(_NoEvents())  # type: ignore[arg-type]
    assert "my-unpriced-model" not in {e["model_name"] for e in await cache.get(options)}
    ratios = {**orjson.loads(options.get("ModelRatio")), "my-unpriced-model": 3}
    await options.update("ModelRatio", orjson.dumps(ratios).decode())
    assert "my-unpriced-model" in {e["model_name"] for e in await cache.get(options)}


async def test_an_automatic_disable_keeps_the_last_tests_failure(client) -> None:
    from api.channels.admin import auto_disable

    failed = orjson.dumps({"test_error": "invalid key", "test_error_time": 5}).decode()
    channel = await Channel.create(name="c", key="sk-x", models="gpt-4o", other_info=failed)
    assert await auto_disable(channel.id, "status 401: invalid key", None)
    info = orjson.loads((await Channel.get(id=channel.id)).other_info)
    assert (info["test_error"], info["test_error_time"], info["status_reason"]) == (
        "invalid key", 5, "status 401: invalid key") and info["status_time"] > 0
