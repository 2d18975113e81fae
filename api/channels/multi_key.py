"""The console's work on multi-key channels: `POST /api/channel/multi_key/manage` (new-api's actions
and answer shapes), and an edit of a channel followed by the channel's state following its keys.

A key is named by its fingerprint when the console sends one (a position may have moved since the
page was drawn: another admin deleted a key, the relay disabled one), else by its position. State
changes go through api.channels.keys (one writer; the channel follows its keys; every process
hears the `channel` event); changes to the list through models.channel.update_keys, then the same. No key
ever leaves this module: the rows carry a masked preview.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from api.channels import admin as channels
from api.channels import keys as channel_keys
from api.channels.pasted_keys import check_storable, key_list
from api.errors import ApiError
from api.services.events import EventBus
from api.services.params import positive_int, row_id
from api.services.store import Store
from models import Channel, keyring
from models.channel import update_keys

DEFAULT_PAGE_SIZE = 50  # new-api's
MAX_PAGE_SIZE = 500
ACTIONS = ("get_key_status", "enable_key", "disable_key", "enable_all_keys", "disable_all_keys", "delete_key",
           "delete_disabled_keys", "add_keys")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action answers: the envelope's data, and its message (an api/i18n key and its
    parameters; "" for none)."""

    data: Any = None
    message: str = ""
    params: Mapping[str, object] | None = None


async def update_channel(body: Mapping[str, Any], events: EventBus | None, *, keeps_keys: bool) -> Channel:
    """PUT /api/channel/: the edit (api.channels.admin; `keeps_keys` as there), then a multi-key channel
    follows its keys (disabled automatically when none is enabled, back when one is again)."""
    channel = await channels.update_channel(body, events, keeps_keys=keeps_keys)
    if keyring.load(channel.key, channel.channel_info).multi:
        await channel_keys.follow_keys(channel, events)
        channel = await channels.get_channel(channel.id)
    return channel


async def manage(body: Mapping[str, Any], store: Store, events: EventBus | None) -> Outcome:
    action = body.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        raise ApiError("channel_key_action_invalid", action=str(action)[:50])
    channel_id = row_id(body.get("channel_id"))
    if channel_id is None:
        raise ApiError("channel_not_found")
    channel = await channels.get_channel(channel_id)
    ring = keyring.load(channel.key, channel.channel_info)
    if not ring.multi:
        raise ApiError("channel_not_multi_key")
    if action == "get_key_status":
        return Outcome(await key_status(channel, body, store))
    if action in ("enable_key", "disable_key"):
        status = keyring.ENABLED if action == "enable_key" else keyring.MANUAL
        which = _which(body, ring)
        await channel_keys.set_key_status(channel_id, which, status, events=events)
        return Outcome(None, "channel_key_enabled" if status == keyring.ENABLED else "channel_key_disabled")
    if action in ("enable_all_keys", "disable_all_keys"):
        status = keyring.ENABLED if action == "enable_all_keys" else keyring.MANUAL
        if status == keyring.MANUAL and not ring.enabled():
            raise ApiError("channel_keys_none_to_disable")
        count = await channel_keys.set_all_keys(channel_id, status, events=events)
        return Outcome(count, "channel_keys_enabled" if status == keyring.ENABLED else "channel_keys_disabled",
                       {"count": count})
    if action == "delete_key":
        which = _which(body, ring)
        await _change_list(channel_id, lambda r: _delete(r, which), events)
        return Outcome(None, "channel_key_deleted")
    if action == "delete_disabled_keys":
        count = await _change_list(channel_id, _delete_auto_disabled, events)
        return Outcome(count, "channel_keys_deleted_auto", {"count": count})
    text = body.get("keys")
    if not isinstance(text, str) or not text.strip():
        raise ApiError("channel_keys_required")
    added = key_list(text, channel.type)
    count = await _change_list(channel_id, lambda r: _add(r, added), events)
    return Outcome({"added": count, "skipped": len(added) - count}, "channel_keys_added",
                   {"count": count, "skipped": len(added) - count})


