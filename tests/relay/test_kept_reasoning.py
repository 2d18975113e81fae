# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The reasoning state the gateway keeps for clients that echo an assistant turn's `reasoning_content`
but neither `thinking_blocks` nor `extra_content` (opencode's and Qwen Code's OpenAI-compatible
providers, `llm`, LangChain's ChatOpenAI): through the openai SDK, a two-turn tool loop to Claude
Opus 5.5 (which thinks every turn and refuses a tool turn without its thinking) and to Gemini 3 (the
fake refuses the placeholder signature for a call it signed) carries the real state on the second
turn; two users with the same tool call ids each get their own; a second API process finds it."""
from __future__ import annotations

import base64
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from api import keys
from api.relay.kept_reasoning import CLAUDE_FAMILY, KeptReasoning
from api.services import redis_keys
from api.upstream.catalogue import ChannelType
from tests.helpers import eventually
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, rich_user  # noqa: F401
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import sign
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import sdk

CLAUDE, GEMINI = "claude-opus-5-5", "gemini-3-pro-preview"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
ANSWER = "It is sunny in Paris."


def thought_for(question: str) -> str:
    return f"The user asks: {question}. I should look the weather up."


def weather_script(view: AgentView) -> Turn:
    """Calls the tool first (always the same id: two users' loops share their tool call ids), then answers."""
    if view.tool_results:
        return Turn(text=ANSWER if "sunny" in view.tool_results[-1] else "no result", thinking="Sunny it is.")
    return Turn(thinking=thought_for(view.user_texts[-1]),
                tool={"id": "toolu_01weather", "name": "get_weather", "input": {"city": "Paris"}})


async def priced(gateway, model: str) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for name, value in (("ModelRatio", 1.0), ("CompletionRatio", 2)):
        await options.update(name, orjson.dumps({**(options.get_json(name) or {}), model: value}).decode())


@pytest.fixture
async def claude(gateway, aiohttp_server) -> FakeClaude:
    fake = FakeClaude(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=CLAUDE, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, CLAUDE)
    return fake


@pytest.fixture
async def gemini(gateway, aiohttp_server) -> FakeGemini:
    fake = FakeGemini(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=GEMINI, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    await priced(gateway, GEMINI)
    return fake


def dropped_state(message: Any) -> dict[str, Any]:
    """The assistant turn as these clients echo it: content, tool calls, reasoning_content; nothing else."""
    echoed: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    reasoning = (message.model_extra or {}).get("reasoning_content")
    if reasoning:
        echoed["reasoning_content"] = reasoning
    echoed["tool_calls"] = [{"id": c.id, "type": "function",
                             "function": {"name": c.function.name, "arguments": c.function.arguments}}
                            for c in message.tool_calls]
    return echoed


def index_of(gateway, user_id: int) -> tuple[Any, str]:
    store = gateway.server.app[keys.STORE]
    return store, redis_keys.user_key(store, user_id, "rsn")


async def kept_more(gateway, user_id: int, before: int) -> None:
    """Until the user has more kept states than `before` (they are written once the answer is settled)."""
    store, index = index_of(gateway, user_id)

    async def there() -> bool:
        return await store.redis.zcard(index) > before
    await eventually(there, timeout=10, interval=0.01)


async def first_turn(gateway, client: openai.AsyncOpenAI, model: str, question: str, stream: bool,
                     user_id: int) -> list[Any]:
    store, index = index_of(gateway, user_id)
    before = await store.redis.zcard(index)
    messages: list[Any] = [{"role": "user", "content": question}]
    if stream:
        async with client.chat.completions.stream(model=model, messages=messages, tools=[WEATHER]) as events:
            first = (await events.get_final_completion()).choices[0]
    else:
        first = (await client.chat.completions.create(model=model, messages=messages, tools=[WEATHER])).choices[0]
    assert first.finish_reason == "tool_calls"
    await kept_more(gateway, user_id, before)
    (call,) = first.message.tool_calls
    return [*messages, dropped_state(first.message), {"role": "tool", "tool_call_id": call.id,
                                                      "content": "sunny, 24 °C"}]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_claude_opus_5_5_second_turn_carries_the_kept_thinking(gateway, claude: FakeClaude,
                                                                     stream: bool) -> None:
    user = await rich_user()
    token = await make_key(user)
    question = "What is the weather in Paris?"
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, CLAUDE, question, stream, user.id)
        assert messages[1]["reasoning_content"] == thought_for(question) and "thinking_blocks" not in messages[1]
        second = await client.chat.completions.create(model=CLAUDE, messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == ANSWER
    replayed = claude.seen[1]["body"]["messages"][1]["content"]
    thought = thought_for(question)
    assert replayed[0] == {"type": "thinking", "thinking": thought, "signature": sign(thought)}
    assert replayed[-1]["type"] == "tool_use" and replayed[-1]["id"] == "toolu_01weather"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_kept_state_rides_on_the_admission_and_the_settlement(gateway, claude: FakeClaude, monkeypatch,
                                                                        stream: bool) -> None:
    """No Redis call of its own: the lookup comes back with the admission script and the write goes
    with the settlement script (the state's own calls are made to fail here)."""
    async def own_call(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a Redis call of the kept state's own")
    monkeypatch.setattr(KeptReasoning, "fetch", own_call)
    monkeypatch.setattr(KeptReasoning, "keep", own_call)
    user = await rich_user()
    token = await make_key(user)
    question = "What is the weather in Lyon?"
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, CLAUDE, question, stream, user.id)
        second = await client.chat.completions.create(model=CLAUDE, messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == ANSWER
    thought = thought_for(question)
    assert claude.seen[1]["body"]["messages"][1]["content"][0] == {"type": "thinking", "thinking": thought,
                                                                   "signature": sign(thought)}


async def test_claude_tool_turn_without_kept_thinking_goes_as_text(gateway, claude: FakeClaude) -> None:
    """What the kept state spares (the fake refuses a tool turn without its thinking, as Opus 5.5
    does): the state gone, the open tool turn and its result go to Claude as text, never with forged
    thinking, and the second turn is answered."""
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, CLAUDE, "Weather?", False, user.id)
        store = gateway.server.app[keys.STORE]
        await store.redis.delete(*[k async for k in store.redis.scan_iter(
            match=redis_keys.user_key(store, user.id, "rsn", CLAUDE_FAMILY, "*"))])
        second = await client.chat.completions.create(model=CLAUDE, messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == ANSWER
    sent = claude.seen[1]["body"]["messages"]
    assert [b["type"] for m in sent for b in m["content"]] == ["text", "text", "text"]
    assert sent[1]["content"][0]["text"].startswith("[called the tool get_weather with {")
    assert sent[2]["content"][0]["text"].startswith("[the tool get_weather returned: ")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_gemini_3_second_turn_carries_the_real_signature(gateway, gemini: FakeGemini, stream: bool) -> None:
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, GEMINI, "Weather in Paris?", stream, user.id)
        second = await client.chat.completions.create(model=GEMINI, messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == ANSWER
    calls = [p for c in gemini.seen[1]["body"]["contents"] if c["role"] == "model" for p in c["parts"]
             if "functionCall" in p]
    assert calls == [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                      "thoughtSignature": base64.b64encode(b"fake-gemini-thought-0").decode()}]


async def test_two_users_with_the_same_tool_call_ids_each_get_their_own(gateway, claude: FakeClaude,
                                                                        gemini: FakeGemini) -> None:
    alice, bob = await rich_user("alice"), await rich_user("bob")
    alice_key, bob_key = await make_key(alice), await make_key(bob)
    for model in (CLAUDE, GEMINI):
        async with sdk(gateway, alice_key) as for_alice, sdk(gateway, bob_key) as for_bob:
            alice_turns = await first_turn(gateway, for_alice, model, "Alice asks: Paris?", False, alice.id)
            bob_turns = await first_turn(gateway, for_bob, model, "Bob asks: Paris?", False, bob.id)
            assert alice_turns[1]["tool_calls"][0]["id"] == bob_turns[1]["tool_calls"][0]["id"]
            await for_bob.chat.completions.create(model=model, messages=bob_turns, tools=[WEATHER])
            await for_alice.chat.completions.create(model=model, messages=alice_turns, tools=[WEATHER])
    bob_thought, alice_thought = thought_for("Bob asks: Paris?"), thought_for("Alice asks: Paris?")
    assert [s["body"]["messages"][1]["content"][0].get("thinking") if len(s["body"]["messages"]) > 1 else None
            for s in claude.seen] == [
        None, None, bob_thought, alice_thought]
    signatures = [[p.get("thoughtSignature") for c in s["body"]["contents"] for p in c["parts"] if "functionCall" in p]
                  for s in gemini.seen]
    first_alice, first_bob = (base64.b64encode(f"fake-gemini-thought-{n}".encode()).decode() for n in (0, 1))
    assert signatures == [[], [], [first_bob], [first_alice]]


@pytest.mark.slow
async def test_a_second_api_process_finds_the_kept_state(gateway, claude: FakeClaude, spawn, settings) -> None:
    from tests.relay.test_pipeline_scale import start_api

    user = await rich_user()
    token = await make_key(user)
    other = await start_api(spawn, settings)
    async with sdk(gateway, token) as client:
        messages = await first_turn(gateway, client, CLAUDE, "Paris?", False, user.id)
    body = {"model": CLAUDE, "messages": messages, "tools": [WEATHER]}
    async with aiohttp.ClientSession(headers=headers_for(token)) as session, \
            session.post(other + "/v1/chat/completions", json=body) as resp:
        answer = await resp.json()
    assert resp.status == 200, answer
    assert answer["choices"][0]["message"]["content"] == ANSWER
    assert claude.seen[1]["body"]["messages"][1]["content"][0]["signature"] == sign(thought_for("Paris?"))
