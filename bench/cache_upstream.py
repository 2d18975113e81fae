"""A fake provider that caches prompt prefixes per API key, as OpenAI and Anthropic do.

    python -m bench.cache_upstream --control-port P --upstream o1=PORT [--upstream o2=PORT ...]
                                   [--ttl 300] [--reply-tokens 300] [--manual-clock]

Each `--upstream NAME=PORT` is one provider address (a channel's base_url); all of them share one
cache (bench/prompt_cache.py: per key and model, 128-token blocks, TTL refreshed on a hit). On every
upstream port:

  POST /v1/chat/completions  OpenAI: JSON, or SSE with the usage chunk when `stream_options.include_usage`;
                             usage.prompt_tokens and usage.prompt_tokens_details.cached_tokens
  POST /v1/messages          Anthropic: JSON or SSE; usage.input_tokens, cache_read_input_tokens,
                             cache_creation_input_tokens
  GET  /v1/models, /health

The key is the Authorization bearer (OpenAI) or x-api-key (Anthropic). Beside the real cache the fake
keeps two references, with the same arithmetic and TTL:
  ideal  one cache per session (the prompt's `[bench-session ID]` mark) whatever the key: every turn
         after a session's first finds its whole previous prompt, and a first turn finds nothing
  bound  one cache shared by every key and session: also what sessions share (tools, the agent's
         system prompt). No key's cache can beat it: per request, cached <= bound.

On the control port:

  GET  /_stats     per key, per upstream and in total: requests, requests that hit, prompt, cached,
                   ideal and bound cached tokens, cache writes; failures answered
  GET  /_requests  one record per answered request: upstream, key, model, session (from the prompt's
                   `[bench-session ID]` mark), tokens, cached, ideal, bound, created
  POST /_reset     empty both caches, the counters and the records (a new phase of a run)
  POST /_fail      {"upstream": NAME, "mode": "500" | "refuse" | "ok", "after": N}: from the N+1-th
                   request on (N = 0 by default: now) answer 500, or refuse connections (the port
                   stops listening and requests on open connections are cut), or serve again
  POST /_clock     {"advance": SECONDS} with --manual-clock: expire entries without waiting
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
from aiohttp import web

from bench.prompt_cache import (
    BYTES_PER_TOKEN,
    DEFAULT_TTL,
    ManualClock,
    Prompt,
    PromptCache,
    anthropic_prompt,
    openai_prompt,
    tokens,
)

REPLY_TOKENS = 300
STREAM_PIECES = 8
MODES = ("ok", "500", "refuse")
BOUND_KEY = "*"
WORDS = ("the", "file", "function", "returns", "value", "test", "passes", "now", "update", "import", "error",
         "line", "change", "module", "request", "check", "fixed", "call", "result", "config")


@dataclass
class Counters:
    requests: int = 0
    hit_requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    ideal_cached_tokens: int = 0
    ideal_hit_requests: int = 0
    bound_cached_tokens: int = 0
    creation_tokens: int = 0
    completion_tokens: int = 0

    def add(self, record: Mapping[str, Any]) -> None:
        self.requests += 1
        self.hit_requests += record["cached_tokens"] > 0
        self.ideal_hit_requests += record["ideal_cached_tokens"] > 0
        for name in ("prompt_tokens", "cached_tokens", "ideal_cached_tokens", "bound_cached_tokens",
                     "creation_tokens", "completion_tokens"):
            setattr(self, name, getattr(self, name) + record[name])


@dataclass
class Upstream:
    """One provider address; its failure mode is switched from the control port."""

    name: str
    port: int
    host: str = "127.0.0.1"
    mode: str = "ok"
    pending: tuple[str, int] | None = None  # (mode, requests still served before it applies)
    failed: int = 0  # requests answered 500 or cut
    counters: Counters = field(default_factory=Counters)
    runner: web.AppRunner | None = None
    site: web.TCPSite | None = None

    async def listen(self) -> None:
        """Listen on the port again (no-op for an upstream served by someone else, e.g. a test server)."""
        if self.site is None and self.runner is not None:
            self.site = web.TCPSite(self.runner, self.host, self.port, reuse_address=True, backlog=1024)
            await self.site.start()

    async def stop_listening(self) -> None:
        if self.site is not None:
            site, self.site = self.site, None
            await site.stop()

    async def set_mode(self, mode: str, after: int = 0) -> None:
        if after > 0:
            self.pending = (mode, after)
            return
        self.pending = None
        self.mode = mode
        if mode == "refuse":
            await self.stop_listening()
        else:
            await self.listen()

    async def admit(self) -> str:
        """The mode this request meets (a pending change counts the requests it still lets through)."""
        if self.pending is not None:
            mode, left = self.pending
            if left <= 0:
                await self.set_mode(mode)
            else:
                self.pending = (mode, left - 1)
        return self.mode


class Fake:
    def __init__(self, ttl: float = DEFAULT_TTL, clock: Callable[[], float] | None = None,
                 reply_tokens: int = REPLY_TOKENS) -> None:
        self.clock = clock or time.monotonic
        self.cache = PromptCache(ttl, self.clock)  # per key and model: what the provider does
        self.ideal = PromptCache(ttl, self.clock)  # per session and model
        self.bound = PromptCache(ttl, self.clock)  # per model only
        self.reply_tokens = reply_tokens
        self.upstreams: dict[str, Upstream] = {}
        self.keys: dict[str, Counters] = {}
        self.records: list[dict[str, Any]] = []

    def reset(self) -> None:
        for cache in (self.cache, self.ideal, self.bound):
            cache.clear()
        self.keys.clear()
        self.records.clear()
        for upstream in self.upstreams.values():
            upstream.counters = Counters()
            upstream.failed = 0

    def serve(self, upstream: Upstream, key: str, model: str, prompt: Prompt) -> tuple[int, int, int, str]:
        """(cached, created, completion tokens, answer text) of one answered request."""
        hit = self.cache.use((key, model), prompt)
        text = answer_text(prompt.digest, self.reply_tokens)
        completion = tokens(len(text.encode()))
        record: dict[str, Any] = {"at": self.clock(), "upstream": upstream.name, "key": key, "model": model,
                  "session": prompt.session, "prompt_tokens": prompt.tokens, "cached_tokens": hit.read,
                  "ideal_cached_tokens": self.ideal.use((prompt.session, model), prompt).read,
                  "bound_cached_tokens": self.bound.use((BOUND_KEY, model), prompt).read,
                  "creation_tokens": hit.creation, "completion_tokens": completion}
        upstream.counters.add(record)
        self.keys.setdefault(key, Counters()).add(record)
        self.records.append(record)
        return hit.read, hit.creation, completion, text

    def stats(self) -> dict[str, Any]:
        total = Counters()
        for counters in self.keys.values():
            for name, value in asdict(counters).items():
                setattr(total, name, getattr(total, name) + value)
        return {"total": asdict(total), "keys": {k: asdict(c) for k, c in sorted(self.keys.items())},
                "upstreams": {u.name: {**asdict(u.counters), "failed": u.failed, "mode": u.mode,
                                       "listening": u.site is not None} for u in self.upstreams.values()},
                "ttl": self.cache.ttl}


FAKE = web.AppKey("fake", Fake)
UPSTREAM = web.AppKey("upstream", Upstream)


def answer_text(digest: bytes, reply_tokens: int) -> str:
    """A deterministic answer of about `reply_tokens` tokens (½× to 1½×), unique to the prompt."""
    rng = random.Random(digest)
    size = int(reply_tokens * BYTES_PER_TOKEN * rng.uniform(0.5, 1.5))
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def _pieces(text: str, count: int = STREAM_PIECES) -> list[str]:
    step = max(1, -(-len(text) // count))
    return [text[i:i + step] for i in range(0, len(text), step)] or [""]


def _key(request: web.Request) -> str:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-api-key", "").strip()


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


async def _gate(request: web.Request, anthropic: bool) -> web.StreamResponse | None:
    """The upstream's failure mode for this request: an answer (500), a cut connection, or None (serve)."""
    upstream = request.app[UPSTREAM]
    mode = await upstream.admit()
    if mode == "ok":
        return None
    upstream.failed += 1
    if mode == "refuse":  # a request on a connection opened before the port closed: cut it
        if request.transport is not None:
            request.transport.abort()
        return web.Response(status=500)
    if anthropic:
        return _json({"type": "error", "error": {"type": "api_error", "message": "bench: upstream failing"}}, 500)
    return _json({"error": {"message": "bench: upstream failing", "type": "server_error", "code": None}}, 500)


