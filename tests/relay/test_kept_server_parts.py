# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Gemini 3's tool-combination mode (web search beside function tools, through the Gemini API) answers
with the search's own toolCall/toolResponse parts, which the next turn must send back as they came
(ai.google.dev/gemini-api/docs/tool-combination); no OpenAI-format client ever gets them. Through the
openai SDK on /v1/chat/completions, a two-turn tool loop, streamed and not, from a client that drops
the reasoning state and from one that echoes the whole message: the second turn reaches the strict
fake (which refuses a follow-up without them) with those parts and their signatures where they
stood; the client never sees them; two users with the same tool call id each get their own; every
charge is the usage the fake reported, to the unit."""
from __future__ import annotations

import base64
from typing import Any

import openai
import orjson
import pytest

from api import keys
from api.relay.kept_reasoning import GEMINI_FAMILY
from api.services import redis_keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401
from tests.relay.test_kept_reasoning import ANSWER, GEMINI, WEATHER, dropped_state, kept_more, priced, weather_script
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import consume_logs, sdk

TOOLS: list[Any] = [WEATHER, {"type": "web_search"}]
HIDDEN = ("toolCall", "toolResponse", "gemini_server_parts", "srv-1")


def signed(name: str) -> str:
    return base64.b64encode(name.encode()).decode()


@pytest.fixture
async def gemini(gateway, aiohttp_server) -> FakeGemini:
    fake = FakeGemini(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=GEMINI, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    await priced(gateway, GEMINI)
    return fake


def unseen(dumped: str) -> None:
    """What the client got carries none of the search's own parts."""
    assert not [word for word in HIDDEN if word in dumped], dumped


async def ask(client: openai.AsyncOpenAI, messages: list[Any], stream: bool) -> Any:
    """The answer's message (a stream's accumulated), every chunk or the whole answer checked unseen."""
    if stream:
        async with client.chat.completions.stream(model=GEMINI, messages=messages, tools=TOOLS) as events:
            async for event in events:
                if event.type == "chunk":
                    unseen(event.chunk.model_dump_json())
            final = await events.get_final_completion()
    else:
        final = await client.chat.completions.create(model=GEMINI, messages=messages, tools=TOOLS)
    unseen(final.model_dump_json())
    return final.choices[0]


async def first_turn(gateway, client: openai.AsyncOpenAI, question: str, stream: bool, user_id: int,
                     echo: str = "dropped") -> list[Any]:
    store = gateway.server.app[keys.STORE]
    before = await store.redis.zcard(redis_keys.user_key(store, user_id, "rsn"))
    messages: list[Any] = [{"role": "user", "content": question}]
    first = await ask(client, messages, stream)
    assert first.finish_reason == "tool_calls"
    await kept_more(gateway, user_id, before)
    (call,) = first.message.tool_calls
    echoed = dropped_state(first.message) if echo == "dropped" else first.message.model_dump(exclude_none=True)
    return [*messages, echoed, {"role": "tool", "tool_call_id": call.id, "content": "sunny, 24 °C"}]


def model_turn(fake: FakeGemini, request: int) -> list[dict[str, Any]]:
    (parts,) = [c["parts"] for c in fake.seen[request]["body"]["contents"] if c["role"] == "model"]
    return parts


def replayed(search: str, call: str) -> list[dict[str, Any]]:
    """The first answer's model turn as the next request must carry it: the search's parts first (where
    the fake put them), then the function call, each with the signature it was issued."""
    search_run = {"id": "srv-1", "toolType": "GOOGLE_SEARCH_WEB"}
    return [{"toolCall": {**search_run, "args": {"queries": ["hello"]}}, "thoughtSignature": signed(search)},
            {"toolResponse": {**search_run, "response": {"results": [{"url": "https://example.org/hello"}]}}},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": signed(call)}]


async def assert_charged(gateway, user, requests: int) -> None:
    """Each request charged the usage the fake reported (17 prompt, 8 output tokens), to the unit."""
    await drain(gateway)
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], GEMINI)
    logs = await consume_logs(user)
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [
        (GEMINI, 17, 8, pricing.settle_quota(price, 17, 8))] * requests


@pytest.mark.parametrize("echo", ["dropped", "whole"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_second_turn_carries_the_search_parts(gateway, gemini: FakeGemini, stream: bool, echo: str) -> None:
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, "Weather in Paris?", stream, user.id, echo)
        second = await ask(client, messages, stream)
    assert second.message.content == ANSWER
    assert [s["body"]["toolConfig"] for s in gemini.seen] == [{"includeServerSideToolInvocations": True}] * 2
    assert model_turn(gemini, 1) == replayed("fake-gemini-search-1", "fake-gemini-thought-0")
    await assert_charged(gateway, user, 2)


async def test_two_users_with_the_same_tool_call_id_each_get_their_own(gateway, gemini: FakeGemini) -> None:
    alice, bob = await rich_user("alice"), await rich_user("bob")
    alice_key, bob_key = await make_key(alice), await make_key(bob)
    async with sdk(gateway, alice_key) as for_alice, sdk(gateway, bob_key) as for_bob:
        alice_turns = await first_turn(gateway, for_alice, "Alice asks: Paris?", False, alice.id)
        bob_turns = await first_turn(gateway, for_bob, "Bob asks: Paris?", True, bob.id)
        assert alice_turns[1]["tool_calls"][0]["id"] == bob_turns[1]["tool_calls"][0]["id"]
        await ask(for_bob, bob_turns, False)
        await ask(for_alice, alice_turns, True)
    # issued in order: Alice's call 0 and search 1, Bob's call 2 and search 3
    assert model_turn(gemini, 2) == replayed("fake-gemini-search-3", "fake-gemini-thought-2")
    assert model_turn(gemini, 3) == replayed("fake-gemini-search-1", "fake-gemini-thought-0")
    await assert_charged(gateway, alice, 2)
    await assert_charged(gateway, bob, 2)


async def test_without_the_kept_parts_the_follow_up_is_refused(gateway, gemini: FakeGemini) -> None:
    """What the kept parts spare: the fake refuses a follow-up turn without them, in Google's shape,
    citing the page; the kept signatures alone are not enough."""
    user = await rich_user()
    token = await make_key(user)
    store = gateway.server.app[keys.STORE]
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, "Weather?", False, user.id)
        (key,) = [k async for k in store.redis.scan_iter(
            match=redis_keys.user_key(store, user.id, "rsn", GEMINI_FAMILY, "*"))]
        call_id = messages[1]["tool_calls"][0]["id"]
        await store.redis.set(key, orjson.dumps({"calls": {call_id: signed("fake-gemini-thought-0")}}))
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model=GEMINI, messages=messages, tools=TOOLS)
    assert "lacks the server-side toolCall, toolResponse parts" in refused.value.message
    assert "ai.google.dev/gemini-api/docs/tool-combination" in refused.value.message
    assert [p for p in model_turn(gemini, 1) if "toolCall" in p or "toolResponse" in p] == []
