"""API-key authentication of the relay.

Accepted: `Authorization: Bearer sk-<key>`, `Authorization: sk-<key>`, the bare key, and (when
Authorization is empty or `midjourney-proxy`) the `mj-api-secret` header; an admin's
`sk-<key>-<channelId>` pins a channel. Lookups: an in-process TTL cache (seconds) → a Redis hash
keyed by the SHA-256 of the key (never the key itself) → the database on a miss. Every `token` and
`user` event drops the entries it names in this process and in Redis at once; a per-entry version
counter keeps a database read that raced such an event from writing a stale copy back.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from aiohttp import web

from api.relay.inbound.base import REQUEST_INBOUND
from api.services import redis_keys
from api.services.budgets.limits import Limit
from api.services.budgets.limits import stored as stored_limits
from api.services.events import EventBus
from api.services.passwords import sha256_hex
from api.services.store import Store
from models import Token, User

log = logging.getLogger(__name__)
LOCAL_TTL = 10.0  # seconds an entry lives in a process without an event
NEGATIVE_TTL = 2.0  # unknown keys: short, so a key created a moment ago works at once anyway
REDIS_TTL = 3600
MAX_LOCAL = 100_000

KEY_MAX = 48  # models.Token.key: the longest key a row can hold (a longer one is no key)

_FILL = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class TokenInfo:
    id: int
    user_id: int
    name: str
    status: int
    expired_time: int
    unlimited: bool
    model_limits: frozenset[str] | None  # None = every model
    allow_ips: tuple[Network, ...] | None  # None = any address
    group: str
    # The MCP servers and tools the key names ("<server>", "<server>__<tool>"); empty: its group's
    # (api.mcp.access)
    mcp_tools: tuple[str, ...] = ()
    limits: tuple[Limit, ...] = ()  # limits over time (api.services.budgets)

    def ip_allowed(self, ip: str) -> bool:
        if self.allow_ips is None:
            return True
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return False
        return any(addr.version == net.version and addr in net for net in self.allow_ips)


@dataclass(frozen=True, slots=True)
class UserInfo:
    id: int
    username: str
    status: int
    role: int
    group: str
    deleted: bool
    limits: tuple[Limit, ...] = ()  # limits over time (api.services.budgets)


REALTIME_KEY_PROTOCOL = "openai-insecure-api-key."


def realtime_protocol_key(request: web.Request) -> str:
    """The key a browser offers as a WebSocket subprotocol, as OpenAI's Realtime API takes it:
    `Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.<key>` (browsers cannot set headers)."""
    for offered in request.headers.getall("Sec-WebSocket-Protocol", ()):
        for protocol in offered.split(","):
            protocol = protocol.strip()
            if protocol.startswith(REALTIME_KEY_PROTOCOL):
                return protocol[len(REALTIME_KEY_PROTOCOL):]
    return ""


def parse_key(request: web.Request) -> tuple[str, str]:
    """(key without sk-, pinned channel id text or "") from the request headers."""
    auth = request.headers.get("Authorization", "").strip()
    if auth[:7].lower() == "bearer ":
        auth = auth[7:].strip()
    if not auth:  # Anthropic's and Google's clients send the key in their own headers (or Google's in the URL)
        auth = (request.headers.get("x-api-key") or request.headers.get("x-goog-api-key") or "").strip()
        inbound = request.get(REQUEST_INBOUND)
        if not auth and inbound is not None and inbound.query_key:
            auth = request.query.get("key", "").strip()
    if not auth:  # a browser's WebSocket (/v1/realtime) offers the key as a subprotocol
        auth = realtime_protocol_key(request)
    if not auth or auth == "midjourney-proxy":
        auth = request.headers.get("mj-api-secret", "").strip()
        if auth[:7].lower() == "bearer ":
            auth = auth[7:].strip()
    if auth.startswith("sk-"):
        auth = auth[3:]
    key, _, channel = auth.partition("-")
    if not channel.isascii():  # a channel id is ASCII digits: said as sent, never read as a number
        channel = channel.encode("ascii", "backslashreplace").decode()
    return key, channel


def _networks(text: str) -> tuple[Network, ...] | None:
    nets: list[Network] = []
    for line in (text or "").replace(",", "\n").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            nets.append(ipaddress.ip_network(line, strict=False))
        except ValueError:
            log.warning("ignoring an allow_ips entry that is not an address or range: %.60s", line)
    return tuple(nets) if nets else None


def _token_fields(t: Token) -> dict[str, str]:
    return {"id": str(t.id), "user_id": str(t.user_id), "name": t.name, "status": str(t.status),
            "expired_time": str(t.expired_time), "unlimited": "1" if t.unlimited_quota else "0",
            "mle": "1" if t.model_limits_enabled else "0", "ml": t.model_limits or "", "ips": t.allow_ips or "",
            "group": t.group or "", "mcp": t.mcp_tools or "",
            "lim": t.limits or ""}


def _mcp_tools(text: str) -> tuple[str, ...]:
    """A key's stored `mcp_tools` (a JSON list; anything else names nothing)."""
    if not text:
        return ()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return ()
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _token_info(f: Mapping[str, str]) -> TokenInfo:
    limits = None
    if f.get("mle") == "1":
        limits = frozenset(m.strip() for m in f.get("ml", "").split(",") if m.strip())
    return TokenInfo(int(f["id"]), int(f["user_id"]), f.get("name", ""), int(f["status"]), int(f["expired_time"]),
                     f.get("unlimited") == "1", limits, _networks(f.get("ips", "")), f.get("group", ""),
                     _mcp_tools(f.get("mcp", "")), stored_limits(f.get("lim", "")))


