"""Coding-agent conversations, as clients send them to the gateway: every turn re-sends the whole
conversation (tools, a long system prompt, the growing history), and each kind of client names its
session its own way.

Kinds (how the gateway can recognise the session):
  prompt_cache_key  OpenAI chat completions with `prompt_cache_key` (Codex-like clients)
  user              OpenAI chat completions with `user`
  header            OpenAI chat completions with an `X-Session-Id` header
  prefix            OpenAI chat completions naming nothing: only the stable prefix (system + first
                    messages + tools) tells the session
  claude-code       Anthropic Messages as Claude Code sends them: `metadata.user_id` ending in
                    `_session_<uuid>` (older versions; every other Claude Code session) or a JSON object
                    with `session_id` plus the `X-Claude-Code-Session-Id` header (current ones);
                    `cache_control` on the system prompt and on the last message; streamed

The tools and the first part of the system prompt are the same for every session (as an agent's
are); the rest of the system prompt is the session's own and starts with `[bench-session ID]`, which
the fake upstream reads to tell which session each request belongs to. All text is generated from
seeds: the same run sends the same bytes.
"""
from __future__ import annotations

import hashlib
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

KINDS = ("prompt_cache_key", "user", "header", "prefix", "claude-code")
FAMILY = {"claude-code": "anthropic"}  # every other kind speaks OpenAI
OPENAI_MODEL = "gpt-4o"  # cached input at 0.5 of the input price (the gateway's default CacheRatio)
ANTHROPIC_MODEL = "claude-sonnet-4-20250514"  # cache reads at 0.1, writes at 1.25
SESSION_HEADER = "X-Session-Id"
REQUEST_ID_HEADER = "X-Oneapi-Request-Id"
VOCABULARY = ("def", "return", "self", "import", "class", "async", "await", "value", "config", "request", "path",
              "error", "result", "items", "index", "test", "assert", "None", "True", "False", "dict", "list", "str",
              "int", "for", "in", "if", "else", "with", "open", "read", "write", "json", "log", "user", "key")


def family(kind: str) -> str:
    return FAMILY.get(kind, "openai")


def kind_of(sid: str) -> str:
    """The kind named in a session id (`<phase>.<index>.<kind>`)."""
    return sid.split(".")[2] if sid.count(".") >= 2 else ""


