"""Channel tests, balances and provider model lists through the API, against local fake providers."""
from __future__ import annotations

import pytest

from api import keys
from api.services import redis_keys
from api.upstream.catalogue import ChannelType
from models import Channel
from models.enums import ChannelStatus
from tests.fakes.upstreams import INVALID_KEY_ERROR, PROVIDER_MODELS, REQUESTS, upstream_app
from tests.helpers import ApiClient, both_databases


@pytest.fixture
async def provider(aiohttp_server):
    return await aiohttp_server(upstream_app())


def base(provider, kind: str) -> str:
    return str(provider.make_url(f"/{kind}"))


async def make_channel(provider, kind: str = "healthy", **fields) -> Channel:
    defaults = {"name": kind, "type": int(ChannelType.OPENAI), "key": f"sk-{kind}-key", "models": "gpt-4o-mini,gpt-4o",
                "base_url": base(provider, kind)}
    return await Channel.create(**{**defaults, **fields})


def chats(provider) -> list:
    return [r for r in provider.app[REQUESTS] if r[1] == "v1/chat/completions"]


@both_databases
async def test_one_channel_test_succeeds_and_records_timing(root: ApiClient, provider) -> None:
    channel = await make_channel(provider, model_mapping='{"gpt-4o-mini":"gpt-4o-mini-2024-07-18"}')
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"] is True and body["data"] is None
    assert isinstance(body["time"], float) and 0 <= body["time"] < 10
    assert body["message"].startswith("Channel healthy tested successfully in ")
    stored = await Channel.get(id=channel.id)
    assert stored.test_time > 0 and stored.response_time == pytest.approx(body["time"] * 1000, abs=2)
    # The first model, through the mapping, with the channel's key; a minimal request.
    kind, _, headers, sent = chats(provider)[-1]
    assert sent["model"] == "gpt-4o-mini-2024-07-18" and sent["max_tokens"] == 1
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert headers["Authorization"] == "Bearer sk-healthy-key"
    # Model from the query (mapped when the mapping names it), else test_model.
    await root.get(f"/api/channel/test/{channel.id}?model=gpt-4o")
    assert chats(provider)[-1][3]["model"] == "gpt-4o"
    await Channel.filter(id=channel.id).update(test_model="o1-mini")
    await root.get(f"/api/channel/test/{channel.id}")
    sent = chats(provider)[-1][3]
    assert sent["model"] == "o1-mini" and "max_tokens" not in sent and sent["max_completion_tokens"] == 16


async def test_azure_test_goes_through_its_adaptor(root: ApiClient, provider) -> None:
    channel = await make_channel(provider, type=int(ChannelType.AZURE), base_url=str(provider.make_url("")),
                                 other="2024-02-01", models="gpt-3.5-turbo")
    # The Azure URL is /openai/deployments/...: not served by the fake, so the test fails, but the
    # request shows the adaptor's URL and header.
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"] is False and "time" in body
    seen = [r for r in provider.app[REQUESTS] if r[0] == "openai"]
    assert seen and seen[-1][1] == "deployments/gpt-35-turbo/chat/completions"
    assert seen[-1][2]["api-key"] == "sk-healthy-key"


async def test_invalid_key_fails_with_the_upstream_message_and_keeps_status(root: ApiClient, provider) -> None:
    await root.put("/api/option/", {"key": "AutomaticDisableChannelEnabled", "value": "true"})
    channel = await make_channel(provider, "invalid")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"] is False
    assert body["message"] == INVALID_KEY_ERROR["error"]["message"]
    assert body["time"] >= 0
    stored = await Channel.get(id=channel.id)
    assert stored.status == ChannelStatus.ENABLED  # a manual test of one channel never disables it
    assert stored.test_time > 0


