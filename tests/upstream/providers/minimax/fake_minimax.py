"""A fake MiniMax API: the OpenAI-compatible chat endpoint (`POST /v1/chat/completions`), strict about
what MiniMax documents and is seen to do: the API key as a Bearer token (a 401 in MiniMax's own
error envelope otherwise), business failures answered with HTTP 200 and `base_resp.status_code`
other than 0, thinking in `reasoning_details` with `reasoning_split` and in a `<think>` block of
`content` without it. A stream's last chunk carries the finish reason and the usage; `[DONE]` is
sent only when `done_marker` is set."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

KEY = "sk-api-Mx7fQ2pL9vR4tY8wZ1aB3cD5eF7gH9jK"
REPLY_PIECES = ["Hello! ", "I am ", "MiniMax."]
THOUGHT = "The user says hello; answer briefly."
# platform.minimax.io/docs/api-reference/text-openai-api ("Supported Models").
MODELS = frozenset({"MiniMax-M3", "MiniMax-M2.7", "MiniMax-M2.7-highspeed", "MiniMax-M2.5", "MiniMax-M2.5-highspeed",
                    "MiniMax-M2.1", "MiniMax-M2.1-highspeed", "MiniMax-M2"})
USAGE = {"prompt_tokens": 21, "completion_tokens": 13, "total_tokens": 34}


def base_resp(code: int, message: str) -> web.Response:
    """A business failure: HTTP 200 with `base_resp` (MiniMax-AI/MiniMax-01#37 quotes
    {"base_resp": {"status_code": 2049, "status_msg": "invalid api key"}}; the codes are those of
    platform.minimax.io/docs/api-reference/errorcode)."""
    return web.json_response({"id": "", "choices": None, "base_resp": {"status_code": code, "status_msg": message}})


@dataclass
class FakeMiniMax(FakeBase):
    key: str = KEY
    tool_call: dict[str, Any] | None = None  # {"name", "arguments"}: the model calls this tool
    fail: tuple[int, str] | None = None  # (status_code, status_msg) answered in base_resp
    fail_mid_stream: tuple[int, str] | None = None  # a base_resp failure after the first chunk
    done_marker: bool = False
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        # platform.minimax.io/docs/api-reference/text-openai-api: base URL https://api.minimax.io/v1
        # (api.minimaxi.com/v1 in China), chat at /chat/completions; any other path is a 404.
        app.router.add_post("/v1/chat/completions", self.chat)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append({"headers": dict(request.headers), "body": body})
        # The key as a Bearer token; without it MiniMax answers 401 in this envelope
        # (wavetermdev/waveterm#3238, NousResearch/hermes-agent#2094: error 1004 "login fail").
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"type": "error", "error": {
                "type": "authorized_error", "http_code": "401",
                "message": "login fail: Please carry the API secret key in the 'Authorization' field of the request "
                           "header (1004)"}, "request_id": "0634322"}, status=401)
        if self.fail is not None:
            return base_resp(*self.fail)
        # platform.minimax.io/docs/api-reference/errorcode: 2013 invalid params (an unknown model, no
        # messages); the chat API takes system, user, assistant and tool turns.
        messages = body.get("messages")
        if body.get("model") not in MODELS:
            return base_resp(2013, f"invalid params, unknown model '{body.get('model')}'")
        if not messages or any(m.get("role") not in ("system", "user", "assistant", "tool") for m in messages):
            return base_resp(2013, "invalid params, messages")
        # platform.minimax.io/docs/api-reference/text-openai-api: earlier thinking comes back whole,
        # in `reasoning_details` (as a list) when it was split off.
        for turn in messages:
            details = turn.get("reasoning_details")
            if details is not None and not (isinstance(details, list) and all(
                    isinstance(d, dict) and isinstance(d.get("text"), str) for d in details)):
                return base_resp(2013, "invalid params, reasoning_details")
        split = body.get("reasoning_split") is True
        calls = [{"id": "call_function_7t3k", "type": "function", "index": 0,
                  "function": {"name": self.tool_call["name"], "arguments": self.tool_call["arguments"]}}] \
            if self.tool_call and body.get("tools") and messages[-1].get("role") != "tool" else None
        finish = "tool_calls" if calls else "stop"
        think = [{"type": "reasoning.text", "id": "reasoning-text-1", "format": "MiniMax-response-v1", "index": 0,
                  "text": THOUGHT}]
        pieces = [] if calls else list(REPLY_PIECES)
        if not split:  # thinking stays in the content, in a <think> block
            pieces = [f"<think>\n{THOUGHT}\n</think>\n\n", *pieces]
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "name": "MiniMax AI", "content": "".join(pieces)}
            if split:
                message["reasoning_details"] = think
            if calls:
                message["tool_calls"] = calls
            return web.json_response({"id": "05b8", "object": "chat.completion", "created": 1762300000,
                                      "model": body["model"], "usage": USAGE, "input_sensitive": False,
                                      "output_sensitive": False, "base_resp": {"status_code": 0, "status_msg": ""},
                                      "choices": [{"index": 0, "finish_reason": finish, "message": message}]})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        deltas: list[dict[str, Any]] = [{"reasoning_details": think}] if split else []
        deltas += [{"content": p} for p in pieces] + ([{"tool_calls": calls}] if calls else [])
        for i, delta in enumerate(deltas):
            last = i == len(deltas) - 1
            chunk: dict[str, Any] = {"id": "05b8", "object": "chat.completion.chunk", "created": 1762300000,
                                     "model": body["model"],
                                     "choices": [{"index": 0, "delta": {"role": "assistant", **delta},
                                                  **({"finish_reason": finish} if last else {})}]}
            if last:
                chunk |= {"usage": USAGE, "base_resp": {"status_code": 0, "status_msg": ""}}
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
            if self.fail_mid_stream is not None:
                code, text = self.fail_mid_stream
                failure = {"id": "05b8", "choices": None, "base_resp": {"status_code": code, "status_msg": text}}
                await response.write(b"data: " + orjson.dumps(failure) + b"\n\n")
                break
        if self.done_marker:
            await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
