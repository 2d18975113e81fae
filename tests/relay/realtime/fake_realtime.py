"""A fake of OpenAI's Realtime API over a WebSocket (the GA protocol), at OpenAI's path and at Azure OpenAI's
two, answering as they do and refusing what they refuse. Each rule cites its source:

- the handshake: `GET /v1/realtime?model=…` with `Authorization: Bearer <key>` (OpenAI: developers.openai.com/api/
  docs/guides/realtime-websocket; the openai SDK's resources/realtime/realtime.py `_connect_ws`); Azure's v1 API
  `GET /openai/v1/realtime?model=<deployment>` and its dated API `GET /openai/realtime?api-version=…&deployment=…`,
  both with the `api-key` header (learn.microsoft.com/azure/foundry/openai/how-to/realtime-audio-websockets; the SDK's
  lib/azure.py `_configure_realtime`);
- a wrong key: HTTP 401 before the upgrade, OpenAI's `invalid_api_key` error (developers.openai.com/api/docs/guides/
  error-codes, "401 - Invalid Authentication"); Azure's `{"error":{"code":"401","message":"Access denied due to invalid
  subscription key or wrong API endpoint…"}}` (as tests/upstream/providers/azure/fake_azure.py cites);
- a handshake that names no model, or a model/deployment the account does not have: HTTP 400 / 404 before the upgrade
  (OpenAI's `model_not_found`; Azure's `DeploymentNotFound`, as tests/upstream/providers/azure/fake_azure.py cites);
- on open the server sends `session.created` (types/realtime/session_created_event.py);
- client events: the types of the SDK's types/realtime/realtime_client_event.py; any other type, or a frame that is not
  a JSON object, gets an `error` event (types/realtime/realtime_error_event.py) and changes nothing;
- `session.update` needs `session.type` (realtime_session_create_request_param.py: `type: Required[...]`) and may not
  change `model` (session_update_event_param.py: "any field except for `voice` and `model`");
- `conversation.item.create`: a user message's content parts are `input_text`, `input_audio` or `input_image`
  (realtime_conversation_item_user_message_param.py);
- `response.create` → `response.created`, the output item and content part added, `response.output_text.delta`s,
  the done events, then `response.done` with `usage` (realtime_response_usage.py and its token details); an audio
  answer (`audio_chunk` set here) has an `audio` part, each piece of its transcript a
  `response.output_audio_transcript.delta` followed by a `response.output_audio.delta` of base64 audio
  (response_audio_transcript_delta_event.py, response_audio_delta_event.py), then their done events;
- `response.cancel` ends the response in progress with `response.done`, status `cancelled`; with none in progress it
  is an `error` event and the session goes on (response_cancel_event.py's docstring);
- `input_audio_buffer.append` adds base64 audio; `input_audio_buffer.commit` of an empty buffer is an `error` ("This
  event will produce an error if the input audio buffer is empty", input_audio_buffer_commit_event.py), else
  `input_audio_buffer.committed` and the user's audio item, then — when the session's `audio.input.transcription`
  names a model (realtime_audio_config_input.py) — `conversation.item.input_audio_transcription.completed` with its
  usage: `{"type": "duration", seconds}` for whisper-1, `{"type": "tokens", …}` for the others
  (conversation_item_input_audio_transcription_completed_event.py, "billed according to the ASR model's pricing").

Error messages this fake words itself (the providers document the codes, not the texts) are marked `fake:`.
"""
from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import WSMsgType, web

CLIENT_EVENTS = frozenset({
    "session.update", "input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear",
    "output_audio_buffer.clear", "conversation.item.create", "conversation.item.retrieve",
    "conversation.item.truncate", "conversation.item.delete", "response.create", "response.cancel",
})
USER_PARTS = frozenset({"input_text", "input_audio", "input_image"})
REPLY_PIECES = ("Hello", " from", " the", " realtime", " fake.")
TRANSCRIPT = "What is the weather like in Lisbon today?"
TRANSCRIPTION_USAGE: dict[str, Any] = {"type": "tokens", "input_tokens": 57, "output_tokens": 11, "total_tokens": 68,
                                       "input_token_details": {"text_tokens": 7, "audio_tokens": 50}}