def _user_fields(u: User) -> dict[str, str]:
    return {"id": str(u.id), "username": u.username, "status": str(u.status), "role": str(u.role),
            "group": u.group or "default", "deleted": "1" if u.deleted_at is not None else "0", "lim": u.limits or ""}


def _user_info(f: Mapping[str, str]) -> UserInfo:
    return UserInfo(int(f["id"]), f.get("username", ""), int(f["status"]), int(f["role"]),
                    f.get("group") or "default", f.get("deleted") == "1", stored_limits(f.get("lim", "")))


class KeyAuth:
    """Finds the key and its owner; three cache levels, invalidated by events."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tokens: dict[str, tuple[float, TokenInfo | None]] = {}
        self._token_hash: dict[int, str] = {}
        self._users: dict[int, tuple[float, UserInfo | None]] = {}
        # One load at a time per key or user: a burst of requests on a cold cache makes one lookup,
        # not one each (and cannot exhaust the Redis connection pool).
        self._token_loads: dict[str, asyncio.Task[TokenInfo | None]] = {}
        self._user_loads: dict[int, asyncio.Task[UserInfo | None]] = {}
        self._generation = 0  # bumped by every invalidation: a load that raced one is not remembered
        self._fill = store.redis.register_script(_FILL)

    def subscribe(self, events: EventBus) -> None:
        events.subscribe("token", self._on_token)
        events.subscribe("user", self._on_user)
        events.subscribe("*reset", self._on_reset)

    # -- keys in Redis --------------------------------------------------------------------------
    def _token_key(self, key_hash: str) -> str:
        return redis_keys.relay_token(self.store, key_hash)

    def _user_key(self, user_id: int) -> str:
        return redis_keys.relay_user(self.store, user_id)

    @staticmethod
    def _ver(key: str) -> str:
        return redis_keys.version_of(key)

    # -- invalidation ---------------------------------------------------------------------------
    async def _drop_redis(self, key: str) -> None:
        async with self.store.redis.pipeline(transaction=True) as pipe:
            pipe.incr(self._ver(key))
            pipe.expire(self._ver(key), REDIS_TTL * 2)
            pipe.delete(key)
            await pipe.execute()

    async def _on_token(self, message: Mapping[str, Any]) -> None:
        key_hash = message.get("key_hash")
        token_id = message.get("id")
        if not isinstance(key_hash, str) and isinstance(token_id, int):
            key_hash = self._token_hash.get(token_id)
        self._generation += 1
        if isinstance(token_id, int):
            self._token_hash.pop(token_id, None)
        if isinstance(key_hash, str) and key_hash:
            self._tokens.pop(key_hash, None)
            self._token_loads.pop(key_hash, None)
            await self._drop_redis(self._token_key(key_hash))
        elif message.get("reset"):
            self._tokens.clear()

    async def _on_user(self, message: Mapping[str, Any]) -> None:
        user_id = message.get("id")
        self._generation += 1
        if isinstance(user_id, int):
            self._users.pop(user_id, None)
            self._user_loads.pop(user_id, None)
            await self._drop_redis(self._user_key(user_id))
        elif message.get("reset"):
            self._users.clear()

    def _on_reset(self, message: Mapping[str, Any]) -> None:
        self._generation += 1
        self._tokens.clear()
        self._users.clear()
        self._token_loads.clear()
        self._user_loads.clear()

    # -- lookups --------------------------------------------------------------------------------
    async def token(self, key: str) -> TokenInfo | None:
        if not key or not key.isascii() or len(key) > KEY_MAX:  # keys are ASCII and fit their column
            return None
        key_hash = sha256_hex(key)
        hit = self._tokens.get(key_hash)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        load = self._token_loads.get(key_hash)
        if load is None:
            load = asyncio.ensure_future(self._load_and_remember_token(key, key_hash))
            self._token_loads[key_hash] = load
            load.add_done_callback(lambda done: self._forget_load(self._token_loads, key_hash, done))
        return await asyncio.shield(load)

    async def _load_and_remember_token(self, key: str, key_hash: str) -> TokenInfo | None:
        generation = self._generation
        info = await self._load_token(key, key_hash)
        if generation == self._generation:
            self._remember(self._tokens, key_hash, (time.monotonic() + (LOCAL_TTL if info else NEGATIVE_TTL), info))
            if info is not None:
                self._token_hash[info.id] = key_hash
        return info

    async def user(self, user_id: int) -> UserInfo | None:
        hit = self._users.get(user_id)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        load = self._user_loads.get(user_id)
        if load is None:
            load = asyncio.ensure_future(self._load_and_remember_user(user_id))
            self._user_loads[user_id] = load
            load.add_done_callback(lambda done: self._forget_load(self._user_loads, user_id, done))
        return await asyncio.shield(load)

    async def _load_and_remember_user(self, user_id: int) -> UserInfo | None:
        generation = self._generation
        info = await self._load_user(user_id)
        if generation == self._generation:
            self._remember(self._users, user_id, (time.monotonic() + (LOCAL_TTL if info else NEGATIVE_TTL), info))
        return info

    @staticmethod
    def _forget_load(loads: dict[K, asyncio.Task[V]], key: K, done: asyncio.Task[V]) -> None:
        if loads.get(key) is done:
            del loads[key]
        if not done.cancelled():
            done.exception()  # retrieved: a failed load is re-raised to its awaiters, not logged twice

    @staticmethod
    def _remember(cache: dict[K, V], key: K, value: V) -> None:
        if len(cache) >= MAX_LOCAL:
            cache.clear()  # crude bound; entries are cheap to reload
        cache[key] = value

    async def _load_token(self, key: str, key_hash: str) -> TokenInfo | None:
        rkey = self._token_key(key_hash)
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(rkey)
            pipe.get(self._ver(rkey))
            fields, version = await pipe.execute()
        if fields and "lim" in fields:  # (an entry cached without limits is read again)
            return _token_info(fields)
        token = await Token.filter(key=key).first()
        if token is None:
            return None
        data = _token_fields(token)
        await self._fill(keys=[rkey, self._ver(rkey)],
                         args=[version or "0", REDIS_TTL, *[x for kv in data.items() for x in kv]])
        return _token_info(data)

    async def _load_user(self, user_id: int) -> UserInfo | None:
        rkey = self._user_key(user_id)
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(rkey)
            pipe.get(self._ver(rkey))
            fields, version = await pipe.execute()
        if fields and "lim" in fields:
            return _user_info(fields)
        user = await User.filter(id=user_id).first()
        if user is None:
            return None
        data = _user_fields(user)
        await self._fill(keys=[rkey, self._ver(rkey)],
                         args=[version or "0", REDIS_TTL, *[x for kv in data.items() for x in kv]])
        return _user_info(data)