async def key_status(channel: Channel, body: Mapping[str, Any], store: Store) -> dict[str, Any]:
    """new-api's get_key_status answer: a page of keys (from 1; `status` filters), the page, and the
    counts of every key by state. Each row also has its fingerprint and counters (api.channels.keys)."""
    page = positive_int(body.get("page"), "page", 1)
    size = min(positive_int(body.get("page_size"), "page_size", DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE)
    wanted = body.get("status")
    if wanted is not None and (isinstance(wanted, bool) or wanted not in (keyring.ENABLED, keyring.MANUAL,
                                                                           keyring.AUTO)):
        raise ApiError("invalid_param", name="status")
    rows = channel_keys.key_rows(channel, await channel_keys.key_stats(store, channel.id))
    for row in rows:
        row["key_preview"] = row.pop("key")  # masked (models.keyring.mask); new-api's field name
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in (keyring.ENABLED, keyring.MANUAL, keyring.AUTO)}
    chosen = [r for r in rows if wanted is None or r["status"] == wanted]
    pages = max(1, -(-len(chosen) // size))
    page = min(page, pages)
    return {"keys": chosen[(page - 1) * size:page * size], "total": len(chosen), "page": page, "page_size": size,
            "total_pages": pages, "enabled_count": counts[keyring.ENABLED],
            "manual_disabled_count": counts[keyring.MANUAL], "auto_disabled_count": counts[keyring.AUTO]}


def _which(body: Mapping[str, Any], ring: keyring.Keyring) -> int | str:
    """The key an action names: its fingerprint when given (it follows the key), else its position."""
    fp, index = body.get("fingerprint"), body.get("key_index")
    fp = None if fp == "" else fp
    which: int | str
    if isinstance(fp, str) and fp.strip():
        which = fp.strip().lower()
    elif isinstance(index, int) and not isinstance(index, bool):
        which = index
    elif fp is None and index is None:
        raise ApiError("channel_key_index_missing")
    else:
        raise ApiError("invalid_param", name="fingerprint" if fp is not None else "key_index")
    if channel_keys.index_of(ring, which) is None:
        raise ApiError("channel_key_not_found")
    return which


async def _change_list(channel_id: int, change: Callable[[keyring.Keyring], int], events: EventBus | None) -> int:
    """A change of the key list under the row lock (models.channel.update_keys); then the channel follows
    its keys and every process reloads it. Returns what `change` returned."""
    channel, result = await update_keys(channel_id, change)
    await channel_keys.follow_keys(channel, events)
    await channels.publish(events, [channel_id])
    return result


def _set_keys(ring: keyring.Keyring, keys: list[str]) -> None:
    new = ring.with_keys(keys)
    ring.keys, ring.states = new.keys, new.states


def _delete(ring: keyring.Keyring, which: int | str) -> int:
    index = channel_keys.index_of(ring, which)
    if index is None:
        raise ApiError("channel_key_not_found")  # gone since the request was read
    if len(ring.keys) <= 1:
        raise ApiError("channel_key_last")
    _set_keys(ring, [k for i, k in enumerate(ring.keys) if i != index])
    return 1


def _delete_auto_disabled(ring: keyring.Keyring) -> int:
    keep = [k for i, k in enumerate(ring.keys) if ring.status(i) != keyring.AUTO]
    if len(keep) == len(ring.keys):
        raise ApiError("channel_keys_no_auto_disabled")
    if not keep:
        raise ApiError("channel_key_last")
    deleted = len(ring.keys) - len(keep)
    _set_keys(ring, keep)
    return deleted


def _add(ring: keyring.Keyring, added: list[str]) -> int:
    present = set(ring.keys)
    new = [k for k in added if k not in present]
    check_storable([*ring.keys, *new])
    if len(ring.keys) + len(new) > keyring.MAX_KEYS:
        raise ApiError("channel_keys_too_many", max=keyring.MAX_KEYS)
    _set_keys(ring, [*ring.keys, *new])
    return len(new)
