"""API keys (tokens): validation, owner-scoped changes, and telling the relay at once.

Every token belongs to one user; every read and write here is filtered by that user's id, so one
user (an admin included) can never see or change another user's key. After each committed change
the relay's caches are invalidated: the live remaining-quota counter is dropped (reloaded from the
database on next use) and a "token" event reaches every process.
"""
from __future__ import annotations

import ipaddress
import time
from collections.abc import Mapping
from typing import Any, cast

import orjson
from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from api.errors import ApiError, TooManyRequests
from api.services.billing.balances import forget_token
from api.services.budgets.limits import normalise as normalise_limits
from api.services.budgets.limits import stored as stored_limits
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.mcp_names import valid_server_name
from api.services.params import bool_value, int_value
from api.services.passwords import random_string, sha256_hex
from api.services.ratelimit import RateLimiter
from api.services.store import Store
from models import Token, User
from models.enums import TokenStatus

KEY_LENGTH = 48
MAX_NAME_LENGTH = 30
MAX_QUOTA = 10**15
MAX_ALLOW_IPS = 100
MAX_MODEL_NAME = 255
EDITABLE = ("name", "expired_time", "remain_quota", "unlimited_quota", "model_limits_enabled", "model_limits",
            "allow_ips", "group", "mcp_tools", "limits")
MAX_MCP_TOOLS = 500


def generate_key() -> str:
    """48 characters of [0-9a-zA-Z] from the `secrets` module (shown to users as "sk-" + key)."""
    return random_string(KEY_LENGTH)


def is_expired(token: Token, now: int) -> bool:
    expired_time: int = token.expired_time  # a BigIntField reads as Any (tortoise types it unparameterised)
    return expired_time != -1 and expired_time <= now


def is_exhausted(token: Token) -> bool:
    return not token.unlimited_quota and token.remain_quota <= 0


def display_status(token: Token, now: int | None = None) -> int:
    """The stored status, shown as expired (3) or exhausted (4) when that is the truth."""
    now = int(time.time()) if now is None else now
    if token.status == TokenStatus.ENABLED:
        if is_expired(token, now):
            return int(TokenStatus.EXPIRED)
        if is_exhausted(token):
            return int(TokenStatus.EXHAUSTED)
    return token.status


def token_dict(token: Token, now: int | None = None) -> dict[str, Any]:
    """The wire shape; `key` without the "sk-" prefix, as the reference sends it to its owner."""
    return {
        "id": token.id,
        "user_id": token.user_id,
        "key": token.key,
        "status": display_status(token, now),
        "name": token.name,
        "created_time": token.created_time,
        "accessed_time": token.accessed_time,
        "expired_time": token.expired_time,
        "remain_quota": token.remain_quota,
        "unlimited_quota": token.unlimited_quota,
        "used_quota": token.used_quota,
        "model_limits_enabled": token.model_limits_enabled,
        "model_limits": token.model_limits,
        "allow_ips": token.allow_ips,
        "group": token.group,
        "mcp_tools": mcp_tools_list(token.mcp_tools),
        "limits": [limit.as_dict() for limit in stored_limits(token.limits)],
    }


# -- validation ------------------------------------------------------------------------------------




