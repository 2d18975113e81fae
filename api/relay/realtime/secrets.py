"""Client secrets of the Realtime API: `POST /v1/realtime/client_secrets` (the openai SDK's
`client.realtime.client_secrets.create`) answers a short-lived key, `ek_…`, that a browser uses in place of
the API key to open sessions on this gateway's `/v1/realtime` (the subprotocol `openai-insecure-api-key.ek_…`,
or `Authorization: Bearer ek_…`), each billed to the key that made it.

The secret is the gateway's own, never a provider's: a provider's ephemeral key would let its holder use the
channel's account directly, past the gateway's billing and limits. As OpenAI's (the SDK's
types/realtime/client_secret_create_params.py): `expires_after.seconds` 10 to 7200, 600 by default, anchored
at its creation; it opens any number of sessions until it expires, and a session opened goes on after that;
`session` is a realtime session's configuration, whose `model` every session of the secret uses and whose
other fields are sent upstream as the session's first `session.update`. Transcription sessions are not relayed.

What a secret holds lives in the Redis every balance is in, for up to two hours, so it is bounded: a body
of at most BODY_LIMIT, a `session` of at most SESSION_LIMIT once serialized and nested at most MAX_DEPTH
levels (400 naming `session` past either); each creation is counted against the key's, the user's and the
group's rate limits as a request is (and refused, as one would be, when the balance is used up); and the
live secrets per key and per user are bounded (options RealtimeMaxSecretsPerKey, RealtimeMaxSecretsPerUser;
limits.py), each place freed when its secret expires. A user's secrets thus hold at most
RealtimeMaxSecretsPerUser × SESSION_LIMIT, whatever number of keys they make.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from api.bodies import read_body
from api.relay.admission import admit, check_model_allowed, check_served, new_facts, price_of, usable_group
from api.relay.auth import parse_key
from api.relay.caller import caller_of
from api.relay.job import Job
from api.relay.realtime.limits import SECRETS, take_place
from api.relay.refusals import refuse
from api.relay.settling import settle_shielded
from api.relay.state import relay_state
from api.relay.validate import MAX_DEPTH, Invalid, check_depth
from api.services import redis_keys
from api.services.model_name import ModelName
from api.services.passwords import sha256_hex
from api.services.store import Store
from api.upstream.base import RelayMode
from api.upstream.errors import RelayError

SECRET_PREFIX = "ek_"
DEFAULT_SECONDS, MIN_SECONDS, MAX_SECONDS = 600, 10, 7200
ROUTE = "/v1/realtime/client_secrets"
SESSION_LIMIT = 16 * 1024  # bytes of a secret's session, serialized: a real configuration is a few KB
BODY_LIMIT = 64 * 1024  # bytes of the request body, once inflated


@dataclass(frozen=True, slots=True)
class Grant:
    """What a client secret stands for."""

    key: str  # the API key that made it (without sk-): its sessions are that key's
    model: str
    session: dict[str, Any]  # the configuration sent upstream when a session opens


def _redis_key(store: Store, secret: str) -> str:
    return redis_keys.realtime_secret(store, sha256_hex(secret))  # the secret itself is never stored


def is_secret(key: str) -> bool:
    return key.startswith(SECRET_PREFIX)


async def resolve(store: Store, secret: str) -> Grant | None:
    """The grant of a live client secret; None when unknown or expired."""
    raw = await store.redis.get(_redis_key(store, secret))
    if raw is None:
        return None
    data = orjson.loads(raw)
    return Grant(str(data["k"]), str(data["m"]), dict(data["s"]))


def first_update(grant: Grant) -> dict[str, Any] | None:
    """The `session.update` that applies the secret's configuration, when it says more than the model."""
    config = {k: v for k, v in grant.session.items() if k not in ("type", "model")}
    return {"type": "session.update", "session": {"type": "realtime", **config}} if config else None


def _invalid(request: web.Request, param: str, problem: str) -> RelayError:
    err = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error", param=param,
                 problem=problem)
    err.param = param
    return err


