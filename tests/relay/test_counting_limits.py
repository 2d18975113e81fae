# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Token counting cannot stall or flood a process: long texts counted in pieces (exact, one piece's
tokens in memory), large requests counted off the event loop (the relay's own prompt counts and the
clients' count_tokens / countTokens alike), client counts limited per user and per process."""
from __future__ import annotations

import dataclasses
import threading
import tracemalloc

import pytest

from api.relay.base import RelayMode
from api.relay.modes import MODES
from api.relay.tokenizer import (
    OFF_LOOP_BYTES,
    PIECE_CHARS,
    count_off_loop,
    count_text,
    get_encoding,
)
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