async def test_hanging_provider_times_out(root: ApiClient, provider) -> None:
    await root.put("/api/option/", {"key": "ChannelTestTimeoutSeconds", "value": "1"})
    channel = await make_channel(provider, "hang")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body == {"success": False, "message": "No answer within 1 s", "data": None, "time": 1.0}
    assert (await Channel.get(id=channel.id)).response_time == 1000
    body = await root.get(f"/api/channel/test/{channel.id}", headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "1 秒内无响应"


async def test_unreachable_and_broken_providers(root: ApiClient, provider) -> None:
    gone = await make_channel(provider, base_url="http://127.0.0.1:9")
    body = await root.get(f"/api/channel/test/{gone.id}")
    assert body["success"] is False
    assert body["message"] == ("Request to the upstream failed: the upstream refused the connection (127.0.0.1:9): "
                               "nothing listens there")
    broken = await make_channel(provider, "broken")
    body = await root.get(f"/api/channel/test/{broken.id}")
    assert body["success"] is False and body["message"] == "The upstream answered without choices or usage"


async def test_test_refusals(client, root: ApiClient, provider) -> None:
    mj = await make_channel(provider, type=int(ChannelType.MIDJOURNEY))
    body = await root.get(f"/api/channel/test/{mj.id}")
    assert body["message"] == "Testing is not supported for this channel type: Midjourney Proxy (2)"
    assert (await root.get("/api/channel/test/999999"))["message"] == "Channel not found, refresh the page"
    # Single flight per channel: a test of the same channel running elsewhere.
    channel = await make_channel(provider)
    store = client.app[keys.STORE]
    await store.redis.set(redis_keys.lock(store, "channel_test", channel.id), "other", ex=30)
    assert (await root.get(f"/api/channel/test/{channel.id}"))["message"] == "A test of this channel is already running"
    assert not chats(provider)


async def test_test_all_answers_at_once_and_is_single_flight(client, root: ApiClient) -> None:
    body = await root.get("/api/channel/test")
    assert body == {"success": True, "message": "Testing all channels has started; refresh later to see the results",
                    "data": None}
    again = await root.get("/api/channel/test")
    assert again == {"success": False, "message": "A test of all channels is already running", "data": None}
    assert (await root.get("/api/channel/test", headers={"Accept-Language": "zh"}))["message"] == "测试已在运行中"
    store = client.app[keys.STORE]
    assert await store.redis.exists(redis_keys.lock(store, "channel_test_all"))
    # Same for the balances of all channels.
    assert (await root.get("/api/channel/update_balance"))["success"]
    assert (await root.get("/api/channel/update_balance"))["message"] == \
        "A balance update of all channels is already running"


@both_databases
async def test_balance_of_one_channel(root: ApiClient, provider) -> None:
    openai = await make_channel(provider)
    body = await root.get(f"/api/channel/update_balance/{openai.id}/")
    assert body["success"] and body["data"] == 74.875 and body["balance"] == 74.875
    stored = await Channel.get(id=openai.id)
    assert stored.balance == 74.875 and stored.balance_updated_time > 0
    usage = [r for r in provider.app[REQUESTS] if r[1] == "v1/dashboard/billing/usage"]
    assert usage and usage[-1][2]["Authorization"] == "Bearer sk-healthy-key"
    silicon = await make_channel(provider, type=int(ChannelType.SILICONFLOW))
    assert (await root.get(f"/api/channel/update_balance/{silicon.id}/"))["data"] == 12.34
    custom = await make_channel(provider, type=int(ChannelType.CUSTOM),
                                base_url=str(provider.make_url("/v1/chat/completions")))
    # A custom channel's billing lives at the origin of its endpoint URL (the fake serves /v1/... at /{kind}).
    body = await root.get(f"/api/channel/update_balance/{custom.id}/")
    assert body["success"] is False and body["message"].startswith("Balance query failed: status 404")


async def test_balance_refusals(root: ApiClient, provider) -> None:
    claude = await make_channel(provider, type=int(ChannelType.ANTHROPIC))
    body = await root.get(f"/api/channel/update_balance/{claude.id}/")
    assert body == {"success": False, "data": None,
                    "message": "Balance queries are not supported for this channel type (14)"}
    invalid = await make_channel(provider, "invalid")
    body = await root.get(f"/api/channel/update_balance/{invalid.id}/")
    assert body["message"] == "Balance query failed: status 401: " + INVALID_KEY_ERROR["error"]["message"]
    assert (await Channel.get(id=invalid.id)).balance_updated_time == 0
    assert (await root.get("/api/channel/update_balance/999999/"))["message"] == "Channel not found, refresh the page"


async def test_fetch_models(root: ApiClient, provider) -> None:
    channel = await make_channel(provider)
    body = await root.get(f"/api/channel/fetch_models/{channel.id}")
    assert body == {"success": True, "message": "", "data": list(PROVIDER_MODELS)}
    claude = await make_channel(provider, type=int(ChannelType.ANTHROPIC))
    assert (await root.get(f"/api/channel/fetch_models/{claude.id}"))["message"] == \
        "Only the OpenAI interface format is supported"
    invalid = await make_channel(provider, "invalid")
    body = await root.get(f"/api/channel/fetch_models/{invalid.id}")
    assert body["success"] is False and body["message"].startswith("Failed to get the model list: status 401")
    blank = await make_channel(provider, key="")
    assert (await root.get(f"/api/channel/fetch_models/{blank.id}"))["message"] == "Please fill in the key"



async def test_fetch_models_for_a_channel_not_saved_yet(root: ApiClient, provider) -> None:
    """The form's type, base URL and key: the server asks the provider (which sends no CORS headers)."""
    body = await root.post("/api/channel/fetch_models", {"type": int(ChannelType.OPENAI),
                                                         "base_url": base(provider, "healthy") + "/",
                                                         "key": "sk-healthy-key\nsk-second-key"})
    assert body == {"success": True, "message": "", "data": list(PROVIDER_MODELS)}
    assert (await root.post("/api/channel/fetch_models", {"type": int(ChannelType.ANTHROPIC), "base_url": "",
                                                          "key": "k"}))["message"] == \
        "Only the OpenAI interface format is supported"
    assert (await root.post("/api/channel/fetch_models", {"type": 1, "base_url": base(provider, "healthy"),
                                                          "key": "  "}))["message"] == "Please fill in the key"
    body = await root.post("/api/channel/fetch_models", {"type": 1, "base_url": base(provider, "invalid"),
                                                         "key": "sk-invalid-key"})
    assert body["success"] is False and body["message"].startswith("Failed to get the model list: status 401")
    assert "sk-invalid-key" not in body["message"]
    assert (await root.post("/api/channel/fetch_models", {"type": "1"}))["success"] is False
    assert not await Channel.exists()  # nothing saved
