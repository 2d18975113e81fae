"""Midjourney's callbacks to the gateway (option MjNotifyEnabled with ServerAddress set): a
submission without its own notifyHook names `<ServerAddress>/mj/notify?channel=…&task=…&expires=…
&sig=…`, signed for that one submission.

The signature (HMAC-SHA256 with the session secret) binds the channel, the gateway's own identity
of the submission (its settlement id, chosen before the upstream call and kept on the task row,
`billing`) and an expiry (NOTIFY_TTL after the submission; a task that old has timed out). A
callback changes only the row of that channel whose upstream id is the callback's task id AND whose
settlement id is the signed one: a signature of task Y does not move task X, an expired one moves
nothing, and the per-channel signatures of before are refused. The hook is never shown to users
(api/upstream/providers/midjourney.py strips it from the properties midjourney-proxy echoes).

A callback may arrive before the submission's answer, so before the task row exists: a signed
callback for a row not written yet is kept in Redis (EARLY_TTL, EARLY_MAX bytes) under the signed
identity, and the submission applies it once its row is written (`take_early`). Whichever of the
two comes second applies it: the callback stores it, then looks for the row again.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
from aiohttp import web

from api import keys
from api.relay.state import relay_state
from api.relay.tasks.billing import TaskCharge
from api.relay.tasks.poll import MIDJOURNEY, TASK_TIMEOUT, apply_update, new_owner
from api.relay.tasks.relay import json_body, task_error
from api.services import redis_keys
from api.services.params import id_value
from api.services.store import Store
from api.upstream.providers.midjourney import MidjourneyAdaptor
from api.upstream.task_base import TaskUpdate
from models import Channel, Midjourney, keyring

NOTIFY_TTL = 2 * TASK_TIMEOUT  # seconds a callback URL stays valid after its submission
EARLY_TTL = 600  # seconds a callback that came before its task row is kept
EARLY_MAX = 64 * 1024  # bytes: a larger early callback is left to the poll
_EXPIRES = re.compile(r"[0-9]{1,12}")
_TASK = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_SIG = re.compile(r"[0-9a-f]{64}")


def notify_signature(secret: str, channel_id: int, task: str, expires: int) -> str:
    message = f"mj-notify:v2:{channel_id}:{task}:{expires}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def notify_url(address: str, secret: str, channel_id: int, task: str, expires: int) -> str:
    sig = notify_signature(secret, channel_id, task, expires)
    query = urlencode({"channel": channel_id, "task": task, "expires": expires, "sig": sig})
    return f"{address.rstrip('/')}/mj/notify?{query}"


def notify_hook(request: web.Request) -> Callable[[Any, dict[str, Any], str], dict[str, Any]] | None:
    """The body with the gateway's signed callback for (channel, submission), when callbacks are on."""
    options = relay_state(request).options or request.config_dict[keys.OPTIONS]
    address = (options.get("ServerAddress") or "").rstrip("/")
    if not options.get_bool("MjNotifyEnabled") or not address:
        return None
    secret = request.config_dict[keys.SETTINGS].session_secret

    def with_hook(channel: Any, body: dict[str, Any], task: str) -> dict[str, Any]:
        expires = int(time.time()) + NOTIFY_TTL
        return {**body, "notifyHook": notify_url(address, secret, channel.id, task, expires)}

    return with_hook


def identity(row: Midjourney) -> str:
    """The gateway's own identity of a task: its submission's settlement id ("" if unknown)."""
    charge = TaskCharge.loads(row.billing)
    return charge.settlement_id if charge is not None else ""


@dataclass(frozen=True, slots=True)
class Signed:
    channel_id: int
    task: str


def _verified(request: web.Request) -> Signed:
    """The callback's signed (channel, task): 400 for a malformed query, 403 unless signed and live."""
    query = request.query
    channel, task, expires, sig = (query.get(n, "") for n in ("channel", "task", "expires", "sig"))
    channel_id = id_value(channel)
    if channel_id is None:
        raise task_error(request, 400, "relay_task_invalid", "invalid_request",
                         reason="channel must be a channel id")
    app = request.config_dict
    options = relay_state(request).options or app[keys.OPTIONS]
    signed = (_TASK.fullmatch(task) and _EXPIRES.fullmatch(expires) and _SIG.fullmatch(sig)
              and hmac.compare_digest(sig, notify_signature(app[keys.SETTINGS].session_secret, channel_id, task,
                                                            int(expires))))
    if not options.get_bool("MjNotifyEnabled") or not signed or int(expires) < time.time():
        raise task_error(request, 403, "relay_task_notify_forbidden", "notify_forbidden")
    return Signed(channel_id, task)