async def chat(request: web.Request) -> web.StreamResponse:
    refused = await _gate(request, anthropic=False)
    if refused is not None:
        return refused
    key = _key(request)
    if not key:
        return _json({"error": {"message": "no key", "type": "invalid_request_error",
                                "code": "invalid_api_key"}}, 401)
    body = orjson.loads(await request.read())
    model = str(body.get("model", ""))
    prompt = openai_prompt(body)
    cached, _created, completion, text = request.app[FAKE].serve(request.app[UPSTREAM], key, model, prompt)
    usage = {"prompt_tokens": prompt.tokens, "completion_tokens": completion,
             "total_tokens": prompt.tokens + completion, "prompt_tokens_details": {"cached_tokens": cached}}
    head = {"id": "chatcmpl-" + prompt.digest.hex()[:24], "created": 1700000000, "model": model,
            "system_fingerprint": "fp_cache"}
    if not body.get("stream"):
        return _json({**head, "object": "chat.completion", "usage": usage, "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]})

    def frame(choices: list[Any], extra: Mapping[str, Any] | None = None) -> bytes:
        return b"data: " + orjson.dumps({**head, "object": "chat.completion.chunk", "choices": choices,
                                         **(extra or {})}) + b"\n\n"

    frames = [frame([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    frames += [frame([{"index": 0, "delta": {"content": p}, "finish_reason": None}]) for p in _pieces(text)]
    frames.append(frame([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if (body.get("stream_options") or {}).get("include_usage"):
        frames.append(frame([], {"usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    return await _stream(request, frames)


async def messages(request: web.Request) -> web.StreamResponse:
    refused = await _gate(request, anthropic=True)
    if refused is not None:
        return refused
    key = _key(request)
    if not key:
        return _json({"type": "error", "error": {"type": "authentication_error", "message": "no key"}}, 401)
    body = orjson.loads(await request.read())
    model = str(body.get("model", ""))
    prompt = anthropic_prompt(body)
    cached, created, completion, text = request.app[FAKE].serve(request.app[UPSTREAM], key, model, prompt)
    usage_in = {"input_tokens": prompt.tokens - cached - created, "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": created}
    message = {"id": "msg_" + prompt.digest.hex()[:24], "type": "message", "role": "assistant", "model": model,
               "stop_sequence": None}
    if not body.get("stream"):
        return _json({**message, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                      "usage": {**usage_in, "output_tokens": completion}})

    def event(name: str, data: Mapping[str, Any]) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **data}) + b"\n\n"

    frames = [event("message_start", {"message": {**message, "content": [], "stop_reason": None,
                                                  "usage": {**usage_in, "output_tokens": 1}}}),
              event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})]
    frames += [event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
               for p in _pieces(text)]
    frames += [event("content_block_stop", {"index": 0}),
               # message_delta's usage is cumulative (the API repeats the input counts there)
               event("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                       "usage": {**usage_in, "output_tokens": completion}}),
               event("message_stop", {})]
    return await _stream(request, frames)


async def _stream(request: web.Request, frames: list[bytes]) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    with contextlib.suppress(ConnectionResetError):
        for frame in frames:
            await resp.write(frame)
        await resp.write_eof()
    return resp


async def models(request: web.Request) -> web.Response:
    return _json({"object": "list", "data": []})


async def health(request: web.Request) -> web.Response:
    return web.Response(text="ok")


# -- control ---------------------------------------------------------------------------------------

async def get_stats(request: web.Request) -> web.Response:
    return _json(request.app[FAKE].stats())


async def get_requests(request: web.Request) -> web.Response:
    return _json(request.app[FAKE].records)


async def post_reset(request: web.Request) -> web.Response:
    request.app[FAKE].reset()
    return _json({"ok": True})


async def post_fail(request: web.Request) -> web.Response:
    body = await request.json()
    fake = request.app[FAKE]
    upstream = fake.upstreams.get(str(body.get("upstream")))
    mode = str(body.get("mode", ""))
    if upstream is None or mode not in MODES:
        return _json({"ok": False, "message": f"upstream one of {sorted(fake.upstreams)}, mode one of {MODES}"}, 400)
    await upstream.set_mode(mode, int(body.get("after") or 0))
    return _json({"ok": True, "upstream": upstream.name, "mode": upstream.mode, "pending": upstream.pending})


async def post_clock(request: web.Request) -> web.Response:
    clock = request.app[FAKE].clock
    if not isinstance(clock, ManualClock):
        return _json({"ok": False, "message": "the fake runs on the real clock (start it with --manual-clock)"}, 400)
    clock.advance(float((await request.json()).get("advance") or 0))
    return _json({"ok": True, "now": clock.now})


def upstream_app(fake: Fake, upstream: Upstream) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[FAKE], app[UPSTREAM] = fake, upstream
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/v1/messages", messages)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    return app


def control_app(fake: Fake) -> web.Application:
    app = web.Application()
    app[FAKE] = fake
    app.router.add_get("/_stats", get_stats)
    app.router.add_get("/_requests", get_requests)
    app.router.add_post("/_reset", post_reset)
    app.router.add_post("/_fail", post_fail)
    app.router.add_post("/_clock", post_clock)
    app.router.add_get("/health", health)
    return app


async def serve(fake: Fake, control_port: int, upstreams: dict[str, int], host: str = "127.0.0.1") -> None:
    runners: list[web.AppRunner] = []
    try:
        for name, port in upstreams.items():
            upstream = fake.upstreams[name] = Upstream(name, port, host)
            upstream.runner = web.AppRunner(upstream_app(fake, upstream), access_log=None)
            await upstream.runner.setup()
            runners.append(upstream.runner)
            await upstream.listen()
        control = web.AppRunner(control_app(fake), access_log=None)
        await control.setup()
        runners.append(control)
        await web.TCPSite(control, host, control_port, reuse_address=True).start()
        await asyncio.Event().wait()
    finally:
        for runner in reversed(runners):
            await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--control-port", type=int, required=True)
    parser.add_argument("--upstream", action="append", default=[], metavar="NAME=PORT", required=True)
    parser.add_argument("--ttl", type=float, default=DEFAULT_TTL, help="seconds a cache entry lives (300)")
    parser.add_argument("--reply-tokens", type=int, default=REPLY_TOKENS)
    parser.add_argument("--manual-clock", action="store_true", help="time moves only through POST /_clock")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    upstreams = {name: int(port) for name, port in (u.split("=", 1) for u in args.upstream)}
    fake = Fake(args.ttl, ManualClock() if args.manual_clock else None, args.reply_tokens)
    import uvloop

    uvloop.install()
    asyncio.run(serve(fake, args.control_port, upstreams, args.host))


if __name__ == "__main__":
    main()