DEFAULT_USAGE: dict[str, Any] = {
    "total_tokens": 60, "input_tokens": 40, "output_tokens": 20,
    "input_token_details": {"text_tokens": 30, "audio_tokens": 10, "image_tokens": 0, "cached_tokens": 0,
                            "cached_tokens_details": {"text_tokens": 0, "audio_tokens": 0, "image_tokens": 0}},
    "output_token_details": {"text_tokens": 5, "audio_tokens": 15},
}


def _id(prefix: str) -> str:
    return f"{prefix}_{os.urandom(6).hex()}"


@dataclass
class FakeRealtime:
    key: str = "sk-upstream-secret"
    models: tuple[str, ...] = ("gpt-realtime-1.5",)
    azure: bool = False
    usages: list[dict[str, Any]] = field(default_factory=list)  # one per response, in order (then DEFAULT_USAGE)
    hold: bool = False  # a response waits for response.cancel before it ends…
    hold_after: int = 1  # …once this many pieces were sent
    drop: bool = False  # a held response ends with the connection closed instead (no response.done)
    audio_chunk: bytes = b""  # set: answers in audio, this much audio after each piece of the transcript
    handshakes: list[dict[str, Any]] = field(default_factory=list)
    seen: list[dict[str, Any]] = field(default_factory=list)  # client events received
    open_sessions: int = 0
    held: asyncio.Event = field(default_factory=asyncio.Event)  # a held response has started
    server: Any = None

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    def app(self) -> web.Application:
        app = web.Application()
        if self.azure:
            app.router.add_get("/openai/v1/realtime", self.azure_v1)
            app.router.add_get("/openai/realtime", self.azure_dated)
        else:
            app.router.add_get("/v1/realtime", self.openai)
        return app

    # -- handshakes ---------------------------------------------------------------------------------

    def _record(self, request: web.Request) -> None:
        self.handshakes.append({"path": request.path, "query": dict(request.query),
                                "authorization": request.headers.get("Authorization", ""),
                                "api_key": request.headers.get("api-key", "")})

    async def openai(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        auth = request.headers.get("Authorization", "")
        if auth != f"Bearer {self.key}":
            return web.json_response({"error": {"message": "Incorrect API key provided.",
                                                "type": "invalid_request_error", "param": None,
                                                "code": "invalid_api_key"}}, status=401)
        model = request.query.get("model", "")
        if model not in self.models:
            return web.json_response({"error": {
                "message": f"fake: the model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error", "param": None, "code": "model_not_found"}},
                status=404 if model else 400)
        return await self.session(request, model)

    def _azure_refusal(self, request: web.Request, deployment: str) -> web.Response | None:
        if request.headers.get("api-key") != self.key:
            return web.json_response({"error": {"code": "401", "message": (
                "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid "
                "key for an active subscription and use a correct regional API endpoint for your resource.")}},
                status=401)
        if deployment not in self.models:
            return web.json_response({"error": {"code": "DeploymentNotFound", "message": (
                "The API deployment for this resource does not exist. If you created the deployment within the last "
                "5 minutes, please wait a moment and try again.")}}, status=404)
        return None

    async def azure_v1(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        deployment = request.query.get("model", "")
        refused = self._azure_refusal(request, deployment)
        return refused if refused is not None else await self.session(request, deployment)

    async def azure_dated(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        if not request.query.get("api-version"):
            return web.json_response({"error": {"code": "404", "message": "Resource not found"}}, status=404)
        deployment = request.query.get("deployment", "")
        refused = self._azure_refusal(request, deployment)
        return refused if refused is not None else await self.session(request, deployment)

    # -- the session ----------------------------------------------------------------------------------

    async def session(self, request: web.Request, model: str) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.open_sessions += 1
        state: dict[str, Any] = {"model": model, "response": None, "cancel": asyncio.Event(), "audio": 0,
                                 "transcriber": ""}
        await self.send(ws, {"type": "session.created", "session": {
            "type": "realtime", "object": "realtime.session", "id": _id("sess"), "model": model,
            "output_modalities": ["audio"], "instructions": "", "tools": [], "tool_choice": "auto",
            "max_output_tokens": "inf"}})
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                await self.client_event(ws, state, msg.data)
        finally:
            self.open_sessions -= 1
            task = state["response"]
            if task is not None and not task.done():
                task.cancel()
        return ws

    async def send(self, ws: web.WebSocketResponse, event: dict[str, Any]) -> None:
        if not ws.closed:
            await ws.send_str(orjson.dumps({**event, "event_id": _id("event")}).decode())

    async def error(self, ws: web.WebSocketResponse, code: str, message: str, param: str | None = None,
                    client_event: Any = None) -> None:
        await self.send(ws, {"type": "error", "error": {"type": "invalid_request_error", "code": code,
                                                         "message": message, "param": param,
                                                         "event_id": client_event}})

    async def client_event(self, ws: web.WebSocketResponse, state: dict[str, Any], data: str) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            event = None
        if not isinstance(event, dict):
            await self.error(ws, "invalid_json", "fake: the event is not a JSON object")
            return
        self.seen.append(event)
        kind, ident = event.get("type"), event.get("event_id")
        if kind not in CLIENT_EVENTS:
            await self.error(ws, "invalid_value", f"fake: Invalid value: '{kind}'. Supported values are: "
                             + ", ".join(sorted(CLIENT_EVENTS)), "type", ident)
        elif kind == "session.update":
            await self.session_update(ws, state, event)
        elif kind == "conversation.item.create":
            await self.item_create(ws, event)
        elif kind == "input_audio_buffer.append":
            state["audio"] += len(str(event.get("audio") or ""))
        elif kind == "input_audio_buffer.commit":
            await self.commit(ws, state, ident)
        elif kind == "response.create":
            if state["response"] is not None and not state["response"].done():
                await self.error(ws, "conversation_already_has_active_response",
                                 "fake: a response is already in progress", None, ident)
                return
            state["cancel"] = asyncio.Event()
            state["response"] = asyncio.get_running_loop().create_task(self.respond(ws, state))
        elif kind == "response.cancel":
            if state["response"] is None or state["response"].done():
                await self.error(ws, "response_cancel_not_active", "fake: there is no response in progress", None,
                                 ident)
                return
            state["cancel"].set()

    async def session_update(self, ws: web.WebSocketResponse, state: dict[str, Any], event: dict[str, Any]) -> None:
        session = event.get("session")
        ident = event.get("event_id")
        if not isinstance(session, dict):
            await self.error(ws, "missing_required_parameter", "fake: missing `session`", "session", ident)
        elif session.get("type") not in ("realtime", "transcription"):
            await self.error(ws, "missing_required_parameter", "fake: `session.type` is required", "session.type",
                             ident)
        elif "model" in session and session["model"] != state["model"]:
            await self.error(ws, "invalid_value", "fake: the model of a session cannot be changed", "session.model",
                             ident)
        else:
            audio_input = (session.get("audio") or {}).get("input") or {}
            if "transcription" in audio_input:  # null turns transcription off
                state["transcriber"] = str((audio_input["transcription"] or {}).get("model") or "")
            await self.send(ws, {"type": "session.updated", "session": {**session, "model": state["model"]}})

    async def commit(self, ws: web.WebSocketResponse, state: dict[str, Any], ident: Any) -> None:
        if not state["audio"]:
            await self.error(ws, "input_audio_buffer_commit_empty", "fake: the input audio buffer is empty", None,
                             ident)
            return
        state["audio"] = 0
        item_id = _id("item")
        await self.send(ws, {"type": "input_audio_buffer.committed", "previous_item_id": None, "item_id": item_id})
        item = {"id": item_id, "object": "realtime.item", "type": "message", "role": "user", "status": "completed",
                "content": [{"type": "input_audio", "transcript": None}]}
        await self.send(ws, {"type": "conversation.item.added", "previous_item_id": None, "item": item})
        if state["transcriber"]:
            usage = {"type": "duration", "seconds": 3.2} if state["transcriber"] == "whisper-1" \
                else TRANSCRIPTION_USAGE
            await self.send(ws, {"type": "conversation.item.input_audio_transcription.completed", "item_id": item_id,
                                 "content_index": 0, "transcript": TRANSCRIPT, "usage": usage})

    async def item_create(self, ws: web.WebSocketResponse, event: dict[str, Any]) -> None:
        item = event.get("item")
        ident = event.get("event_id")
        if not isinstance(item, dict) or item.get("type") not in ("message", "function_call", "function_call_output"):
            await self.error(ws, "invalid_value", "fake: `item.type` is missing or unknown", "item.type", ident)
            return
        if item.get("type") == "message" and item.get("role") == "user":
            parts = item.get("content")
            if not isinstance(parts, list) or not parts or any(
                    not isinstance(p, dict) or p.get("type") not in USER_PARTS for p in parts):
                await self.error(ws, "invalid_value", "fake: a user message's parts are input_text, input_audio or "
                                 "input_image", "item.content", ident)
                return
        created = {**item, "id": item.get("id") or _id("item"), "object": "realtime.item", "status": "completed"}
        await self.send(ws, {"type": "conversation.item.added", "previous_item_id": None, "item": created})
        await self.send(ws, {"type": "conversation.item.done", "previous_item_id": None, "item": created})

    async def respond(self, ws: web.WebSocketResponse, state: dict[str, Any]) -> None:
        response_id, item_id = _id("resp"), _id("item")
        base = {"object": "realtime.response", "id": response_id, "conversation_id": _id("conv"),
                "output_modalities": ["text"], "max_output_tokens": "inf", "metadata": None}
        await self.send(ws, {"type": "response.created", "response": {**base, "status": "in_progress", "output": [],
                                                                       "usage": None}})
        where = {"response_id": response_id, "item_id": item_id, "output_index": 0, "content_index": 0}
        item = {"id": item_id, "object": "realtime.item", "type": "message", "role": "assistant",
                "status": "in_progress", "content": []}
        await self.send(ws, {"type": "response.output_item.added", "response_id": response_id, "output_index": 0,
                             "item": item})
        audio = base64.b64encode(self.audio_chunk).decode() if self.audio_chunk else ""
        part, text_event = ("audio", "response.output_audio_transcript") if audio else ("output_text",
                                                                                       "response.output_text")
        text_key = "transcript" if audio else "text"
        await self.send(ws, {"type": "response.content_part.added", **where, "part": {"type": part, text_key: ""}})
        status, sent = "completed", 0
        for piece in REPLY_PIECES:
            await self.send(ws, {"type": f"{text_event}.delta", **where, "delta": piece})
            if audio:
                await self.send(ws, {"type": "response.output_audio.delta", **where, "delta": audio})
            sent += 1
            if sent == self.hold_after and self.hold:
                self.held.set()
                if self.drop:
                    await ws.close(code=1011)
                    return
                await state["cancel"].wait()
                status = "cancelled"
                break
        text = "".join(REPLY_PIECES[:sent])
        if status == "completed":
            if audio:
                await self.send(ws, {"type": "response.output_audio.done", **where})
            await self.send(ws, {"type": f"{text_event}.done", **where, text_key: text})
            await self.send(ws, {"type": "response.content_part.done", **where, "part": {"type": part, text_key: text}})
        done_item = {**item, "status": "completed" if status == "completed" else "incomplete",
                     "content": [{"type": part, text_key: text}]}
        await self.send(ws, {"type": "response.output_item.done", "response_id": response_id, "output_index": 0,
                             "item": done_item})
        usage = self.usages.pop(0) if self.usages else DEFAULT_USAGE
        await self.send(ws, {"type": "response.done", "response": {**base, "status": status, "output": [done_item],
                                                                    "usage": usage}})
