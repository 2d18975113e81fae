"""A mock OpenAI upstream with no delay: `python -m bench.mock_upstream --port P [--chunks N]`.

POST /v1/chat/completions
  non-streaming: one fixed JSON completion with `usage` (PROMPT_TOKENS, COMPLETION_TOKENS);
  "stream": true: N chunks of CONTENT each, then, when `stream_options.include_usage` is set, the
  final chunk with empty choices and the same usage, then `data: [DONE]`. No sleep anywhere.
POST /slow/v1/chat/completions
  the same, with SLOW_CHUNKS chunks SLOW_INTERVAL_MS apart: the long-lived streams of the
  concurrent-streams leg (routed there through its own model name, see bench.gateway).
POST /v1/messages, /slow/v1/messages
  the same answers in Anthropic's Messages format (JSON, or its SSE events: message_start,
  content_block_start, N content_block_delta, content_block_stop, message_delta with the usage,
  message_stop): what a Claude channel of the gateway converts to and from.
GET /_stats   counters (requests, streams, chunks sent, usage chunks) for the smoke checks.
GET /v1/models, GET /health

Bodies are encoded once per model name, so the mock costs as little CPU as the stack allows.
"""
from __future__ import annotations

import argparse
import asyncio
import logging

import orjson
from aiohttp import web

PROMPT_TOKENS = 1000
COMPLETION_TOKENS = 200
CONTENT = "bench "  # one content chunk; the load generators count its occurrences
CHUNKS = 16
SLOW_CHUNKS = 20
SLOW_INTERVAL_MS = 250  # 5 s streams: long enough that all of a 1000-stream burst is open at once
STATS = web.AppKey("stats", dict)
CONFIG = web.AppKey("config", dict)
CACHE = web.AppKey("cache", dict)

USAGE = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
         "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}


def completion_body(model: str) -> bytes:
    return orjson.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 1700000000, "model": model,
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": CONTENT * CHUNKS, "refusal": None}}],
        "usage": USAGE,
    })


def stream_frames(model: str) -> tuple[bytes, bytes, bytes, bytes]:
    """(first chunk with the role, one content chunk, the finish chunk, the usage chunk)."""
    def frame(choices: list, usage: dict | None = None) -> bytes:
        chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
                 "model": model, "system_fingerprint": "fp_bench", "choices": choices}
        if usage is not None:
            chunk["usage"] = usage
        return b"data: " + orjson.dumps(chunk) + b"\n\n"

    role = frame([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    content = frame([{"index": 0, "delta": {"content": CONTENT}, "finish_reason": None}])
    finish = frame([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    return role, content, finish, frame([], USAGE)


def claude_body(model: str) -> bytes:
    return orjson.dumps({
        "id": "msg_bench", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": CONTENT * CHUNKS}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": COMPLETION_TOKENS},
    })


def claude_frames(model: str) -> tuple[bytes, bytes, bytes]:
    """(message_start + content_block_start, one text delta, content_block_stop + message_delta + message_stop)."""
    def event(name: str, data: dict) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **data}) + b"\n\n"

    start = event("message_start", {"message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": 1}}})
    start += event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    delta = event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": CONTENT}})
    end = event("content_block_stop", {"index": 0})
    end += event("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                   "usage": {"output_tokens": COMPLETION_TOKENS}})
    end += event("message_stop", {})
    return start, delta, end


async def messages(request: web.Request) -> web.StreamResponse:
    app = request.app
    app[STATS]["requests"] += 1
    body = orjson.loads(await request.read())
    model = str(body.get("model", ""))
    cache = app[CACHE]
    entry = cache.get(("claude", model))
    if entry is None:
        entry = cache[("claude", model)] = (claude_body(model), claude_frames(model))
    whole, (start, delta, end) = entry
    if not body.get("stream"):
        return web.Response(body=whole, content_type="application/json")
    app[STATS]["usage_chunks"] += 1  # Claude's message_delta always carries the usage
    return await _stream(request, start, delta, end)


async def _stream(request: web.Request, head: bytes, piece: bytes, tail: bytes) -> web.StreamResponse:
    """`head`, the content piece N times (SLOW_CHUNKS apart on /slow/), then `tail`."""
    app = request.app
    stats, config = app[STATS], app[CONFIG]
    slow = request.path.startswith("/slow/")
    chunks = config["slow_chunks"] if slow else config["chunks_per_stream"]
    interval = config["slow_interval"] if slow else 0.0
    stats["streams"] += 1
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    try:
        await resp.prepare(request)
        await resp.write(head)
        for _ in range(chunks):
            if interval:
                await asyncio.sleep(interval)
            await resp.write(piece)
            stats["chunks"] += 1
        await resp.write(tail)
        await resp.write_eof()
    except ConnectionResetError:  # the client went away (wrk stops mid-answer at the end of a run)
        stats["client_gone"] += 1
    return resp


def _cached(app: web.Application, model: str) -> tuple[bytes, tuple[bytes, bytes, bytes, bytes]]:
    cache = app[CACHE]
    entry = cache.get(model)
    if entry is None:
        entry = cache[model] = (completion_body(model), stream_frames(model))
    return entry


async def chat(request: web.Request) -> web.StreamResponse:
    app = request.app
    app[STATS]["requests"] += 1
    body = orjson.loads(await request.read())
    whole, (role, content, finish, usage) = _cached(app, str(body.get("model", "")))
    if not body.get("stream"):
        return web.Response(body=whole, content_type="application/json")
    tail = finish
    if (body.get("stream_options") or {}).get("include_usage"):
        tail += usage
        app[STATS]["usage_chunks"] += 1
    return await _stream(request, role, content, tail + b"data: [DONE]\n\n")


async def stats(request: web.Request) -> web.Response:
    return web.json_response({**request.app[STATS], **request.app[CONFIG]})


async def models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [
        {"id": m, "object": "model", "owned_by": "bench"} for m in ("gpt-4o-mini", "gpt-4o")]})


async def health(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def create_app(chunks: int = CHUNKS, slow_chunks: int = SLOW_CHUNKS,
               slow_interval_ms: int = SLOW_INTERVAL_MS) -> web.Application:
    app = web.Application(client_max_size=16 * 1024 * 1024)
    app[STATS] = {"requests": 0, "streams": 0, "chunks": 0, "usage_chunks": 0, "client_gone": 0}
    app[CONFIG] = {"chunks_per_stream": chunks, "slow_chunks": slow_chunks, "slow_interval": slow_interval_ms / 1000}
    app[CACHE] = {}
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/slow/v1/chat/completions", chat)
    app.router.add_post("/v1/messages", messages)
    app.router.add_post("/slow/v1/messages", messages)
    app.router.add_get("/_stats", stats)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/slow/v1/models", models)
    app.router.add_get("/health", health)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--chunks", type=int, default=CHUNKS)
    parser.add_argument("--slow-chunks", type=int, default=SLOW_CHUNKS)
    parser.add_argument("--slow-interval-ms", type=int, default=SLOW_INTERVAL_MS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import uvloop

    uvloop.install()
    web.run_app(create_app(args.chunks, args.slow_chunks, args.slow_interval_ms), host=args.host,
                port=args.port, access_log=None, print=None, backlog=4096)


if __name__ == "__main__":
    main()
