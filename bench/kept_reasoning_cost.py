"""The relay's kept-reasoning work per converted request, timed in-process (CPU time, not wall time).

The gateway's CPU per request over its whole process tree moves by more than this code can cost on a
shared machine; so the work itself is timed on a Claude tool loop as an
OpenAI-format client sends it (the thinking blocks dropped): converting the request to Claude (the
plain path), then what the kept state adds — looking for turns without their state (once, at the
admission), putting the state back, gathering a 16-chunk stream's state — and the client side
of its Redis part against the Redis at REDIS_URL: its keys read by the admission script and its entry
written by the settlement script (those calls with them less the same calls without: it has no call
of its own).

    .venv/bin/python -m bench.kept_reasoning_cost [--repeat 2000] [--request-ms 1.7]

`make bench` runs it against its own gateway's Redis after the legs and puts all of it, divided by the
CPU its Claude channel leg measured per non-streamed request, in its goal table.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any

from api.relay.kept_reasoning import CLAUDE_FAMILY, KeptReasoning, StreamCollector, restored, turn_ref, wanted
from api.services.billing.quota import Limits, QuotaService
from api.services.configuration.capability_lookup import table_of
from api.services.model_name import ModelName
from api.services.store import Store
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.claude import ClaudeAdaptor

MODEL = "claude-opus-5-5"
TOOLS = [{"type": "function", "function": {"name": f"tool_{n}", "description": "A tool " * 20, "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}} for n in range(15)]
STATE = {"blocks": [{"type": "thinking", "thinking": "I should read the file first. " * 20, "signature": "c2ln" * 60}]}


def request(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. " * 200},
                                      {"role": "user", "content": "Fix the failing test."}]
    for n in range(turns):
        messages.append({"role": "assistant", "content": "", "reasoning_content": "I should read the file first.",
                         "tool_calls": [{"id": f"toolu_{n:04d}", "type": "function", "function": {
                             "name": "tool_1", "arguments": '{"path": "tests/test_x.py"}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"toolu_{n:04d}", "content": "def test_x(): ...\n" * 40})
    return {"model": MODEL, "messages": messages, "tools": TOOLS, "stream": True}


def chunks() -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        return {"id": "chatcmpl-x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    out = [chunk({"reasoning_content": "Reading the test. "}) for _ in range(4)]
    out.append(chunk({"thinking_blocks": [{"index": 0, "type": "thinking", "thinking": "", "signature": "c2ln" * 60}]}))
    out += [chunk({"content": "Now I read it. "}) for _ in range(10)]
    out.append(chunk({"tool_calls": [{"index": 0, "id": "toolu_next", "type": "function",
                                      "function": {"name": "tool_1", "arguments": ""}}]}))
    return out


def cpu_us(work: Callable[[], Any], repeat: int) -> float:
    work()
    started = time.process_time()
    for _ in range(repeat):
        work()
    return (time.process_time() - started) / repeat * 1e6


async def redis_us(repeat: int, redis_url: str) -> tuple[float, float, float]:
    """Client CPU µs per request of (the states read with the admission, the state written with the
    settlement, one GET): the admission and settlement calls with the kept state's keys and entries
    less the same calls without, interleaved in blocks so that a drift of the machine hits both."""
    store = Store.from_url(redis_url, "bench-kept:", 4)
    kept, quota = KeptReasoning(store), QuotaService(store)
    refs = wanted(request(8)["messages"], CLAUDE_FAMILY)
    keys = [kept.key(1, CLAUDE_FAMILY, ref) for _, ref in refs]
    answer = [(turn_ref({"tool_calls": [{"id": "toolu_next"}]}), STATE)]
    for part, value in (("quota", 10**15), ("gen", "g"), ("tq:1", 10**14), ("tgen:1", "g")):
        await store.redis.set(f"{store.prefix}{{u1}}:{part}", value)
    counter = iter(range(10**9))

    async def request_calls(with_kept: bool) -> None:
        charge = await quota.pre_charge(settlement_id=f"r{next(counter)}", user_id=1, token_id=1, token_limited=True,
                                        pre=500, group="default", limits=Limits(), worst=2000, prompt_tokens=100,
                                        read=keys if with_kept else ())
        await quota.settle(charge, 420, b"{}", 180, kept.entries(1, CLAUDE_FAMILY, answer) if with_kept else None)

    async def timed(work: Callable[[], Any], n: int) -> float:
        started = time.process_time()
        for _ in range(n):
            await work()
        return time.process_time() - started

    try:
        await kept.keep(1, CLAUDE_FAMILY, [(refs[0][1], STATE)])
        plain = with_state = one = 0.0
        block = 50
        for _ in range(max(1, repeat // block)):
            plain += await timed(lambda: request_calls(False), block)
            with_state += await timed(lambda: request_calls(True), block)
            one += await timed(lambda: store.redis.get(keys[0]), block)
        n = max(1, repeat // block) * block
        both = (with_state - plain) / n * 1e6
        # the share of each: the read adds keys to one call, the write a few arguments to the other
        started = time.process_time()
        for _ in range(n):
            kept.entries(1, CLAUDE_FAMILY, answer)
        encode = (time.process_time() - started) / n * 1e6
        await store.redis.delete(*[k for k in await store.redis.keys(f"{store.prefix}*")])
    finally:
        await store.close()
    return both - encode, encode, one / n * 1e6


def measure(repeat: int, redis_url: str) -> dict[str, float]:
    """CPU µs per request of the plain conversion and of each part of the kept state; `added` is all
    the kept state costs a client that drops it, `local` what it costs one that keeps it."""
    body, stream = request(8), chunks()
    found = {index: STATE for index, _ in wanted(body["messages"], CLAUDE_FAMILY)}

    def convert() -> Any:
        meta = RelayMeta(1, int(ChannelType.ANTHROPIC), "k", name=ModelName(MODEL, MODEL), inbound="",
                         capability=table_of("")(MODEL))
        return ClaudeAdaptor(meta).convert_request(body)

    def gather() -> Any:
        collector = StreamCollector(CLAUDE_FAMILY)
        collector.add(stream)
        return collector.finished()

    figures = {"plain": cpu_us(convert, repeat),
               "look": cpu_us(lambda: wanted(body["messages"], CLAUDE_FAMILY), repeat),
               "put_back": cpu_us(lambda: restored(body, CLAUDE_FAMILY, found), repeat),
               "streamed": cpu_us(gather, repeat)}
    figures["fetch"], figures["keep"], figures["one"] = asyncio.run(redis_us(max(500, repeat // 2), redis_url))
    figures["local"] = figures["look"] + figures["put_back"] + figures["streamed"]
    figures["added"] = figures["local"] + figures["fetch"] + figures["keep"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--request-ms", type=float, default=0.0,
                        help="the gateway tree's CPU ms per converted request, measured by `make bench` (its "
                             "Claude channel leg at c=32): the kept state is then also shown as a share of it")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object (for make bench)")
    args = parser.parse_args()
    f = measure(args.repeat, os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    if args.json:
        print(json.dumps(f))
        return
    print("| work (8 tool turns, 15 tools, 16-chunk answer) | CPU µs per request |\n|---|---|")
    for name, key in (("convert to Claude (the plain path's conversion)", "plain"),
                      ("put the kept state back", "put_back"), ("gather the stream's state", "streamed"),
                      ("find turns without state (at the admission; the attempt reuses it)", "look"),
                      ("the states' keys in the admission call (client side)", "fetch"),
                      ("the state to keep, encoded and carried by the settlement call", "keep"),
                      ("kept state, all of it", "added"), ("for scale: one GET on the same connection", "one")):
        print(f"| {name} | {f[key]:.1f} |")
    if args.request_ms > 0:
        request_us = args.request_ms * 1000
        print(f"\nadded ÷ a converted request's {request_us:.0f} µs over the gateway tree: "
              f"{f['local'] / request_us:.1%} without Redis (a client that keeps its state), "
              f"{f['added'] / request_us:.1%} with the lookup and the write (one that drops it)")
    else:
        print("\n(as a share of a request: --request-ms, or `make bench`, whose goal table divides by its own "
              "Claude channel leg)")
    print(f"ratios: kept state ÷ the plain conversion {f['added'] / f['plain']:.2f} (dropping) "
          f"{f['local'] / f['plain']:.2f} (keeping); its Redis part ÷ one GET "
          f"{(f['fetch'] + f['keep']) / f['one']:.2f}")


if __name__ == "__main__":
    main()
