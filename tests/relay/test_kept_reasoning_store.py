# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The kept reasoning state in Redis (api/relay/kept_reasoning.py): bounded per user in count and per
entry in size, expiring (checked by PTTL and an injected clock, never by waiting), never read for
another user nor for another provider family; and how turns are found again and filled in."""
from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ResponseError

from api import keys
from api.relay import kept_reasoning
from api.relay.kept_reasoning import (
    CLAUDE_FAMILY,
    GEMINI_FAMILY,
    MAX_ENTRIES,
    MAX_ENTRY_BYTES,
    TTL_SECONDS,
    KeptReasoning,
    StreamCollector,
    keeps_own,
    restored,
    state_of,
    turn_ref,
    wanted,
)
from api.services.store import Script
from tests.relay.fakes import gateway  # noqa: F401

BLOCKS = {"blocks": [{"type": "thinking", "thinking": "Hmm.", "signature": "c2ln"}]}


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def kept_of(gateway) -> tuple[KeptReasoning, Clock]:
    clock = Clock()
    return KeptReasoning(gateway.server.app[keys.STORE], clock), clock


def call_turn(call_id: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}, **extra}]}


async def test_at_most_max_entries_per_user_the_oldest_go_first(gateway) -> None:
    kept, clock = kept_of(gateway)
    redis = kept.store.redis
    refs = [turn_ref(call_turn(f"call_{n}")) for n in range(MAX_ENTRIES + 3)]
    for ref in refs:
        clock.now += 1
        await kept.keep(7, CLAUDE_FAMILY, [(ref, BLOCKS)])
    assert await redis.zcard(kept.index_key(7)) == MAX_ENTRIES
    assert [await redis.exists(kept.key(7, CLAUDE_FAMILY, ref)) for ref in refs[:4]] == [0, 0, 0, 1]
    assert await kept.fetch(7, CLAUDE_FAMILY, [(1, refs[-1]), (3, refs[0])]) == {1: BLOCKS}


async def test_an_entry_past_its_size_cap_is_not_kept(gateway) -> None:
    kept, _ = kept_of(gateway)
    ref, big = turn_ref(call_turn("call_big")), {"blocks": [{"type": "thinking", "thinking": "x" * MAX_ENTRY_BYTES,
                                                               "signature": "c2ln"}]}
    await kept.keep(8, CLAUDE_FAMILY, [(ref, big)])
    assert await kept.store.redis.exists(kept.key(8, CLAUDE_FAMILY, ref)) == 0
    collector = StreamCollector(CLAUDE_FAMILY)  # a stream gathers no more than that either
    collector.add([{"choices": [{"delta": {"reasoning_content": "x" * (MAX_ENTRY_BYTES + 1)}}]},
                   {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_big"}],
                                           "thinking_blocks": [{"index": 0, "type": "thinking", "signature": "s"}]}}]}])
    assert collector.finished() is None and collector.reasoning == []


async def test_hidden_parts_past_the_size_cap_leave_the_signatures_kept(gateway) -> None:
    kept, _ = kept_of(gateway)
    ref = turn_ref(call_turn("call_search"))
    hidden = [{"at": 0, "part": {"toolResponse": {"id": "s", "response": {"page": "x" * MAX_ENTRY_BYTES}}}}]
    await kept.keep(8, GEMINI_FAMILY, [(ref, {"calls": {"call_search": "c2ln"}, "server": hidden})])
    assert await kept.fetch(8, GEMINI_FAMILY, [(1, ref)]) == {1: {"calls": {"call_search": "c2ln"}}}


async def test_entries_expire_and_the_index_forgets_them(gateway) -> None:
    kept, clock = kept_of(gateway)
    redis = kept.store.redis
    old, new = turn_ref(call_turn("call_old")), turn_ref(call_turn("call_new"))
    await kept.keep(9, CLAUDE_FAMILY, [(old, BLOCKS)])
    assert 0 < await redis.pttl(kept.key(9, CLAUDE_FAMILY, old)) <= TTL_SECONDS * 1000
    assert 0 < await redis.pttl(kept.index_key(9)) <= TTL_SECONDS * 1000
    clock.now += TTL_SECONDS + 1  # what Redis has expired by then is also dropped from the index
    await kept.keep(9, CLAUDE_FAMILY, [(new, BLOCKS)])
    assert await redis.zrange(kept.index_key(9), 0, -1) == [kept.key(9, CLAUDE_FAMILY, new)]


async def test_never_read_for_another_user_nor_another_family(gateway) -> None:
    kept, _ = kept_of(gateway)
    ref = turn_ref(call_turn("toolu_same"))
    await kept.keep(10, CLAUDE_FAMILY, [(ref, BLOCKS)])
    assert await kept.fetch(10, CLAUDE_FAMILY, [(1, ref)]) == {1: BLOCKS}
    assert await kept.fetch(11, CLAUDE_FAMILY, [(1, ref)]) == {}
    assert await kept.fetch(10, GEMINI_FAMILY, [(1, ref)]) == {}


async def test_the_direct_calls_read_and_fail_as_the_client_does(gateway, monkeypatch) -> None:
    """Store.call (the kept state's MGET and script), on an idle pooled connection without the client:
    reads replies as the client does, raises the server's error reply with the connection still good,
    and a script unknown to Redis is loaded."""
    store = gateway.server.app[keys.STORE]
    key, missing = f"{store.prefix}direct:a", f"{store.prefix}direct:none"
    await store.redis.set(key, "v")  # and a connection left idle in the pool

    async def not_the_client(*args: Any) -> Any:
        raise AssertionError(f"the client's path: {args}")
    monkeypatch.setattr(store.redis, "execute_command", not_the_client)
    assert await store.call("MGET", key, missing) == ["v", None]
    with pytest.raises(ResponseError):
        await store.call("INCR", key)
    assert await store.call("GET", key) == "v"
    monkeypatch.undo()
    script = Script(store.redis, "return ARGV[1]", store)
    script.sha = "0" * 40
    assert await script(args=["back"]) == "back" and script.sha != "0" * 40
    await store.redis.delete(key)


def test_looked_up_only_when_a_tool_turn_lacks_the_familys_state() -> None:
    user = {"role": "user", "content": "Hi"}
    signed = call_turn("c1", extra_content={"google": {"thought_signature": "c2ln"}})
    text_only = {"role": "assistant", "content": "Hello."}
    assert wanted([user, text_only, user], CLAUDE_FAMILY) == []  # no tool turn: nothing asked of Redis
    assert wanted([user, signed, user], GEMINI_FAMILY) == []  # the client kept it
    assert wanted([user, signed, user], CLAUDE_FAMILY) == [(1, turn_ref(signed))]  # not Claude's state
    assert wanted([user, text_only, user, call_turn("c2")], "") == []  # a family that keeps nothing
    assert [i for i, _ in wanted([user, text_only, user, call_turn("c2")], CLAUDE_FAMILY)] == [3, 1]
    # Tool combination: every recent assistant turn, its own state or not (its hidden parts never are).
    assert [i for i, _ in wanted([user, signed, user, text_only], GEMINI_FAMILY, every=True)] == [3, 1]
    # A client whose history carries the state keeps it itself: its answers are not written.
    assert keeps_own([user, signed, user], GEMINI_FAMILY) and not keeps_own([user, signed, user], CLAUDE_FAMILY)


def test_restored_on_a_copy_for_that_family_only() -> None:
    body = {"messages": [{"role": "user", "content": "Hi"}, call_turn("c1")]}
    claude = restored(body, CLAUDE_FAMILY, {1: BLOCKS})
    assert claude["messages"][1]["thinking_blocks"] == BLOCKS["blocks"] and "thinking_blocks" not in body["messages"][1]
    gemini = restored(body, GEMINI_FAMILY, {1: {"calls": {"c1": "c2ln"}, "text": "dGV4dA=="}})
    assert gemini["messages"][1]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "c2ln"}}
    assert gemini["messages"][1]["extra_content"] == {"google": {"thought_signature": "dGV4dA=="}}
    assert "extra_content" not in body["messages"][1]["tool_calls"][0]
    hidden = [{"at": 0, "part": {"toolCall": {"id": "s"}}}]
    searched = restored(body, GEMINI_FAMILY, {1: {"calls": {}, "server": hidden}})
    assert searched["messages"][1]["gemini_server_parts"] == hidden and "gemini_server_parts" not in body["messages"][1]
    assert "gemini_server_parts" not in restored(body, CLAUDE_FAMILY, {1: {"server": hidden}})["messages"][1]


def test_what_an_answer_leaves_whole_and_streamed() -> None:
    message = {"role": "assistant", "content": None, "reasoning_content": "Hmm.",
               "thinking_blocks": [{"type": "thinking", "thinking": "Hmm.", "signature": "c2ln"},
                                   {"type": "thinking", "thinking": "x", "signature": "gwr1.sealed"}],
               "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    assert state_of(message, CLAUDE_FAMILY) == BLOCKS  # a state sealed for another provider is not Claude's
    collector = StreamCollector(CLAUDE_FAMILY)
    collector.add([{"choices": [{"delta": {"reasoning_content": "Hm"}}]},
                   {"choices": [{"delta": {"reasoning_content": "m."}}]},
                   {"choices": [{"delta": {"thinking_blocks": [{"index": 0, "type": "thinking", "thinking": "",
                                                                "signature": "c2ln"}]}}]},
                   {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "toolu_1",
                                                           "function": {"name": "f"}}]}}]}])
    assert collector.finished() == (turn_ref(message), BLOCKS)
    text = {"role": "assistant", "content": "Sunny.", "extra_content": {"google": {"thought_signature": "dA=="}}}
    streamed = StreamCollector(GEMINI_FAMILY)
    streamed.add([{"choices": [{"delta": {"content": "Sun"}}]},
                  {"choices": [{"delta": {"content": "ny.", **{k: text[k] for k in ("extra_content",)}}}]}])
    assert streamed.finished() == (turn_ref(text), {"calls": {}, "text": "dA=="}) == (turn_ref(text), state_of(
        text, GEMINI_FAMILY))


def test_the_figures() -> None:
    assert (kept_reasoning.TTL_SECONDS, kept_reasoning.MAX_ENTRIES, kept_reasoning.MAX_ENTRY_BYTES) == (
        3600, 256, 65536)
