"""The CI smoke mode: correctness only, never timing (about a minute).

Against the real gateway (API processes, workers, its own Redis, a database of its own) and the mock:
every answer is checked by the load generator (status, content, chunk count, [DONE], usage), then,
once the workers have applied every settlement, the database must show exactly what docs/billing.md
says: quota charged = the formula on the mock's usage, for the user, the key and the channels; one
consume log per request with the mock's token counts; and the mock must have seen each request once
and been asked for usage on every stream.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.accounting import Books, expected_quota
from bench.gateway import PRICED_LIKE, Gateway
from bench.mock_upstream import COMPLETION_TOKENS, PROMPT_TOKENS, SLOW_CHUNKS
from bench.runner import Leg, Runner

NON_STREAMED = 200
STREAMED_WITH_USAGE = 100
STREAMED_PLAIN = 50
SLOW_STREAMS = 20


@dataclass
class Checks:
    results: list[tuple[bool, str]] = field(default_factory=list)

    def expect(self, name: str, got: object, want: object) -> None:
        ok = got == want
        self.results.append((ok, f"{name}: {got!r}" + ("" if ok else f" (expected {want!r})")))
        print(f"  {'ok  ' if ok else 'FAIL'} {self.results[-1][1]}", flush=True)

    @property
    def failed(self) -> int:
        return sum(1 for ok, _ in self.results if not ok)


async def _mock_stats(runner: Runner, mock_base: str) -> dict:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(mock_base + "/_stats") as resp:
        return await resp.json()


GATEWAY_LEGS = ("gateway", "claude", "messages", "messages-openai")


async def run_smoke(runner: Runner, legs: list[Leg], gw: Gateway, mock_base: str) -> int:
    checks = Checks()
    print("harness and reference legs (every answer verified):", flush=True)
    for leg in legs:
        if leg.key in GATEWAY_LEGS:
            continue
        for stream in (False, True):
            res = await runner.loadgen("check", leg, stream=stream, requests=50, concurrency=4)
            checks.expect(f"{leg.title}, {'streamed' if stream else 'non-streamed'}: errors", res["error_kinds"], {})

    books = Books(gw.database_url, gw.user_id, gw.token_id, gw.channel_ids)
    await books.open()
    try:
        for leg in (leg for leg in legs if leg.key in GATEWAY_LEGS):
            await check_gateway_leg(runner, leg, books, checks, mock_base)
    finally:
        await books.close()
    print(f"smoke: {len(checks.results) - checks.failed} of {len(checks.results)} checks good"
          + (f", {checks.failed} FAILED" if checks.failed else ""), flush=True)
    return 1 if checks.failed else 0


async def check_gateway_leg(runner: Runner, leg: Leg, books: Books, checks: Checks, mock_base: str) -> None:
    """Every answer verified, then the books: the same on an OpenAI channel and on a Claude channel
    (whose models are priced like the OpenAI ones, so the formula is the same)."""
    before = await books.ledger()
    stats_before = await _mock_stats(runner, mock_base)
    print(f"{leg.title} (every answer verified):", flush=True)
    res = await runner.loadgen("check", leg, requests=NON_STREAMED, concurrency=8)
    checks.expect("non-streamed: errors", res["error_kinds"], {})
    checks.expect("non-streamed: usage in every answer", res["usage_seen"], NON_STREAMED)
    res = await runner.loadgen("check", leg, stream=True, requests=STREAMED_WITH_USAGE, concurrency=8)
    checks.expect("streamed with include_usage: errors (chunk counts, [DONE], usage)", res["error_kinds"], {})
    checks.expect("streamed: content chunks", res["chunks"], STREAMED_WITH_USAGE * runner.o.chunks)
    checks.expect("streamed: usage chunk in every stream", res["usage_seen"], STREAMED_WITH_USAGE)
    res = await runner.loadgen("check", leg, stream=True, requests=STREAMED_PLAIN, concurrency=8, usage=False)
    checks.expect("streamed without include_usage: errors", res["error_kinds"], {})
    res = await runner.loadgen("streams", leg, stream=True, slow=True, concurrency=SLOW_STREAMS, timeout=120)
    checks.expect(f"{SLOW_STREAMS} concurrent long streams: clean", res["clean"], SLOW_STREAMS)
    checks.expect("long streams: content chunks", res["chunks"], SLOW_STREAMS * SLOW_CHUNKS)

    total_fast = NON_STREAMED + STREAMED_WITH_USAGE + STREAMED_PLAIN
    total = total_fast + SLOW_STREAMS
    streams = STREAMED_WITH_USAGE + STREAMED_PLAIN + SLOW_STREAMS
    settled = await books.wait_count(before.request_count + total, timeout=90)
    after = await books.ledger()
    stats = await _mock_stats(runner, mock_base)
    fast, slow = PRICED_LIKE.get(leg.model, leg.model), PRICED_LIKE.get(leg.slow_model, leg.slow_model)
    want = total_fast * expected_quota(fast) + SLOW_STREAMS * expected_quota(slow)
    print(f"billing (formula: {expected_quota(fast)} per {leg.model} request, "
          f"{expected_quota(slow)} per {leg.slow_model} request; {want} in all):", flush=True)
    checks.expect("requests settled", settled - before.request_count, total)
    checks.expect("user used_quota charged", after.user_used - before.user_used, want)
    checks.expect("user quota debited", before.user_quota - after.user_quota, want)
    checks.expect("key used_quota charged", after.token_used - before.token_used, want)
    checks.expect("key remain_quota debited", before.token_remain - after.token_remain, want)
    checks.expect("channels used_quota", after.channel_used - before.channel_used, want)
    checks.expect("consume logs written", after.logs - before.logs, total)
    checks.expect("consume logs: quota", after.logs_quota - before.logs_quota, want)
    checks.expect("consume logs: prompt tokens", after.logs_prompt - before.logs_prompt, total * PROMPT_TOKENS)
    checks.expect("consume logs: completion tokens", after.logs_completion - before.logs_completion,
                  total * COMPLETION_TOKENS)
    checks.expect("upstream requests (each once, no retry)", stats["requests"] - stats_before["requests"], total)
    checks.expect("upstream usage on every stream", stats["usage_chunks"] - stats_before["usage_chunks"], streams)
    checks.expect("upstream chunks = chunks delivered", stats["chunks"] - stats_before["chunks"],
                  (STREAMED_WITH_USAGE + STREAMED_PLAIN) * runner.o.chunks + SLOW_STREAMS * SLOW_CHUNKS)
