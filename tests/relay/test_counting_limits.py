# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Token counting cannot stall or flood a process: long texts counted in pieces (exact, one piece's
tokens in memory), large requests counted off the event loop (the relay's own prompt counts and the
clients' count_tokens / countTokens alike), client counts limited per user and per process."""
from __future__ import annotations

import asyncio
import dataclasses
import threading
import tracemalloc

import pytest

from api.relay import counting
from api.relay.modes import MODES
from api.upstream.base import RelayMode
from api.upstream.tokenizer import (
    OFF_LOOP_BYTES,
    PIECE_CHARS,
    count_chat_request,
    count_off_loop,
    count_text,
    get_encoding,
)
from tests.helpers import eventually
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, rich_user, upstreams  # noqa: F401

MIB = 1024 * 1024
CLAUDE = "claude-sonnet-4-5"
GEMINI = "gemini-2.5-flash"
PROSE = ("The gateway counts tokens locally when an upstream reports none; 中文也要计算，"
         "tabs\tand\nnewlines, numbers 12345 and code: def f(x): return x ** 2  # comment. ")


def whole(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


# -- counting in pieces ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [PROSE * 3000, "word " * 100_000, "好，世界" * 50_000, ("x" * 70 + " ") * 2000])
def test_a_long_text_is_counted_exactly_in_pieces(text: str) -> None:
    assert len(text) > 2 * PIECE_CHARS
    assert count_text(text) == whole(text)


def test_a_text_without_a_place_to_cut_is_counted_within_a_token_a_piece() -> None:
    text = "QUJD" * 100_000  # base64-like: no boundary the count keeps
    assert abs(count_text(text) - whole(text)) <= len(text) // PIECE_CHARS + 1


def test_counting_a_long_text_keeps_one_piece_of_tokens() -> None:
    """800,000 tokens counted at once would be a list of 800,000 ints (~30 MB)."""
    text = "word " * 800_000
    expected = whole(text)
    tracemalloc.start()
    try:
        assert count_text(text) == expected
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB


# -- off the event loop ---------------------------------------------------------------------------------


async def test_a_large_request_is_counted_in_the_counting_pool() -> None:
    threads: list[str] = []

    def count(value: str) -> int:
        threads.append(threading.current_thread().name)
        return len(value)

    assert await count_off_loop(count, "small", OFF_LOOP_BYTES) == 5
    assert await count_off_loop(count, "large", OFF_LOOP_BYTES + 1) == 5
    assert threads[0] == threading.current_thread().name
    assert threads[1].startswith("counting")


async def test_the_relay_counts_a_large_prompt_off_the_loop(gateway, upstreams, monkeypatch) -> None:
    await add_channel(gateway, await upstreams())
    token = await make_key(await rich_user())
    threads: list[str] = []
    chat = MODES[RelayMode.CHAT]

    def spy(body) -> int:
        threads.append(threading.current_thread().name)
        return chat.count_prompt(body)

    monkeypatch.setitem(MODES, RelayMode.CHAT, dataclasses.replace(chat, count_prompt=spy))
    for text in ("hi", PROSE * 1000):
        resp = await gateway.post("/v1/chat/completions", headers=headers_for(token), json={
            "model": "gpt-4", "messages": [{"role": "user", "content": text}]})
        assert resp.status == 200, await resp.text()
    assert threads[0] == threading.current_thread().name
    assert threads[1].startswith("counting")
# -- the clients' counts ----------------------------------------------------------------------------------


def anthropic_count(gateway, token, text: str = "Hello there"):
    return gateway.post("/v1/messages/count_tokens", headers={
        "x-api-key": f"sk-{token.key}", "anthropic-version": "2023-06-01"},
        json={"model": CLAUDE, "messages": [{"role": "user", "content": text}]})


def gemini_count(gateway, token, text: str = "Hello there"):
    return gateway.post(f"/v1beta/models/{GEMINI}:countTokens", headers={"x-goog-api-key": f"sk-{token.key}"},
                        json={"contents": [{"role": "user", "parts": [{"text": text}]}]})


async def test_a_large_count_is_exact(gateway) -> None:
    token = await make_key(await rich_user())
    text = PROSE * 2000
    resp = await anthropic_count(gateway, token, text)
    assert resp.status == 200
    expected = count_chat_request({"messages": [{"role": "user", "content": text}]})
    assert (await resp.json())["input_tokens"] == expected
    resp = await gemini_count(gateway, token, text)
    assert (await resp.json())["totalTokens"] == expected


async def test_counts_are_limited_per_user(gateway, monkeypatch) -> None:
    monkeypatch.setattr(counting, "COUNT_RPM", 3)
    user = await rich_user()
    first, second = await make_key(user), await make_key(user)
    for token in (first, second, first):
        assert (await anthropic_count(gateway, token)).status == 200
    resp = await anthropic_count(gateway, second)  # another key of the same user
    assert resp.status == 429
    body = await resp.json()
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"  # Anthropic's shape
    assert 1 <= int(resp.headers["Retry-After"]) <= 60
    resp = await gemini_count(gateway, first)
    assert resp.status == 429 and (await resp.json())["error"]["status"] == "RESOURCE_EXHAUSTED"
    # Over the limit the body is not even read: a body that is not JSON gets the 429, not a 400.
    resp = await gateway.post("/v1/messages/count_tokens", data=b"{not json", headers={
        "x-api-key": f"sk-{first.key}", "anthropic-version": "2023-06-01", "Content-Type": "application/json"})
    assert resp.status == 429
    other = await make_key(await rich_user("bob"))
    assert (await anthropic_count(gateway, other)).status == 200


async def test_large_counts_beyond_the_process_bound_are_refused_at_once(gateway, monkeypatch) -> None:
    monkeypatch.setattr(counting, "MAX_LARGE_COUNTS", 2)
    release = threading.Event()

    def slow(body) -> int:
        release.wait(10)
        return count_chat_request(body)

    monkeypatch.setattr(counting, "count_chat_request", slow)
    token = await make_key(await rich_user())
    large = PROSE * 1000
    waiting = [asyncio.ensure_future(anthropic_count(gateway, token, large)) for _ in range(2)]

    async def both_counting() -> bool:
        return counting._large_counts == 2

    try:
        await eventually(both_counting, timeout=10)
        refused = await anthropic_count(gateway, token, large)
        assert refused.status == 429
        assert "large token counts" in (await refused.json())["error"]["message"]
        release.set()
        assert [resp.status for resp in await asyncio.gather(*waiting)] == [200, 200]
    finally:
        release.set()
    assert (await anthropic_count(gateway, token, "small")).status == 200  # a small count is never queued
    assert counting._large_counts == 0

