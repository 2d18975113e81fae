"""Console sessions: an opaque random cookie `session`, data in a Redis hash.

The Redis key is an HMAC of the cookie value with SESSION_SECRET, so neither a Redis dump nor a log
line reveals a usable cookie, and rotating the secret ends every session.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from aiohttp import web

from api import keys
from api.services import redis_keys
from api.services.store import Store

COOKIE = "session"


class Session:
    def __init__(self, manager: SessionManager, sid: str, data: dict[str, str]) -> None:
        self.manager = manager
        self.sid = sid
        self.data = data

    @property
    def user_id(self) -> int:
        try:
            return int(self.data.get("uid", "0"))
        except ValueError:
            return 0

    async def set(self, **fields: str) -> None:
        self.data.update(fields)
        await self.manager.save(self, fields)

    async def pop(self, field: str) -> str | None:
        value = self.data.pop(field, None)
        await self.manager.store.redis.hdel(self.manager.key(self.sid), field)
        return value


class SessionManager:
    def __init__(self, store: Store, secret: str, ttl: int, secure: bool) -> None:
        self.store = store
        self.secret = secret.encode()
        self.ttl = ttl
        self.secure = secure

    def key(self, cookie_value: str) -> str:
        digest = hmac.new(self.secret, cookie_value.encode(), hashlib.sha256).hexdigest()
        return redis_keys.session(self.store, digest)

    def user_index(self, user_id: int) -> str:
        return redis_keys.user_sessions(self.store, user_id)

    async def load(self, request: web.Request) -> Session | None:
        if keys.SESSION in request:
            return request[keys.SESSION]
        value = request.cookies.get(COOKIE, "")
        session = None
        if value and len(value) <= 128 and value.isascii():  # ours are; other bytes are no session
            data = await self.store.redis.hgetall(self.key(value))
            if data:
                session = Session(self, value, data)
        request[keys.SESSION] = session
        return session

    async def get_or_create(self, request: web.Request) -> Session:
        session = await self.load(request)
        if session is None:
            session = Session(self, secrets.token_urlsafe(32), {"created": "1"})
            await self.save(session, session.data)
            request[keys.SESSION] = session
            request[keys.SESSION_COOKIE] = session.sid
        return session

    async def save(self, session: Session, fields: dict[str, str]) -> None:
        key = self.key(session.sid)
        async with self.store.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=fields)
            pipe.expire(key, self.ttl)
            await pipe.execute()

    async def login(self, request: web.Request, user_id: int) -> Session:
        """Start a fresh session for the user (a new id: no fixation), keeping pre-login fields."""
        old = await self.load(request)
        carried = {k: v for k, v in (old.data if old else {}).items() if k in {"turnstile"}}
        if old is not None:
            await self.store.redis.delete(self.key(old.sid))
        session = Session(self, secrets.token_urlsafe(32), {**carried, "uid": str(user_id)})
        await self.save(session, session.data)
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(self.user_index(user_id), self.key(session.sid))
            pipe.expire(self.user_index(user_id), self.ttl)
            await pipe.execute()
        request[keys.SESSION] = session
        request[keys.SESSION_COOKIE] = session.sid
        return session

    async def logout(self, request: web.Request) -> None:
        session = await self.load(request)
        if session is not None:
            await self.store.redis.delete(self.key(session.sid))
            if session.user_id:
                await self.store.redis.srem(self.user_index(session.user_id), self.key(session.sid))
        request[keys.SESSION] = None
        request[keys.SESSION_COOKIE] = ""

    async def revoke_user(self, user_id: int) -> None:
        """End every session of a user (disable, delete, password reset)."""
        index = self.user_index(user_id)
        members = await self.store.redis.smembers(index)
        if members:
            await self.store.redis.delete(*members, index)

    def apply_cookie(self, request: web.Request, response: web.StreamResponse) -> None:
        pending = request.get(keys.SESSION_COOKIE)
        if pending is None:
            return
        if pending == "":
            response.del_cookie(COOKIE, path="/")
        else:
            response.set_cookie(COOKIE, pending, max_age=self.ttl, path="/", httponly=True,
                                samesite="Strict", secure=self.secure)


def sessions_of(request: web.Request) -> SessionManager:
    return request.config_dict[keys.SESSIONS]
