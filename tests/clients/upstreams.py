"""A scripted OpenAI chat-completions upstream for the CLI tests' converted legs: it reduces a request
to an `AgentView`, asks its `script` for the next `Turn` and answers it, streamed or not, with the
usage it is given (OpenAI's fields). It checks the key and keeps every request in `seen`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.relay.agent_script import AgentView, Script, Turn


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _texts(content: Any) -> list[str]:
    """The texts of a content that is a string or a list of typed parts."""
    if isinstance(content, str):
        return [content]
    return [part["text"] for part in content or () if isinstance(part, dict) and part.get("type") == "text"
            and isinstance(part.get("text"), str)]


@dataclass
class ScriptedChat:
    key: str = "sk-upstream-secret"
    script: Script | None = None
    usage: dict[str, Any] = field(default_factory=lambda: {
        "prompt_tokens": 4000, "completion_tokens": 40, "total_tokens": 4040,
        "prompt_tokens_details": {"cached_tokens": 3000}})
    seen: list[Seen] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        return app

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView(tools={t["function"]["name"]: t["function"].get("parameters") or {}
                                for t in body.get("tools") or () if t.get("type") == "function"})
        for message in body.get("messages") or ():
            role = message.get("role")
            if role == "assistant":
                view.turns += 1
            elif role == "user":
                view.user_texts += _texts(message.get("content"))
            elif role == "tool":
                view.tool_results.append("\n".join(_texts(message.get("content"))))
        return view

    def chunks(self, body: dict[str, Any], head: dict[str, Any], message: dict[str, Any],
               finish: str) -> list[dict[str, Any]]:
        """The answer as stream chunks: the message at once, the finish reason, then the usage when asked."""
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **call} for call in delta["tool_calls"]]
        chunks = [{**head, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**head, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": self.usage})
        return chunks

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read() or b"{}")
        self.seen.append(Seen(request.path_qs, dict(request.headers), body))
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            refusal = {"message": "Incorrect API key provided", "type": "invalid_request_error", "param": None,
                       "code": "invalid_api_key"}
            return web.json_response({"error": refusal}, status=401)
        turn = self.script(self.view(body)) if self.script is not None else Turn(text="Hello.")
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool:
            message["tool_calls"] = [{"id": turn.tool["id"], "type": "function", "function": {
                "name": turn.tool["name"], "arguments": orjson.dumps(turn.tool["input"]).decode()}}]
        finish = "tool_calls" if turn.tool else "stop"
        head = {"id": f"chatcmpl-{len(self.seen)}", "created": int(time.time()), "model": body.get("model")}
        if not body.get("stream"):
            return web.json_response({**head, "object": "chat.completion", "usage": self.usage,
                                      "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in self.chunks(body, head, message, finish):
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
