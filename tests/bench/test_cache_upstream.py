"""The prompt-caching fake of bench/agent_cache.py (bench/cache_upstream.py, bench/prompt_cache.py):
its cache arithmetic, per key and model, on a manual clock (nothing here waits or depends on timing)."""
from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bench.cache_upstream import Fake, Upstream, control_app, upstream_app
from bench.procs import free_port
from bench.prompt_cache import (
    BLOCK_TOKENS,
    MIN_CACHED_TOKENS,
    ManualClock,
    PromptCache,
    anthropic_prompt,
    openai_prompt,
)

TTL = 300.0


def words(tokens: int, seed: str) -> str:
    """Text of about `tokens` tokens (4 bytes each) that no other seed shares."""
    unit = f"{seed} lorem "
    return (unit * (tokens * 4 // len(unit) + 1))[:tokens * 4]


def chat_body(turns: list[str], system: str = "", model: str = "gpt-4o", **extra: Any) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}] if system else []
    for i, text in enumerate(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return {"model": model, "messages": messages, **extra}


def block_floor(tokens: int) -> int:
    return tokens // BLOCK_TOKENS * BLOCK_TOKENS


# -- the arithmetic, without HTTP -----------------------------------------------------------------

def test_openai_prompt_counts_four_bytes_a_token_and_caches_whole_blocks_from_1024() -> None:
    body = chat_body([words(3000, "a")])
    prompt = openai_prompt(body)
    size = sum(len(orjson.dumps(m, option=orjson.OPT_SORT_KEYS)) for m in body["messages"])
    assert prompt.tokens == -(-size // 4)
    assert [count for count, _ in prompt.writes] == list(range(MIN_CACHED_TOKENS, block_floor(prompt.tokens) + 1,
                                                               BLOCK_TOKENS))
    assert openai_prompt(chat_body([words(900, "short")])).writes == ()  # under 1024 tokens: never cached


def test_openai_second_turn_reads_the_first_turns_whole_blocks_on_the_same_key_only() -> None:
    clock = ManualClock()
    cache = PromptCache(TTL, clock)
    first = openai_prompt(chat_body([words(2000, "s1")], system=words(1500, "sys")))
    second = openai_prompt(chat_body([words(2000, "s1"), "ok", words(500, "more")], system=words(1500, "sys")))
    assert cache.use(("k1", "gpt-4o"), first).read == 0
    hit = cache.use(("k1", "gpt-4o"), second)
    # the common prefix ends inside the first turn's last message: whole blocks of it only
    assert hit.read % BLOCK_TOKENS == 0 and block_floor(first.tokens) - BLOCK_TOKENS <= hit.read <= first.tokens
    assert hit.creation == 0
    assert cache.use(("k2", "gpt-4o"), second).read == 0  # another key: its own cache
    assert cache.use(("k1", "gpt-4o-mini"), second).read == 0  # another model too


def test_entries_expire_after_the_ttl_and_a_hit_refreshes_them() -> None:
    clock = ManualClock()
    cache = PromptCache(TTL, clock)
    prompt = openai_prompt(chat_body([words(4000, "t")]))
    cache.use(("k", "m"), prompt)
    clock.advance(TTL - 1)
    assert cache.use(("k", "m"), prompt).read == block_floor(prompt.tokens)  # alive, and refreshed now
    clock.advance(TTL - 1)
    assert cache.use(("k", "m"), prompt).read == block_floor(prompt.tokens)  # alive thanks to the refresh
    clock.advance(TTL + 1)
    assert cache.use(("k", "m"), prompt).read == 0  # expired
    cache.purge()
    assert cache.entries(("k", "m")) == len(prompt.writes)  # the miss wrote them again


def anthropic_body(turns: list[str], mark_last: bool = True) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, text in enumerate(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": text}]})
    if mark_last:
        messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "claude-sonnet-4-20250514", "max_tokens": 1000,
            "system": [{"type": "text", "text": words(1200, "claude-sys"), "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "read", "description": words(300, "tool"), "input_schema": {"type": "object"}}],
            "messages": messages}


def test_anthropic_writes_at_breakpoints_and_splits_the_usage() -> None:
    cache = PromptCache(TTL, ManualClock())
    first = anthropic_prompt(anthropic_body([words(2000, "c1")]))
    hit = cache.use(("k", "claude"), first)
    assert hit.read == 0 and hit.creation == first.tokens  # the whole prompt written (its last block is marked)
    second_body = anthropic_body([words(2000, "c1"), "done", words(800, "c2")])
    second = anthropic_prompt(second_body)
    hit = cache.use(("k", "claude"), second)
    assert hit.read == first.tokens  # the marker moved to the new last block: the old prefix is still read
    assert hit.creation == second.tokens - first.tokens
    unmarked = anthropic_prompt(anthropic_body([words(2000, "c3")], mark_last=False))
    system_only = cache.use(("k", "claude"), unmarked)
    assert 0 < system_only.read < 1600 and system_only.creation == 0  # tools + system: shared by every session


def test_anthropic_caches_nothing_without_a_breakpoint() -> None:
    body = anthropic_body([words(3000, "x")], mark_last=False)
    body["system"] = words(1200, "plain")
    assert anthropic_prompt(body).writes == () and anthropic_prompt(body).creation_upto == 0


# -- the HTTP fake ------------------------------------------------------------------------------------

@pytest.fixture
async def fake_servers():
    clock = ManualClock()
    fake = Fake(TTL, clock, reply_tokens=50)
    clients: dict[str, TestClient] = {}
    for name in ("o1", "o2"):
        upstream = fake.upstreams[name] = Upstream(name, 0)
        clients[name] = TestClient(TestServer(upstream_app(fake, upstream)))
    clients["control"] = TestClient(TestServer(control_app(fake)))
    for client in clients.values():
        await client.start_server()
    yield fake, clock, clients
    for client in clients.values():
        await client.close()


async def post_chat(client: TestClient, key: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = await client.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"})
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_http_usage_counters_and_the_ideal(fake_servers) -> None:
    fake, clock, clients = fake_servers
    turn1 = chat_body([words(2500, "h1")], system=words(1000, "[bench-session s-1] sys"))
    turn2 = chat_body([words(2500, "h1"), "reply", words(300, "next")], system=words(1000, "[bench-session s-1] sys"))
    first = await post_chat(clients["o1"], "sk-a", turn1)
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    second = await post_chat(clients["o2"], "sk-b", turn2)  # another key: a miss, which the ideal counts as a hit
    assert second["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    third = await post_chat(clients["o1"], "sk-a", turn2)  # back on the first key
    cached = third["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0 and cached % BLOCK_TOKENS == 0

    stats = await (await clients["control"].get("/_stats")).json()
    assert stats["keys"]["sk-a"]["requests"] == 2 and stats["keys"]["sk-a"]["hit_requests"] == 1
    assert stats["keys"]["sk-b"]["ideal_hit_requests"] == 1 and stats["keys"]["sk-b"]["cached_tokens"] == 0
    assert stats["total"]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in (first, second, third))
    assert stats["upstreams"]["o1"]["requests"] == 2
    records = await (await clients["control"].get("/_requests")).json()
    assert [r["session"] for r in records] == ["s-1"] * 3
    assert [r["ideal_cached_tokens"] > 0 for r in records] == [False, True, True]
    assert all(r["cached_tokens"] <= r["bound_cached_tokens"] for r in records)
    # another session with the same system prompt: the bound counts the shared prefix, the ideal does not
    shared = words(1200, "agent")
    await post_chat(clients["o1"], "sk-c", chat_body([words(500, "h2")], system=shared + "[bench-session s-2]"))
    await post_chat(clients["o1"], "sk-c", chat_body([words(500, "h3")], system=shared + "[bench-session s-3]"))
    record = (await (await clients["control"].get("/_requests")).json())[-1]
    assert record["session"] == "s-3" and record["ideal_cached_tokens"] == 0
    assert record["cached_tokens"] == record["bound_cached_tokens"] > 0

    clock.advance(TTL + 1)
    again = await post_chat(clients["o1"], "sk-a", turn2)
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] == 0  # expired
    assert (await clients["control"].post("/_reset")).status == 200
    stats = await (await clients["control"].get("/_stats")).json()
    assert stats["total"]["requests"] == 0 and stats["keys"] == {}


async def test_http_stream_reports_the_usage_chunk(fake_servers) -> None:
    _fake, _clock, clients = fake_servers
    body = chat_body([words(2000, "st")], stream=True, stream_options={"include_usage": True})
    await post_chat(clients["o1"], "sk-s", {**body, "stream": False})
    resp = await clients["o1"].post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer sk-s"})
    events = [line[6:] for line in (await resp.text()).splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    usage = orjson.loads(events[-2])["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == block_floor(usage["prompt_tokens"])
    content = "".join((orjson.loads(e)["choices"] or [{}])[0].get("delta", {}).get("content") or ""
                      for e in events[:-1])
    assert content and usage["completion_tokens"] == -(-len(content) // 4)


async def test_http_anthropic_messages_stream_and_json(fake_servers) -> None:
    _fake, _clock, clients = fake_servers
    headers = {"x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01"}
    first = await clients["o1"].post("/v1/messages", json=anthropic_body([words(2000, "m1")]), headers=headers)
    usage = (await first.json())["usage"]
    assert usage["cache_read_input_tokens"] == 0 and usage["cache_creation_input_tokens"] > 0
    body = {**anthropic_body([words(2000, "m1"), "ok", words(400, "m2")]), "stream": True}
    resp = await clients["o1"].post("/v1/messages", json=body, headers=headers)
    events = [orjson.loads(line[6:]) for line in (await resp.text()).splitlines() if line.startswith("data: ")]
    start = events[0]["message"]["usage"]
    delta = next(e for e in events if e["type"] == "message_delta")["usage"]
    assert start["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == delta["cache_read_input_tokens"]
    total = anthropic_prompt(body).tokens
    assert start["input_tokens"] + start["cache_read_input_tokens"] + start["cache_creation_input_tokens"] == total


async def test_http_fail_modes_from_a_given_request(fake_servers) -> None:
    fake, _clock, clients = fake_servers
    body = chat_body([words(1200, "f")])
    control = clients["control"]
    resp = await control.post("/_fail", json={"upstream": "o1", "mode": "500", "after": 1})
    assert (await resp.json())["pending"] == ["500", 1]
    await post_chat(clients["o1"], "sk-f", body)  # the one request still served
    failing = await clients["o1"].post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer sk-f"})
    assert failing.status == 500 and (await failing.json())["error"]["type"] == "server_error"
    await post_chat(clients["o2"], "sk-f", body)  # the other upstream still serves
    await control.post("/_fail", json={"upstream": "o1", "mode": "refuse"})
    with pytest.raises(aiohttp.ClientConnectionError):  # the request is cut
        resp = await clients["o1"].post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer sk-f"})
        await resp.read()
    await control.post("/_fail", json={"upstream": "o1", "mode": "ok"})
    await post_chat(clients["o1"], "sk-f", body)
    stats = await (await control.get("/_stats")).json()
    assert stats["upstreams"]["o1"]["failed"] == 2 and stats["upstreams"]["o1"]["requests"] == 2
    assert fake.upstreams["o1"].mode == "ok"
    assert (await control.post("/_fail", json={"upstream": "nope", "mode": "500"})).status == 400
    assert (await control.post("/_clock", json={"advance": 5})).status == 200


async def test_refuse_closes_the_port_and_cuts_open_connections_until_ok() -> None:
    fake = Fake(TTL, ManualClock(), reply_tokens=20)
    upstream = fake.upstreams["o1"] = Upstream("o1", free_port())
    upstream.runner = web.AppRunner(upstream_app(fake, upstream))
    await upstream.runner.setup()
    url = f"http://127.0.0.1:{upstream.port}/v1/chat/completions"
    body, headers = chat_body(["hello"]), {"Authorization": "Bearer sk-r"}
    try:
        await upstream.listen()
        async with aiohttp.ClientSession() as kept:  # keeps its connection open across requests
            async with kept.post(url, json=body, headers=headers) as resp:
                assert resp.status == 200
            await upstream.set_mode("refuse")
            with pytest.raises(aiohttp.ClientConnectionError):  # the open connection: cut
                async with kept.post(url, json=body, headers=headers) as resp:
                    await resp.read()
        async with aiohttp.ClientSession() as fresh:
            with pytest.raises(aiohttp.ClientConnectorError):  # a new connection: refused
                await fresh.post(url, json=body, headers=headers)
            await upstream.set_mode("ok")
            async with fresh.post(url, json=body, headers=headers) as resp:
                assert resp.status == 200
        assert upstream.failed == 1 and upstream.counters.requests == 2
    finally:
        await upstream.runner.cleanup()
