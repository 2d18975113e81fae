"""The Python load generator (uvloop + aiohttp), run in its own process; prints one JSON object.

  python -m bench.loadgen latency  --url U [--stream] --requests N          concurrency 1, TTFB and TTLB
  python -m bench.loadgen rate     --url U [--stream] --rate R --duration S  open loop at a fixed rate
  python -m bench.loadgen closed   --url U [--stream] --concurrency C --duration S   (when wrk is missing)
  python -m bench.loadgen streams  --url U --concurrency K                   K long streams at once
  python -m bench.loadgen check    --url U [--stream] --requests N --concurrency C   every answer verified

Every answer is checked: status 200, a non-streamed body with the mock's content and usage, a stream
with exactly `--expect-chunks` content chunks and `data: [DONE]` (plus the usage chunk when
`--include-usage` asked for it). Anything else counts as an error, by kind. `--format anthropic`
speaks Anthropic's Messages API instead (text_delta events, `message_stop`, the usage of
`message_delta`).
"""
from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import aiohttp
import orjson

from bench.mock_upstream import CHUNKS, CONTENT, USAGE

MARKER = CONTENT.encode()


@dataclass
class Result:
    ok: bool
    error: str = ""
    ttfb: float = 0.0  # seconds to the first body bytes
    ttlb: float = 0.0  # seconds to the end of the body
    chunks: int = 0
    usage: dict | None = None
    detail: bytes = b""  # the start of a failed answer's body


@dataclass
class Spec:
    url: str
    body: bytes
    headers: dict[str, str]
    stream: bool
    include_usage: bool
    expect_chunks: int
    parse: bool = True  # full SSE/JSON parse (else: count the content marker)
    timeout: float = 60.0
    fmt: str = "openai"  # or "anthropic"

    @property
    def done_marker(self) -> bytes:
        return DONE_MARKERS[self.fmt]


@dataclass
class Tally:
    results: list[Result] = field(default_factory=list)
    open_streams: int = 0
    peak_open: int = 0


DONE_MARKERS = {"openai": b"data: [DONE]", "anthropic": b"event: message_stop"}


def payload(model: str, stream: bool, include_usage: bool, max_tokens: int = 256, fmt: str = "openai") -> bytes:
    """The request every load generator sends (wrk too): a short chat, usage asked for on streams
    (an Anthropic stream always ends with it)."""
    body: dict = {"model": model, "messages": [{"role": "user", "content": "Say hello to the bench."}],
                  "max_tokens": max_tokens}
    if stream:
        body["stream"] = True
        if include_usage and fmt == "openai":
            body["stream_options"] = {"include_usage": True}
    return orjson.dumps(body)


def anthropic_usage(usage: dict | None) -> dict | None:
    """Anthropic's usage in OpenAI's names, to compare with the mock's."""
    if not usage:
        return None
    return {"prompt_tokens": (usage.get("input_tokens") or 0) + (usage.get("cache_read_input_tokens") or 0),
            "completion_tokens": usage.get("output_tokens") or 0}


def make_spec(args: argparse.Namespace) -> Spec:
    headers = {"Content-Type": "application/json"}
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    for header in args.header:
        name, _, value = header.partition(":")
        headers[name.strip()] = value.strip()
    body = payload(args.model, args.stream, args.include_usage, args.max_tokens, args.format)
    usage = args.stream and (args.include_usage or args.format == "anthropic")
    return Spec(args.url, body, headers, args.stream, usage, args.expect_chunks, parse=args.mode != "closed",
                fmt=args.format)


def _check_stream(spec: Spec, buf: bytes, result: Result) -> Result:
    if not spec.parse:
        result.chunks = buf.count(MARKER)
        done = spec.done_marker in buf
    elif spec.fmt == "anthropic":
        done = spec.done_marker in buf
        for event in buf.split(b"\n\n"):
            for line in event.split(b"\n"):
                if not line.startswith(b"data:"):
                    continue
                try:
                    data = orjson.loads(line[5:])
                except orjson.JSONDecodeError:
                    result.ok, result.error = False, "bad_json"
                    return result
                kind = data.get("type")
                if kind == "error":
                    result.ok, result.error = False, "stream_error"
                    return result
                if kind == "content_block_delta" and (data.get("delta") or {}).get("text"):
                    result.chunks += 1
                elif kind == "message_delta":
                    result.usage = anthropic_usage({**(result.usage or {}), **(data.get("usage") or {})})
                elif kind == "message_start":
                    result.usage = (data.get("message") or {}).get("usage")
    else:
        done = False
        for event in buf.split(b"\n\n"):
            for line in event.split(b"\n"):
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    continue
                try:
                    chunk = orjson.loads(data)
                except orjson.JSONDecodeError:
                    result.ok, result.error = False, "bad_json"
                    return result
                if chunk.get("error"):
                    result.ok, result.error = False, "stream_error"
                    return result
                for choice in chunk.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        result.chunks += 1
                if chunk.get("usage"):
                    result.usage = chunk["usage"]
    if not done:
        result.ok, result.error = False, "no_done"
    elif result.chunks != spec.expect_chunks:
        result.ok, result.error = False, f"chunks_{result.chunks}"
    elif spec.parse and spec.include_usage and not _usage_ok(result.usage):
        result.ok, result.error = False, "usage"
    return result


def _usage_ok(usage: dict | None) -> bool:
    return bool(usage) and usage.get("prompt_tokens") == USAGE["prompt_tokens"] \
        and usage.get("completion_tokens") == USAGE["completion_tokens"]


