# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A stream cut short (the upstream drops the connection, the client leaves) after the upstream said
its prompt count: the prompt, cache reads and writes are billed on the upstream's numbers (Anthropic's
message_start, Gemini's usageMetadata on every chunk), the output on what was produced (docs/billing.md,
"Partial answers"). Each fake reports a prompt count far from the gateway's own tokenizer, so the two cannot be
confused."""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp import web

from api import keys
from api.relay.streaming import produced_usage
from api.services.billing import pricing
from api.services.billing.settlement import pending_key
from api.upstream.base import StreamState, TokenUsage
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_chat_request, count_text
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import settled_log

CLAUDE = "claude-3-5-sonnet-20241022"  # ratio 1.5, completion ratio 5, cache read 0.1, cache write 1.25
GEMINI = "gemini-2.0-flash"  # ratio 0.05, completion ratio 4, cache read 0.25
MESSAGES = [{"role": "user", "content": "Say hello."}]
# Anthropic counts input apart from the cache reads and writes (all three make the prompt).
CLAUDE_USAGE = {"input_tokens": 321, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 25,
                "output_tokens": 9}
CLAUDE_PROMPT = 321 + 40 + 25


def quota(model: str, prompt: int, completion: int, read: int = 0, write: int = 0) -> int:
    return pricing.settle_quota(pricing.resolve_price(model), prompt, completion, cached_tokens=read,
                                cache_creation_tokens=write)


async def sse_text(resp) -> bytes:
    raw = await resp.read()
    assert resp.status == 200, raw
    return raw


class GeminiWithRunningUsage(FakeGemini):
    """Gemini as it streams: usageMetadata on every chunk, the prompt (and cached) count from the first,
    the candidates count only on the last one."""

    def answer(self, parts: list[dict[str, Any]], finish: str | None, usage: bool,
               grounding: dict[str, Any] | None = None) -> dict[str, Any]:
        data = super().answer(parts, finish, usage, grounding)
        if not finish:
            data["usageMetadata"] = {"promptTokenCount": 57, "cachedContentTokenCount": 12, "totalTokenCount": 57}
        return data


class HeldClaude(FakeClaude):
    """Claude that stops sending after `hold_after` text deltas and waits (for a client to leave)."""

    hold_after = 2
    released: asyncio.Event | None = None
    gone = False

    async def stream(self, request: web.Request, events: list[dict[str, Any]]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        deltas = 0
        try:
            for event in events:
                if event["type"] == "content_block_delta":
                    deltas += 1
                    if deltas > self.hold_after:
                        await asyncio.Event().wait()  # until the gateway cancels this request
                await resp.write(f"event: {event['type']}\ndata: ".encode() + orjson.dumps(event) + b"\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            self.gone = True
            raise
        return resp


async def start(aiohttp_server, fake):
    fake.server = await aiohttp_server(fake.app())
    return fake


async def claude_channel(gateway, fake: FakeClaude) -> None:
    await add_channel(gateway, None, models=CLAUDE, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)


# -- the rule, on the stream's own state ------------------------------------------------------------


def test_a_cut_stream_takes_the_reported_prompt_and_the_counted_output() -> None:
    state = StreamState()
    state.counter.add_text("Hello there, how are you today?")
    counted = state.counter.total()
    assert produced_usage(state, 18) == TokenUsage(18, counted)  # nothing reported: the gateway's own count
    state.usage = TokenUsage(386, 1, cached_tokens=40, cache_creation_tokens=25)  # message_start
    assert produced_usage(state, 18) == TokenUsage(386, counted, cached_tokens=40, cache_creation_tokens=25)
    state.usage = TokenUsage(57, counted + 30, cached_tokens=12, reasoning_tokens=30)  # a running count with thoughts
    assert produced_usage(state, 18).completion_tokens == counted + 30
    state.finish_reason = "stop"  # reported with the finish: the upstream's numbers as they are
    state.usage = TokenUsage(386, 2)
    assert produced_usage(state, 18) == TokenUsage(386, 2)


# -- through the gateway ----------------------------------------------------------------------------


@pytest.mark.parametrize("client_format", ["openai", "anthropic"])
async def test_claude_stream_dropped_after_message_start_bills_claudes_prompt(gateway, aiohttp_server,
                                                                               client_format) -> None:
    fake = await start(aiohttp_server, FakeClaude(usage=dict(CLAUDE_USAGE), cut_after=2))
    await claude_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    body = {"model": CLAUDE, "messages": MESSAGES, "stream": True}
    if client_format == "anthropic":  # relayed as sent (the native path)
        resp = await gateway.post("/v1/messages", json={**body, "max_tokens": 100},
                                  headers={"x-api-key": f"sk-{token.key}", "anthropic-version": "2023-06-01"})
    else:
        resp = await gateway.post("/v1/chat/completions", json=body,
                                  headers={"Authorization": f"Bearer sk-{token.key}"})
    raw = await sse_text(resp)
    assert b"Hello " in raw
    log = await settled_log(gateway, user)
    produced = count_text("Hello from ")
    assert count_chat_request({"model": CLAUDE, "messages": MESSAGES}) != CLAUDE_PROMPT  # not to be confused
    assert (log.prompt_tokens, log.completion_tokens) == (CLAUDE_PROMPT, produced)
    assert log.quota == quota(CLAUDE, CLAUDE_PROMPT, produced, read=40, write=25)
    other = orjson.loads(log.other)
    assert (other["cache_tokens"], other["cache_creation_tokens"]) == (40, 25) and other["incomplete"]


async def test_gemini_stream_dropped_mid_way_bills_the_prompt_of_its_usage_metadata(gateway, aiohttp_server) -> None:
    fake = await start(aiohttp_server, GeminiWithRunningUsage(cut_after=3))
    await add_channel(gateway, None, models=GEMINI, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    user = await rich_user()
    token = await make_key(user)
    resp = await gateway.post("/v1/chat/completions", json={"model": GEMINI, "messages": MESSAGES, "stream": True},
                              headers={"Authorization": f"Bearer sk-{token.key}"})
    raw = await sse_text(resp)
    assert b"stream_interrupted" in raw
    log = await settled_log(gateway, user)
    produced = count_text("Hello from Gemini, ")
    assert (log.prompt_tokens, log.completion_tokens) == (57, produced)  # the output as produced, not Gemini's 0
    assert log.quota == quota(GEMINI, 57, produced, read=12)
    assert orjson.loads(log.other)["cache_tokens"] == 12


async def test_client_leaving_after_message_start_bills_claudes_prompt(gateway, aiohttp_server) -> None:
    fake = await start(aiohttp_server, HeldClaude(usage=dict(CLAUDE_USAGE)))
    await claude_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    resp = await gateway.post("/v1/chat/completions", json={"model": CLAUDE, "messages": MESSAGES, "stream": True},
                              headers={"Authorization": f"Bearer sk-{token.key}"})
    received = ""
    while received != "Hello from ":
        line = await resp.content.readline()
        if line.startswith(b"data: {"):
            received += "".join(c["delta"].get("content") or "" for c in orjson.loads(line[6:])["choices"])
    resp.close()  # the client goes away
    store = gateway.server.app[keys.STORE]

    async def settled() -> bool:
        return bool(await store.redis.hlen(pending_key(store, user.id)))

    await eventually(settled, timeout=10)
    await eventually(lambda: asyncio.sleep(0, fake.gone), timeout=10)  # the upstream request was cancelled
    await drain(gateway)
    log = await settled_log(gateway, user)
    produced = count_text("Hello from ")
    assert (log.prompt_tokens, log.completion_tokens) == (CLAUDE_PROMPT, produced)
    assert log.quota == quota(CLAUDE, CLAUDE_PROMPT, produced, read=40, write=25)
    assert orjson.loads(log.other)["incomplete"] == "the client went away"
