"""A fake Gemini API: `POST /{version}/models/{model}:generateContent`, `:streamGenerateContent`
(`alt=sse`: `data: {…}\\r\\n\\r\\n` frames, no end marker), `:batchEmbedContents`; the key in
`x-goog-api-key`; strict about the body (roles user/model, known part kinds, no OpenAI fields,
functionResponse objects); Google's error bodies. Also serves Vertex AI's paths
(`/v1/projects/{p}/locations/{r}/publishers/google/models/{model}:…`, Bearer token)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

REPLY = "Hello from Gemini, streamed in parts."
PART_KINDS = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "thought"}
OPENAI_FIELDS = {"messages", "model", "max_tokens", "stream", "stream_options", "tools_choice", "response_format"}


@dataclass
class FakeGemini:
    key: str = "AIza-upstream"
    reply: str = REPLY
    thought: str = ""
    call: dict[str, Any] | None = None  # {"name", "args"}: answer with a function call
    usage: dict[str, int] | None = field(default_factory=lambda: {
        "promptTokenCount": 17, "candidatesTokenCount": 8, "totalTokenCount": 25})
    fail_status: int | None = None
    fail_body: dict[str, Any] | None = None
    cut_after: int | None = None  # stream: close after this many text chunks, before the last one
    bearers: set[str] | None = None  # Vertex: the access tokens accepted instead of the key
    seen: list[dict[str, Any]] = field(default_factory=list)
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{version}/models/{target}", self.handle)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/google/models/{target}",
                            self.handle)
        return app

    @staticmethod
    def error(status: int, code: str, message: str, reason: str = "") -> web.Response:
        details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}] if reason else []
        return web.json_response({"error": {"code": status, "message": message, "status": code,
                                            "details": details}}, status=status)

    def problem(self, body: dict[str, Any]) -> str | None:
        leaked = OPENAI_FIELDS & set(body)
        if leaked:
            return f'Invalid JSON payload received. Unknown name "{sorted(leaked)[0]}"'
        for content in body.get("contents") or ():
            if content.get("role") not in ("user", "model"):
                return f"Please use a valid role: user, model (got {content.get('role')})"
            for part in content.get("parts") or ():
                if not set(part) <= PART_KINDS:
                    return f"Unknown part {sorted(part)}"
                response = part.get("functionResponse")
                if response is not None and not isinstance(response.get("response"), dict):
                    return "functionResponse.response must be an object"
        return None

    def candidate_parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if self.thought:
            parts.append({"text": self.thought, "thought": True})
        if self.reply:
            parts.append({"text": self.reply})
        if self.call:
            parts.append({"functionCall": self.call})
        return parts

    def answer(self, parts: list[dict[str, Any]], finish: str | None, usage: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": "fake", "responseId": "resp-1"}
        if usage and self.usage is not None:
            data["usageMetadata"] = self.usage
        return data

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.seen.append({"path": request.path, "query": dict(request.query), "model": model, "action": action,
                          "headers": dict(request.headers), "body": body})
        if self.bearers is not None:
            if request.headers.get("Authorization") not in {f"Bearer {t}" for t in self.bearers}:
                return self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        elif request.headers.get("x-goog-api-key") != self.key or "key" in request.query:
            return self.error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                              "API_KEY_INVALID")
        if self.fail_status:
            return web.json_response(self.fail_body or {}, status=self.fail_status)
        if action == "batchEmbedContents":
            return web.json_response({"embeddings": [{"values": [0.1 * i, 0.2]} for i, _ in
                                                     enumerate(body["requests"])]})
        problem = self.problem(body)
        if problem:
            return self.error(400, "INVALID_ARGUMENT", problem)
        finish = "STOP"
        if action == "generateContent":
            return web.json_response(self.answer(self.candidate_parts(), finish, True))
        if action != "streamGenerateContent" or request.query.get("alt") != "sse":
            return self.error(404, "NOT_FOUND", f"unknown action {action}")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        frames: list[dict[str, Any]] = []
        if self.thought:
            frames.append(self.answer([{"text": self.thought, "thought": True}], None, False))
        words = self.reply.split(" ") if self.reply else []
        for i, word in enumerate(words):
            frames.append(self.answer([{"text": word + (" " if i < len(words) - 1 else "")}], None, False))
        if self.call:
            frames.append(self.answer([{"functionCall": self.call}], None, False))
        frames.append(self.answer([], finish, True))  # the last chunk: finish reason and usage
        for n, frame in enumerate(frames):
            if self.cut_after is not None and n >= self.cut_after:
                request.transport.close()
                return resp
            await resp.write(b"data: " + orjson.dumps(frame) + b"\r\n\r\n")
        return resp