async def _adaptor(request: web.Request, channel_id: int) -> MidjourneyAdaptor:
    """The channel's adaptor (its key and address mask what the callback says)."""
    info = relay_state(request).index.get(channel_id)
    if info is not None:  # a multi-key channel's `key` here is already its first enabled key
        return MidjourneyAdaptor(info.base_url, info.key)
    channel = await Channel.filter(id=channel_id).first()
    if channel is None:
        return MidjourneyAdaptor("", "")
    return MidjourneyAdaptor(channel.base_url or "", keyring.primary(channel.key, channel.channel_info))


def _early_key(store: Store, task: str) -> str:
    return redis_keys.mj_notify_early(store, task)


async def _signed_row(signed: Signed, task_id: str) -> tuple[bool, Midjourney | None]:
    """(whether the channel has a row of that upstream id, the one signed for)."""
    rows = await Midjourney.filter(mj_id=task_id, channel_id=signed.channel_id)
    return bool(rows), next((r for r in rows if identity(r) == signed.task), None)


async def mj_notify(request: web.Request) -> web.Response:
    """POST /mj/notify?channel=…&task=…&expires=…&sig=…: a midjourney-proxy callback (its task JSON)."""
    signed = _verified(request)
    body = await json_body(request)
    adaptor = await _adaptor(request, signed.channel_id)
    updates = adaptor.read_fetch(orjson.dumps([body]))
    if not updates:
        raise task_error(request, 400, "relay_task_invalid", "invalid_request",
                         reason="the callback carries no task id")
    update = updates[0]
    answer = web.Response(body=orjson.dumps({"code": 1, "description": "ok", "result": update.task_id}),
                          content_type="application/json")
    exists, row = await _signed_row(signed, update.task_id)
    if row is not None:
        await apply_callback(request, row, update)
        return answer
    if exists:  # that task is not the one this callback was signed for
        raise task_error(request, 403, "relay_task_notify_forbidden", "notify_forbidden")
    store: Store = request.config_dict[keys.STORE]
    raw = orjson.dumps(body)
    if len(raw) <= EARLY_MAX:  # before the submission's answer: kept for it (see the module's text)
        await store.redis.set(_early_key(store, signed.task), raw, ex=EARLY_TTL)
        _, row = await _signed_row(signed, update.task_id)
        if row is not None:
            await take_early(request, row)
    return answer


async def take_early(request: web.Request, row: Midjourney) -> None:
    """Apply the callback that came for this task before its row was written, if one did."""
    task = identity(row)
    if not task:
        return
    store: Store = request.config_dict[keys.STORE]
    raw = await store.redis.getdel(_early_key(store, task))
    if not raw:
        return
    adaptor = await _adaptor(request, row.channel_id)
    updates = adaptor.read_fetch(orjson.dumps([orjson.loads(raw)]))
    if updates and updates[0].task_id == row.mj_id:
        await apply_callback(request, row, updates[0])


async def apply_callback(request: web.Request, row: Midjourney, update: TaskUpdate) -> None:
    """The callback's view of the task onto its row, under a short lease (pollers skip it meanwhile)."""
    now = int(time.time())
    owner = f"notify-{new_owner()}"
    held = (await Midjourney.filter(id=row.id, lease_until__lt=now).exclude(progress="100%")
            .update(lease_until=now + 30, lease_owner=owner))
    if not held:
        return
    try:
        fresh = await Midjourney.filter(id=row.id, lease_owner=owner).first()
        store: Store = request.config_dict[keys.STORE]
        if fresh is not None and await apply_update(MIDJOURNEY, store, fresh, update, owner, now):
            relay_state(request).settlements.mark(fresh.user_id)
    finally:
        await Midjourney.filter(id=row.id, lease_owner=owner).update(lease_until=0, lease_owner="")
