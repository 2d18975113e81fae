"""Who is calling: the owner of an API key, checked (the key's status and expiry, the user's, the IP
allow-list), and the channel an administrator pins. The first step of every keyed relay request."""
from __future__ import annotations

import time
from dataclasses import dataclass

from aiohttp import web

from api.channels.index import ChannelInfo
from api.relay.auth import TokenInfo, UserInfo, parse_key
from api.relay.refusals import refuse
from api.relay.state import RelayState
from api.services.params import id_value
from api.web.net import client_ip
from models.enums import Role, TokenStatus, UserStatus


@dataclass(slots=True)
class Caller:
    user: UserInfo
    token: TokenInfo | None
    pinned: ChannelInfo | None = None

    @property
    def token_limited(self) -> bool:
        return self.token is not None and not self.token.unlimited


async def key_caller(request: web.Request, state: RelayState) -> Caller:
    key, pinned_text = parse_key(request)
    return await caller_of(request, state, key, pinned_text)


async def caller_of(request: web.Request, state: RelayState, key: str, pinned_text: str = "") -> Caller:
    """The owner of an API key (without `sk-`), checked, and the channel an administrator pins."""
    if not key:
        raise refuse(request, 401, "relay_no_key", "missing_api_key", "invalid_request_error")
    token = await state.auth.token(key)
    if token is None:
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    if token.status != TokenStatus.ENABLED:
        message = {int(TokenStatus.EXPIRED): "relay_key_expired",
                   int(TokenStatus.EXHAUSTED): "relay_key_exhausted"}.get(int(token.status), "relay_key_disabled")
        raise refuse(request, 401, message, message.removeprefix("relay_"), "invalid_request_error")
    if token.expired_time != -1 and token.expired_time < time.time():
        raise refuse(request, 401, "relay_key_expired", "key_expired", "invalid_request_error")
    user = await state.auth.user(token.user_id)
    if user is None or user.deleted:
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    if user.status != UserStatus.ENABLED:
        raise refuse(request, 403, "relay_user_banned", "user_banned")
    ip = client_ip(request)
    if not token.ip_allowed(ip):
        raise refuse(request, 403, "relay_ip_forbidden", "ip_not_allowed", ip=ip)
    pinned = None
    if pinned_text:
        if user.role < Role.ADMIN:
            raise refuse(request, 403, "relay_pin_forbidden", "channel_pin_forbidden")
        pinned_id = id_value(pinned_text)
        pinned = state.index.get(pinned_id) if pinned_id is not None else None
        if pinned is None:
            raise refuse(request, 403, "relay_pinned_unavailable", "channel_unavailable", id=pinned_text)
        if pinned.keys:  # a multi-key channel pinned by an administrator: its first enabled key, named
            index, first_key, _ = pinned.keys[0]
            pinned = pinned.with_key(index, first_key)
    return Caller(user, token, pinned)