async def one(session: aiohttp.ClientSession, spec: Spec, tally: Tally | None = None) -> Result:
    started = time.perf_counter()
    result = Result(ok=True)
    counted = False
    try:
        async with session.post(spec.url, data=spec.body, headers=spec.headers) as resp:
            parts: list[bytes] = []
            async for data in resp.content.iter_any():
                if not parts:
                    result.ttfb = time.perf_counter() - started
                    if tally is not None and spec.stream:
                        counted = True
                        tally.open_streams += 1
                        tally.peak_open = max(tally.peak_open, tally.open_streams)
                parts.append(data)
            result.ttlb = time.perf_counter() - started
            buf = b"".join(parts)
            if resp.status != 200:
                result.ok, result.error, result.detail = False, f"http_{resp.status}", buf[:300]
            elif spec.stream:
                _check_stream(spec, buf, result)
            elif spec.parse and spec.fmt == "anthropic":
                body = orjson.loads(buf)
                content = body["content"][0]["text"]
                result.usage = anthropic_usage(body.get("usage"))
                result.chunks = content.count(CONTENT)
                if content != CONTENT * CHUNKS:
                    result.ok, result.error = False, "content"
                elif not _usage_ok(result.usage):
                    result.ok, result.error = False, "usage"
            elif spec.parse:
                body = orjson.loads(buf)
                content = body["choices"][0]["message"]["content"]
                result.usage = body.get("usage")
                result.chunks = content.count(CONTENT)
                if content != CONTENT * CHUNKS:
                    result.ok, result.error = False, "content"
                elif not _usage_ok(result.usage):
                    result.ok, result.error = False, "usage"
            elif MARKER not in buf:
                result.ok, result.error = False, "content"
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        result.ok, result.error = False, type(exc).__name__
        result.ttlb = time.perf_counter() - started
    finally:
        if counted:
            tally.open_streams -= 1
    return result


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def summary(results: list[Result], duration: float, **extra) -> dict:
    ok = [r for r in results if r.ok]
    errors = Counter(r.error for r in results if not r.ok)
    samples = {r.error: r.detail.decode(errors="replace") for r in results if not r.ok and r.detail}
    ttlb = [r.ttlb * 1000 for r in ok]
    ttfb = [r.ttfb * 1000 for r in ok]
    return {
        "requests": len(results), "ok": len(ok), "errors": sum(errors.values()), "error_kinds": dict(errors),
        "error_samples": samples,
        "duration": duration, "rps": len(ok) / duration if duration else 0.0,
        "chunks": sum(r.chunks for r in ok),
        "usage_seen": sum(1 for r in ok if r.usage),
        "latency": {f"p{q}": _pct(ttlb, q) for q in (50, 90, 99)} | {"max": max(ttlb, default=0.0)},
        "ttfb": {f"p{q}": _pct(ttfb, q) for q in (50, 90, 99)},
        **extra,
    }


def _session(limit: int, timeout: float) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0, keepalive_timeout=60),
        timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=10), auto_decompress=False,
        skip_auto_headers=("User-Agent",))


async def run_latency(spec: Spec, requests: int, warmup: int = 5) -> dict:
    async with _session(1, spec.timeout) as session:
        for _ in range(warmup):
            await one(session, spec)
        started = time.perf_counter()
        results = [await one(session, spec) for _ in range(requests)]
        return summary(results, time.perf_counter() - started)


async def run_closed(spec: Spec, concurrency: int, duration: float, requests: int = 0) -> dict:
    """`concurrency` workers, each sending its next request when the last one ends (or `requests` in all)."""
    results: list[Result] = []
    async with _session(concurrency, spec.timeout) as session:
        started = time.perf_counter()
        deadline = started + duration
        remaining = [requests]

        async def worker() -> None:
            while True:
                if requests:
                    if remaining[0] <= 0:
                        return
                    remaining[0] -= 1
                elif time.perf_counter() >= deadline:
                    return
                results.append(await one(session, spec))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return summary(results, time.perf_counter() - started)


async def run_rate(spec: Spec, rate: float, duration: float) -> dict:
    """Open loop: request i starts at i/rate whatever the answers; lateness is part of the latency."""
    tasks: list[asyncio.Task] = []
    async with _session(0, spec.timeout) as session:
        started = time.perf_counter()
        total = int(rate * duration)
        late = 0
        for i in range(total):
            delay = started + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -0.05:
                late += 1
            tasks.append(asyncio.ensure_future(one(session, spec)))
        results = list(await asyncio.gather(*tasks))
        return summary(results, time.perf_counter() - started, target_rate=rate, sender_late=late)


async def run_streams(spec: Spec, concurrency: int) -> dict:
    """`concurrency` long streams opened together; clean = status 200, every chunk, [DONE]."""
    tally = Tally()
    async with _session(0, spec.timeout) as session:
        started = time.perf_counter()
        results = await asyncio.gather(*(one(session, spec, tally) for _ in range(concurrency)))
        out = summary(list(results), time.perf_counter() - started, concurrency=concurrency,
                      peak_open=tally.peak_open)
        out["clean"] = out["ok"]
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("latency", "rate", "closed", "streams", "check"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="a further request header (repeatable)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--include-usage", action="store_true")
    parser.add_argument("--expect-chunks", type=int, default=CHUNKS)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--format", choices=tuple(DONE_MARKERS), default="openai")
    args = parser.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    import uvloop

    spec = make_spec(args)
    spec.timeout = args.timeout
    runners = {
        "latency": lambda: run_latency(spec, args.requests),
        "rate": lambda: run_rate(spec, args.rate, args.duration),
        "closed": lambda: run_closed(spec, args.concurrency, args.duration),
        "streams": lambda: run_streams(spec, args.concurrency),
        "check": lambda: run_closed(spec, args.concurrency, 0, requests=args.requests),
    }
    out = uvloop.run(runners[args.mode]())
    sys.stdout.write(orjson.dumps(out).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