def clean_name(value: object, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ApiError("token_name_required")
    name = value.strip()
    if len(name) > MAX_NAME_LENGTH:
        raise ApiError("token_name_too_long", max=MAX_NAME_LENGTH)
    return name


def clean_model_limits(value: object) -> str:
    """A comma string on the wire (a list is accepted too); trimmed, deduplicated, order kept."""
    if isinstance(value, list):
        parts = value
    elif isinstance(value, str):
        parts = value.split(",")
    else:
        raise ApiError("invalid_param", name="model_limits")
    models: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise ApiError("invalid_param", name="model_limits")
        model = part.strip()
        if len(model) > MAX_MODEL_NAME:
            raise ApiError("invalid_param", name="model_limits")
        if model and model not in models:
            models.append(model)
    return ",".join(models)


def clean_allow_ips(value: object) -> str:
    """One IP address or CIDR network per line; blank lines dropped."""
    if not isinstance(value, str):
        raise ApiError("invalid_param", name="allow_ips")
    lines = [line.strip() for line in value.replace("\r", "\n").split("\n") if line.strip()]
    if len(lines) > MAX_ALLOW_IPS:
        raise ApiError("token_allow_ips_too_many", max=MAX_ALLOW_IPS)
    for line in lines:
        try:
            ipaddress.ip_network(line, strict=False)
        except ValueError:
            raise ApiError("token_invalid_ip", ip=line[:64]) from None
    return "\n".join(lines)


def mcp_tools_list(text: str) -> list[str]:
    """A key's stored `mcp_tools` as its list (the wire form)."""
    if not text:
        return []
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def clean_mcp_tools(value: object) -> str:
    """A list of "<server>" and "<server>__<tool>" names (a comma string is accepted too); stored as a
    JSON list, "" for none. Servers need not exist yet: one registered later is then allowed."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list):
        raise ApiError("mcp_tools_invalid", problem="not a list")
    if len(value) > MAX_MCP_TOOLS:
        raise ApiError("mcp_tools_invalid", problem=f"more than {MAX_MCP_TOOLS}")
    found: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ApiError("mcp_tools_invalid", problem="an entry is not a string")
        entry = item.strip()
        server, sep, tool = entry.partition("__")
        if not valid_server_name(server) or (sep and not (0 < len(tool) <= 128 and tool.isprintable()
                                                          and " " not in tool)):
            raise ApiError("mcp_tools_invalid", problem=repr(entry[:80]))
        if entry not in found:
            found.append(entry)
    return orjson.dumps(found).decode() if found else ""


def selectable_groups(options: OptionsService, user: User) -> set[str]:
    usable = options.get_json("UserUsableGroups")
    groups = set(usable) if isinstance(usable, Mapping) else set()
    groups.add(user.group)
    return groups


def clean_fields(body: Mapping[str, Any], user: User, options: OptionsService, *, creating: bool,
                 current: Token | None = None, now: int | None = None) -> dict[str, Any]:
    """The validated editable fields present in `body` (all of them, with defaults, on create)."""
    now = int(time.time()) if now is None else now
    fields: dict[str, Any] = {}
    name = clean_name(body.get("name"), required=creating)
    if name is not None:
        fields["name"] = name
    if "unlimited_quota" in body:
        fields["unlimited_quota"] = bool_value(body["unlimited_quota"], "unlimited_quota")
    unlimited = fields.get("unlimited_quota", current.unlimited_quota if current else False)
    if "remain_quota" in body and body["remain_quota"] is not None:
        quota = int_value(body["remain_quota"], "remain_quota")
        if quota < 0 or quota > MAX_QUOTA:
            if not unlimited:
                raise ApiError("token_quota_invalid")
            quota = 0
        fields["remain_quota"] = quota
    elif creating and not unlimited:
        raise ApiError("token_quota_invalid")
    if "expired_time" in body and body["expired_time"] is not None:
        expired = int_value(body["expired_time"], "expired_time")
        unchanged = current is not None and expired == current.expired_time
        if expired != -1 and expired <= now and not unchanged:
            raise ApiError("token_expiry_invalid")
        fields["expired_time"] = expired
    if "model_limits_enabled" in body:
        fields["model_limits_enabled"] = bool_value(body["model_limits_enabled"], "model_limits_enabled")
    if "model_limits" in body and body["model_limits"] is not None:
        fields["model_limits"] = clean_model_limits(body["model_limits"])
    if "allow_ips" in body and body["allow_ips"] is not None:
        fields["allow_ips"] = clean_allow_ips(body["allow_ips"])
    if "mcp_tools" in body and body["mcp_tools"] is not None:
        fields["mcp_tools"] = clean_mcp_tools(body["mcp_tools"])
    if "limits" in body:  # limits over time; the message names the entry and field refused
        fields["limits"] = normalise_limits(body["limits"])
    if "group" in body and body["group"] is not None:
        group = body["group"]
        if not isinstance(group, str):
            raise ApiError("invalid_param", name="group")
        group = group.strip()
        unchanged = current is not None and group == current.group
        if group and not unchanged and group not in selectable_groups(options, user):
            raise ApiError("token_group_not_selectable", group=group[:64])
        fields["group"] = group
    return fields


# -- reads -----------------------------------------------------------------------------------------
async def list_tokens(user_id: int, offset: int, limit: int) -> tuple[list[Token], int]:
    query = Token.filter(user_id=user_id)
    return await query.order_by("-id").offset(offset).limit(limit), await query.count()


async def search_tokens(user_id: int, keyword: str, key: str, offset: int, limit: int) -> tuple[list[Token], int]:
    query = Token.filter(user_id=user_id)
    if keyword:
        query = query.filter(name__icontains=keyword)
    key = key.strip().removeprefix("sk-")
    if key:
        query = query.filter(key__contains=key)
    return await query.order_by("-id").offset(offset).limit(limit), await query.count()


async def get_token(user_id: int, token_id: int) -> Token:
    """The caller's own token; another user's looks exactly like a missing one."""
    token = await Token.filter(id=token_id, user_id=user_id).first()
    if token is None:
        raise ApiError("token_not_found")
    return token


# -- writes ----------------------------------------------------------------------------------------
async def announce(store: Store, events: EventBus, token: Token) -> None:
    """A committed change of `token` reaches the relay of every process now."""
    await forget_token(store, token.user_id, token.id)
    await events.publish("token", id=token.id, key_hash=sha256_hex(token.key))


async def check_may_create(limiter: RateLimiter, options: OptionsService, user: User) -> None:
    """A user creates at most TokenCreationsPerMinute keys a minute and holds at most MaxTokensPerUser.
    Keys cost nothing, and the relay bounds some uses per key (Realtime sessions and client secrets, each
    with a per-user bound beside it): without these, keys made by the thousand would multiply the rest.
    Creations at the same instant may each see the count below the bound: the rate limit bounds by how
    many it can be passed."""
    per_minute = options.get_int("TokenCreationsPerMinute")
    if not await limiter.hit("token_create", str(user.id), per_minute, 60):
        raise TooManyRequests("token_create_too_fast", limit=per_minute)
    most = options.get_int("MaxTokensPerUser")
    if await Token.filter(user_id=user.id).count() >= most:
        raise ApiError("token_too_many", max=most)


async def create_token(store: Store, events: EventBus, user: User, fields: dict[str, Any]) -> Token:
    token: Token | None = None
    for _ in range(3):  # a key collision is astronomically unlikely; never let it become a 500
        try:
            token = await Token.create(user_id=user.id, key=generate_key(), status=int(TokenStatus.ENABLED),
                                       **fields)
            break
        except IntegrityError:
            continue
    if token is None:
        raise ApiError("internal_error")
    await announce(store, events, token)
    return token


async def update_token(store: Store, events: EventBus, token: Token, fields: dict[str, Any]) -> Token:
    """Apply validated `fields` to the caller's `token` (from get_token)."""
    for name, value in fields.items():
        setattr(token, name, value)
    # A token the relay marked expired or exhausted is usable again once the edit makes it so.
    now = int(time.time())
    if token.status == TokenStatus.EXPIRED and not is_expired(token, now):
        token.status = int(TokenStatus.ENABLED)
    if token.status == TokenStatus.EXHAUSTED and not is_exhausted(token):
        token.status = int(TokenStatus.ENABLED)
    fields = {**fields, "status": token.status}
    await Token.filter(id=token.id, user_id=token.user_id).update(**fields)
    await announce(store, events, token)
    return token


async def set_token_status(store: Store, events: EventBus, user: User, token_id: int, status: object) -> Token:
    """The owner toggles enabled (1) ↔ disabled (2) only; a spent or expired key cannot be enabled."""
    if status not in (TokenStatus.ENABLED, TokenStatus.DISABLED) or isinstance(status, bool):
        raise ApiError("token_status_invalid")
    token = await get_token(user.id, token_id)
    if status == TokenStatus.ENABLED:
        if is_expired(token, int(time.time())):
            raise ApiError("token_expired_cannot_enable")
        if is_exhausted(token):
            raise ApiError("token_exhausted_cannot_enable")
    token.status = int(cast(int, status))
    await Token.filter(id=token.id, user_id=user.id).update(status=token.status)
    await announce(store, events, token)
    return token


async def delete_token(store: Store, events: EventBus, user: User, token_id: int) -> None:
    token = await get_token(user.id, token_id)
    await Token.filter(Q(id=token.id) & Q(user_id=user.id)).delete()
    await announce(store, events, token)