def _lifetime(request: web.Request, body: dict[str, Any]) -> int:
    expires = body.get("expires_after")
    if expires is None:
        return DEFAULT_SECONDS
    if not isinstance(expires, dict):
        raise _invalid(request, "expires_after", "an object")
    if expires.get("anchor", "created_at") != "created_at":
        raise _invalid(request, "expires_after.anchor", "only created_at")
    seconds = expires.get("seconds", DEFAULT_SECONDS)
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise _invalid(request, "expires_after.seconds", f"a whole number from {MIN_SECONDS} to {MAX_SECONDS}")
    return seconds


async def create_client_secret(request: web.Request) -> web.Response:
    """POST /v1/realtime/client_secrets: checked as a session would be (key, group, model, price, a serving
    channel), counted against the rate limits, given a place among the key's and the user's live secrets;
    nothing is charged until a session uses it."""
    state = relay_state(request)
    key, _ = parse_key(request)
    if is_secret(key):  # a secret makes no other
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    caller = await caller_of(request, state, key)
    raw = await read_body(request.clone(client_max_size=BODY_LIMIT))
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise refuse(request, 400, "relay_invalid_body", "invalid_request_body", "invalid_request_error")
    seconds = _lifetime(request, body)
    model, config = _session(request, body.get("session", {}))
    job = Job(request, state, state.options, RelayMode.REALTIME, ROUTE, caller, {"model": model})
    job.name = ModelName(model)
    job.group = usable_group(request, state.options, caller.user, caller.token.group if caller.token else "")
    check_model_allowed(job)
    job.price = price_of(job)
    await check_served(job)
    await _count(job)
    secret = SECRET_PREFIX + os.urandom(22).hex()  # 47 characters: within an API key's length
    store = state.auth.store
    options = state.options
    refused = await take_place(store, SECRETS, caller.user.id, caller.token.id if caller.token else 0,
                               sha256_hex(secret), seconds * 1000, options.get_int("RealtimeMaxSecretsPerKey"),
                               options.get_int("RealtimeMaxSecretsPerUser"))
    if refused is not None:
        raise refuse(request, 429, "relay_realtime_secrets_user" if refused.per_user else "relay_realtime_secrets_key",
                     "too_many_client_secrets", "rate_limit_error", limit=refused.limit)
    await store.redis.set(_redis_key(store, secret), orjson.dumps({"k": key, "m": model, "s": config}),
                          px=seconds * 1000)
    answer = {"value": secret, "expires_at": int(time.time()) + seconds,
              "session": {**config, "object": "realtime.session", "id": "sess_" + os.urandom(12).hex()}}
    return web.Response(body=orjson.dumps(answer), content_type="application/json")


def _session(request: web.Request, session: Any) -> tuple[str, dict[str, Any]]:
    """(the model, the configuration to store) of the body's `session`, within its bounds."""
    if not isinstance(session, dict):
        raise _invalid(request, "session", "an object")
    try:
        check_depth(session)
    except Invalid:
        raise _invalid(request, "session", f"nested at most {MAX_DEPTH} levels deep") from None
    if session.get("type", "realtime") != "realtime":
        raise _invalid(request, "session.type", "realtime (transcription sessions are not relayed)")
    model = session.get("model")
    if not isinstance(model, str) or not model.strip():
        raise refuse(request, 400, "relay_model_required", "model_required", "invalid_request_error")
    model = model.strip()
    config = {**session, "type": "realtime", "model": model}
    size = len(orjson.dumps(config))
    if size > SESSION_LIMIT:
        raise _invalid(request, "session", f"at most {SESSION_LIMIT // 1024} KiB once serialized ({size:,} bytes)")
    return model, config


async def _count(job: Job) -> None:
    """The creation counted against the key's, the user's and the group's limits as a request is, by the
    admission's own call (nothing reserved: a balance used up refuses it as it would a session); the
    admission's reservation closed at once."""
    job.pre, job.prompt_tokens = 0, 0
    job.facts = new_facts(job)
    job.charge = await admit(job)
    await settle_shielded(job, None)