def text(seed: str, tokens: int) -> str:
    """About `tokens` tokens (4 bytes each) of code-like text, the same for the same seed."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    lines: list[str] = []
    size = 0
    while size < tokens * 4:
        line = " ".join(rng.choices(VOCABULARY, k=rng.randint(4, 12)))
        lines.append(("    " * rng.randint(0, 3)) + line)
        size += len(lines[-1]) + 1
    return "\n".join(lines)


@dataclass(frozen=True)
class Shape:
    """How big a conversation is (tokens as the fake counts them: 4 bytes each)."""

    turns: int = 12
    tools_tokens: int = 1500  # shared by every session
    shared_system_tokens: int = 1500  # the agent's own instructions: shared
    session_system_tokens: int = 2500  # the session's project context: its own
    user_tokens: int = 800  # each turn's new user message (a request, a file, a tool's output)
    tools: int = 8


def tools_openai(shape: Shape) -> list[dict[str, Any]]:
    per = max(1, shape.tools_tokens // shape.tools)
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": text(f"tool-{i}", per - 40),
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "query": {"type": "string"}},
                       "required": ["path"]}}} for i in range(shape.tools)]


def tools_anthropic(shape: Shape) -> list[dict[str, Any]]:
    return [{"name": t["function"]["name"], "description": t["function"]["description"],
             "input_schema": t["function"]["parameters"]} for t in tools_openai(shape)]


@dataclass
class Turn:
    """One request of a session, as the client saw it."""

    phase: str
    session: str
    kind: str
    turn: int
    stream: bool
    status: int = 0
    ok: bool = False
    error: str = ""
    request_id: str = ""
    seconds: float = 0.0
    prompt_tokens: int = 0  # as the gateway's answer reported them (input + cache reads + writes)
    cached_tokens: int = 0
    creation_tokens: int = 0
    started: float = 0.0


@dataclass
class Session:
    phase: str
    index: int
    kind: str
    shape: Shape
    seed: str
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, text)
    turns: list[Turn] = field(default_factory=list)

    @property
    def sid(self) -> str:
        return f"{self.phase}.{self.index:03d}.{self.kind}"  # no '.' in a phase or a kind: split on it

    @property
    def family(self) -> str:
        return family(self.kind)

    def system_parts(self) -> tuple[str, str]:
        shared = text("agent-system", self.shape.shared_system_tokens)
        own = f"[bench-session {self.sid}]\n" + text(f"{self.seed}-context", self.shape.session_system_tokens)
        return shared, own

    def user_message(self, turn: int) -> str:
        return text(f"{self.seed}-turn-{turn}", self.shape.user_tokens)

    def stream(self, turn: int) -> bool:
        return self.family == "anthropic" or (self.index + turn) % 2 == 0

    def request(self, turn: int, tools: list[dict[str, Any]]) -> tuple[str, dict[str, str], dict[str, Any]]:
        """(path, headers, body) of turn `turn` (1-based): the whole conversation so far plus the new message."""
        history = [*self.history, ("user", self.user_message(turn))]
        shared, own = self.system_parts()
        stream = self.stream(turn)
        if self.family == "anthropic":
            blocks: list[list[dict[str, Any]]] = [[{"type": "text", "text": body}] for _role, body in history]
            blocks[-1][-1]["cache_control"] = {"type": "ephemeral"}  # Claude Code marks the last message
            messages = [{"role": role, "content": content} for (role, _), content in zip(history, blocks, strict=True)]
            account = uuid.UUID(bytes=hashlib.md5(f"{self.seed}-account".encode()).digest())
            session = uuid.UUID(bytes=hashlib.md5(f"{self.seed}-session".encode()).digest())
            user_hash = hashlib.sha256(f"{self.seed}-user".encode()).hexdigest()
            claude_headers = {"anthropic-version": "2023-06-01"}
            if self.index // len(KINDS) % 2:  # current Claude Code: a JSON user_id, and the session header
                user_id = orjson.dumps({"device_id": user_hash, "account_uuid": str(account),
                                        "session_id": str(session)}).decode()
                claude_headers["X-Claude-Code-Session-Id"] = str(session)
            else:  # older versions: user_<hash>_account_<uuid>_session_<uuid>
                user_id = f"user_{user_hash}_account_{account}_session_{session}"
            return "/v1/messages", claude_headers, {
                "model": ANTHROPIC_MODEL, "max_tokens": 32000, "stream": stream, "tools": tools,
                "system": [{"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
                           {"type": "text", "text": own}],
                "messages": messages, "metadata": {"user_id": user_id}}
        body: dict[str, Any] = {
            "model": OPENAI_MODEL, "max_tokens": 4096, "stream": stream, "tools": tools,
            "messages": [{"role": "system", "content": shared + "\n\n" + own},
                         *({"role": role, "content": content} for role, content in history)]}
        if stream:
            body["stream_options"] = {"include_usage": True}
        headers: dict[str, str] = {}
        if self.kind == "prompt_cache_key":
            body["prompt_cache_key"] = self.sid
        elif self.kind == "user":
            body["user"] = self.sid
        elif self.kind == "header":
            headers[SESSION_HEADER] = self.sid
        return "/v1/chat/completions", headers, body


def _usage(fam: str, usage: dict[str, Any], turn: Turn) -> None:
    if fam == "anthropic":
        read = int(usage.get("cache_read_input_tokens") or 0)
        created = int(usage.get("cache_creation_input_tokens") or 0)
        turn.prompt_tokens = int(usage.get("input_tokens") or 0) + read + created
        turn.cached_tokens, turn.creation_tokens = read, created
    else:
        turn.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        turn.cached_tokens = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)


async def _read_stream(resp: aiohttp.ClientResponse, fam: str, turn: Turn) -> str:
    """The answer's text from SSE; the usage from its usage chunk (OpenAI) or message_start + message_delta."""
    parts: list[str] = []
    usage: dict[str, Any] = {}
    done = False
    buffer = b""
    async for chunk in resp.content.iter_any():
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                done = True
                continue
            event = orjson.loads(data)
            if fam == "anthropic":
                kind = event.get("type")
                if kind == "message_start":
                    usage.update(event["message"].get("usage") or {})
                elif kind == "message_delta":
                    usage.update(event.get("usage") or {})
                elif kind == "content_block_delta":
                    parts.append(event["delta"].get("text") or "")
                elif kind == "message_stop":
                    done = True
                elif kind == "error":
                    raise ValueError(f"error event: {event}")
            else:
                if event.get("usage"):
                    usage = event["usage"]
                for choice in event.get("choices") or ():
                    parts.append((choice.get("delta") or {}).get("content") or "")
    if not done:
        raise ValueError("the stream ended without its end marker")
    if not usage:
        raise ValueError("no usage in the stream")
    _usage(fam, usage, turn)
    return "".join(parts)


async def send_turn(http: aiohttp.ClientSession, base: str, token: str, session: Session, number: int,
                    tools: list[dict[str, Any]]) -> Turn:
    """Send turn `number` of `session`; on success the answer joins the session's history."""
    path, headers, body = session.request(number, tools)
    if session.family == "anthropic":
        headers["x-api-key"] = token
    else:
        headers["Authorization"] = f"Bearer {token}"
    turn = Turn(session.phase, session.sid, session.kind, number, bool(body.get("stream")), started=time.time())
    began = time.monotonic()
    answer = ""
    try:
        async with http.post(base + path, data=orjson.dumps(body),
                             headers={**headers, "Content-Type": "application/json"}) as resp:
            turn.status = resp.status
            turn.request_id = resp.headers.get(REQUEST_ID_HEADER, "")
            if resp.status != 200:
                turn.error = (await resp.text())[:300]
            elif turn.stream:
                answer = await _read_stream(resp, session.family, turn)
                turn.ok = bool(answer)
            else:
                data = await resp.json(content_type=None)
                _usage(session.family, data.get("usage") or {}, turn)
                if session.family == "anthropic":
                    answer = "".join(b.get("text") or "" for b in data.get("content") or ())
                else:
                    answer = (data["choices"][0]["message"].get("content") or "") if data.get("choices") else ""
                turn.ok = bool(answer)
            if resp.status == 200 and not turn.ok:
                turn.error = "an empty answer"
    except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
        turn.error = f"{type(exc).__name__}: {exc}"[:300]
    turn.seconds = time.monotonic() - began
    if turn.ok:
        session.history += [("user", session.user_message(number)), ("assistant", answer)]
    session.turns.append(turn)
    return turn


def new_sessions(phase: str, count: int, shape: Shape, kinds: tuple[str, ...] = KINDS, seed: str = "bench"
                 ) -> list[Session]:
    """`count` sessions, the kinds in turn (so every kind is there from five sessions on)."""
    return [Session(phase, i, kinds[i % len(kinds)], shape, f"{seed}-{phase}-{i}") for i in range(count)]
