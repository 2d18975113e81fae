"""Prompt-cache affinity: a conversation stays on the channel and key whose cache holds its prefix.

Providers cache prompt prefixes per account or per key (Anthropic's `cache_control`, OpenAI's
automatic caching and `prompt_cache_key`, DeepSeek, Gemini's implicit caching, Bedrock's cache
points), and bill a cached input token at about a tenth of a fresh one. A coding agent re-sends its
whole conversation every turn: spread over N channels or keys it would find its cache 1 time in N.

A request's session is found, without configuration, in what clients already send (first match):

  header         `X-Session-Id`
  claude-code    `X-Claude-Code-Session-Id`, or the session in Messages' `metadata.user_id` (a JSON
                 object with `session_id` in current Claude Code, `…_session_<uuid>` in older ones)
  codex          Codex's `session_id` / `conversation_id` headers
  prompt_cache_key  OpenAI's `prompt_cache_key` (Chat Completions, Responses)
  cached_content    Gemini's `cachedContent` (the cache lives under the key that made it)
  user           OpenAI's `user`, Responses' `safety_identifier`
  prefix         else a digest of the stable prefix: system/instructions, the first message, tools

The pin — `{u<user>}:aff:<group and model digest>:<session digest>` → `<channel id>:<key
fingerprint>` — is shared by every API process through Redis; it is read, and its life renewed, by
the admission's own script (no round trip of its own), for the cache lifetime the request asks
for: five minutes by default (ChannelAffinityTTLSeconds), an hour when it marks an Anthropic
`cache_control` with `ttl: "1h"`, a day with OpenAI's `prompt_cache_retention: "24h"`. The channel
index decides whether the pin holds (api/channels/index.py): never past the key's group and
model permissions (the pin is looked for only among the channels of this group and model), and not
when its channel or key is disabled, saturated or failing — then the session moves, and the move is
counted.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from api.relay.modes import MODES
from api.services import redis_keys
from api.services.store import Store
from api.upstream.base import RelayMode

CACHED_MODES = frozenset(mode for mode, spec in MODES.items() if spec.cached)  # their rows say so (modes.py)
ONE_HOUR = 3600
ONE_DAY = 86400
SKETCH_BYTES = 8192  # a long prefix is digested by its two ends and its length

# Outcomes, as the log's `other.affinity` and /metrics say them (a request without a session has none)
HIT, NEW, MOVED = "hit", "new", "moved"


@dataclass(frozen=True, slots=True)
class Session:
    source: str
    digest: str
    ttl: int


@dataclass(frozen=True, slots=True)
class Pin:
    channel_id: int
    fingerprint: str  # "" when the channel's upstream caches per channel, not per key

    def text(self) -> str:
        return f"{self.channel_id}:{self.fingerprint}"

    @classmethod
    def parse(cls, text: str | None) -> Pin | None:
        if not text:
            return None
        head, _, fp = text.partition(":")
        return cls(int(head), fp) if head.isdigit() else None


def _digest(text: str | bytes) -> str:
    """A session's digest. A header's text keeps a byte that is not UTF-8 as a surrogate (aiohttp
    decodes headers with surrogateescape): digested as it came, not refused."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _claude_session(body: Mapping[str, Any]) -> str:
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, Mapping) else None
    if not isinstance(user_id, str) or not user_id:
        return ""
    if user_id.startswith("{"):
        try:
            data = orjson.loads(user_id)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, Mapping):
            session = data.get("session_id")
            return session if isinstance(session, str) else ""
    _, marker, session = user_id.rpartition("_session_")
    return session if marker else ""


def identify(request: web.Request, native: Mapping[str, Any], body: Mapping[str, Any]) -> tuple[str, str]:
    """(source, id) of the request's session from what the client sent, or ("", "")."""
    headers = request.headers
    explicit = headers.get("X-Session-Id")
    if explicit:
        return "header", explicit
    claude = headers.get("X-Claude-Code-Session-Id") or _claude_session(native)
    if claude:
        return "claude-code", claude
    codex = headers.get("session_id") or headers.get("conversation_id")
    if codex:
        return "codex", codex
    for source, field in (("prompt_cache_key", "prompt_cache_key"), ("cached_content", "cachedContent")):
        value = native.get(field) or body.get(field)
        if isinstance(value, str) and value:
            return source, value
    for field in ("user", "safety_identifier"):
        value = native.get(field) or body.get(field)
        if isinstance(value, str) and value:
            return "user", value
    return "", ""


def _sketch(value: Any) -> bytes:
    """One part of a prefix, serialized; a long one by its two ends and its length (so a 100k-token
    system prompt costs no more than a short one)."""
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if len(data) > SKETCH_BYTES:
        data = data[:SKETCH_BYTES // 2] + data[-SKETCH_BYTES // 2:] + str(len(data)).encode()
    return data


def prefix_digest(body: Mapping[str, Any]) -> str:
    """The digest of what stays the same from turn to turn: the system prompt, the first message,
    the tools (of the request as the relay reads it, converted to OpenAI's shape). Each part is
    sketched on its own, so a conversation's own first message always counts, however long the
    system prompt and the tools around it."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = [body.get("prompt")]
    parts: list[bytes] = []
    for message in messages:
        parts.append(_sketch(message))
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ("system", "developer"):
            break
    parts.append(_sketch(body.get("tools")))
    return _digest(b"\0".join(parts))


def _one_hour(blocks: Any) -> bool:
    if not isinstance(blocks, list):
        return False
    for block in blocks:
        control = block.get("cache_control") if isinstance(block, Mapping) else None
        if isinstance(control, Mapping) and control.get("ttl") == "1h":
            return True
    return False


def lifetime(native: Mapping[str, Any], default: int) -> int:
    """The cache lifetime the request asks for, in seconds."""
    if native.get("prompt_cache_retention") == "24h":
        return max(default, ONE_DAY)
    if _one_hour(native.get("system")) or _one_hour(native.get("tools")):
        return max(default, ONE_HOUR)
    messages = native.get("messages")
    if isinstance(messages, list):
        for message in messages[-4:]:
            if isinstance(message, Mapping) and _one_hour(message.get("content")):
                return max(default, ONE_HOUR)
    return default


def session_of(request: web.Request, mode: RelayMode, native: Mapping[str, Any], body: Mapping[str, Any],
               default_ttl: int) -> Session | None:
    """The request's session, or None when its mode has no prompt cache to keep."""
    if mode not in CACHED_MODES:
        return None
    source, ident = identify(request, native, body)
    digest = _digest(ident) if ident else prefix_digest(body)
    return Session(source or "prefix", digest, lifetime(native, default_ttl))


class Pins:
    """The pins in Redis (read by the admission script, api/services/billing/quota.py; written here when a
    session gets a new channel or key)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._bases: dict[tuple[int, str, str], str] = {}  # (user, group, model) → the key up to the session

    def key(self, user_id: int, group: str, model: str, session: Session) -> str:
        base = self._bases.get((user_id, group, model))
        if base is None:
            if len(self._bases) >= 4096:
                self._bases.clear()
            base = self._bases[user_id, group, model] = redis_keys.user_key(
                self.store, user_id, "aff", _digest(group + chr(0) + model), "")
        return base + session.digest

    async def write(self, key: str, pin: Pin, ttl: int) -> None:
        await self.store.redis.set(key, pin.text(), ex=ttl)
