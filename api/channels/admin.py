"""Channels: paging and search, create, edit, copy and delete, the status moves, and the abilities
that route to them.

Every mutation commits in the database (channel and abilities in one transaction) and then
publishes `channel` with the channel id, so the relay's in-process index of every process reloads
it at once. Keys never leave these modules except towards an adaptor: callers get `public_dict()`.
The form is validated by api.channels.form, the pasted keys by api.channels.pasted_keys.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import orjson
from tortoise.expressions import Q
from tortoise.queryset import QuerySet
from tortoise.transactions import in_transaction

from api.channels.form import (
    DEFAULT_GROUP,
    ChannelForm,
    apply_type_defaults,
    int_field,
    parse_form,
    split_list,
    valid_types,
)
from api.channels.pasted_keys import check_keys, check_storable, key_list, split_keys
from api.channels.test_outcome import parse_other_info
from api.errors import ApiError
from api.services.columns import text_filter
from api.services.events import EventBus
from api.services.paging import Page
from api.services.params import id_value
from api.upstream import catalogue
from models import Ability, Channel, keyring
from models.channel import update_keys
from models.enums import ChannelStatus


def type_models(channel_type: int) -> list[str]:
    """The built-in model list of a type (its catalogue row's)."""
    return list(catalogue.provider(channel_type).models) if catalogue.known(channel_type) else []


def models_by_type() -> dict[int, list[str]]:
    return {t: type_models(t) for t in sorted(valid_types())}


async def all_model_ids() -> list[str]:
    """Every model a channel form may offer: the built-in lists plus every model configured."""
    seen: dict[str, None] = {}
    for models in models_by_type().values():
        seen.update(dict.fromkeys(models))
    for (raw,) in await Channel.all().values_list("models"):
        seen.update(dict.fromkeys(split_list(raw)))
    return sorted(seen)


# -- abilities -------------------------------------------------------------------------------------

def abilities_of(channel: Channel) -> list[Ability]:
    enabled = channel.status == ChannelStatus.ENABLED
    return [
        Ability(group=group, model=model, channel_id=channel.id, enabled=enabled, priority=channel.priority,
                weight=channel.weight)
        for group in split_list(channel.group) or [DEFAULT_GROUP]
        for model in split_list(channel.models)
    ]


async def rebuild_abilities(channel: Channel) -> None:
    """Inside the caller's transaction: one row per group × model, enabled = channel enabled."""
    await Ability.filter(channel_id=channel.id).delete()
    rows = abilities_of(channel)
    if rows:
        await Ability.bulk_create(rows, batch_size=200)


async def publish(events: EventBus | None, ids: Iterable[int]) -> None:
    if events is None:
        return
    for channel_id in ids:
        await events.publish("channel", id=channel_id)


# -- reads -----------------------------------------------------------------------------------------

async def page_of(query_set: QuerySet[Channel], page: Page, id_sort: bool) -> dict[str, Any]:
    total = await query_set.count()
    ordering = ("-id",) if id_sort else ("-priority", "id")
    rows = await query_set.order_by(*ordering).offset(page.offset).limit(page.size)
    return page.envelope([c.public_dict() for c in rows], total)


def _list_member(field: str, value: str) -> Q:
    """`value` is one element of the comma-separated column `field`."""
    return (text_filter(Channel, field, value) | text_filter(Channel, field, value + ",", "startswith")
            | text_filter(Channel, field, "," + value, "endswith")
            | text_filter(Channel, field, "," + value + ",", "contains"))


def search_filter(keyword: str = "", group: str = "", model: str = "", tag: str = "") -> Q:
    query = Q()
    keyword, group, model, tag = keyword.strip(), group.strip(), model.strip(), tag.strip()
    if tag:
        query &= text_filter(Channel, "tag", tag)
    if keyword:
        match = text_filter(Channel, "name", keyword, "icontains") | Q(key=keyword)
        if (row_id := id_value(keyword)) is not None:
            match |= Q(id=row_id)
        query &= match
    if group:
        query &= _list_member("group", group)
    if model:
        query &= Q(models__icontains=model)
    return query


async def get_channel(channel_id: int) -> Channel:
    channel = await Channel.filter(id=channel_id).first()
    if channel is None:
        raise ApiError("channel_not_found")
    return channel


# -- writes ----------------------------------------------------------------------------------------

def _create_body(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The channel form of a create: the body itself, or new-api's `{mode, multi_key_mode, channel}`
    (mode single | batch: one channel per key, multi_to_single: one channel holding them all)."""
    if "channel" not in body:
        return body
    channel, mode = body["channel"], body.get("mode") or "batch"
    if not isinstance(channel, dict):
        raise ApiError("invalid_param", name="channel")
    if mode not in ("single", "batch", "multi_to_single"):
        raise ApiError("invalid_param", name="mode")
    merged = dict(channel)
    if mode == "multi_to_single":
        merged["multi_key"] = True
    if body.get("multi_key_mode") is not None:
        merged["multi_key_mode"] = body["multi_key_mode"]
    return merged


async def create_channels(body: Mapping[str, Any], events: EventBus | None) -> list[Channel]:
    """One channel per key line, or with `multi_key` one channel holding every key of `key`."""
    form = parse_form(_create_body(body), creating=True)
    apply_type_defaults(form.fields)
    if form.multi:
        ring = keyring.Keyring(True, form.mode or keyring.DEFAULT_MODE, key_list(form.key or "", form.fields["type"]))
        rows = [(ring.key_text(), ring.info_text())] if ring.keys else []
    else:
        rows = [(key, "") for key in split_keys(form.key or "", form.fields["type"])]
    if not rows:
        raise ApiError("channel_name_key_required")
    now = int(time.time())
    created: list[Channel] = []
    async with in_transaction():
        for key, info in rows:
            channel = await Channel.create(**form.fields, key=key, channel_info=info, created_time=now)
            await rebuild_abilities(channel)
            created.append(channel)
    await publish(events, (c.id for c in created))
    return created


def _new_ring(ring: keyring.Keyring, form: ChannelForm, channel_type: int, type_changed: bool) -> keyring.Keyring:
    """The channel's keys after an update (checked; the stored ring is left as it is): `multi_key`
    turns one key into key 0 of a multi-key channel, or back when one key is left; a `key` replaces
    the list (`key_mode: "append"` adds to it), each kept key keeping its state."""
    new = keyring.Keyring(ring.multi, ring.mode, list(ring.keys), dict(ring.states))
    if form.multi is False and ring.multi:
        if len(ring.keys) > 1:
            raise ApiError("channel_multi_key_off_refused", count=len(ring.keys))
        new = keyring.Keyring(False, ring.mode, list(ring.keys))
    elif form.multi and not ring.multi:
        new.multi = True
    if form.mode is not None:
        new.mode = form.mode
    if form.key and new.multi:
        added = key_list(form.key, channel_type)
        keys = [*new.keys, *added] if form.append else added
        check_storable(keys)
        if len(dict.fromkeys(keys)) > keyring.MAX_KEYS:
            raise ApiError("channel_keys_too_many", max=keyring.MAX_KEYS)
        new = new.with_keys(keys)
    elif form.key:
        check_keys([form.key], channel_type)
        new = keyring.Keyring(False, new.mode, [form.key])
    elif type_changed:
        check_keys(new.keys, channel_type)
    return new


def address_of(channel_type: int, base_url: str) -> str:
    """Where a channel's keys are sent: its base URL, else its type's own address. The `other` field
    never names a host: what it may hold is checked per type (api.channels.form.apply_type_defaults)
    and keeps the key at the provider's own hosts (a Vertex region, a Cloudflare account, an API
    version); Bedrock's region is in its key."""
    return base_url.strip().rstrip("/") or catalogue.provider(channel_type).base_url


def check_address_change(channel: Channel, merged: Mapping[str, Any], form: ChannelForm, ring: keyring.Keyring,
                         keeps_keys: bool) -> None:
    """A keyed channel sent elsewhere keeps its stored keys only when `keeps_keys` (root edits it), or
    when the edit gives the key (every key of a multi-key channel, replaced, not appended): else an
    administrator who may not read the keys would have them sent to an address of theirs by a test."""
    if keeps_keys or not ring.keys:
        return
    if address_of(merged["type"], merged["base_url"] or "") == address_of(channel.type, channel.base_url or ""):
        return
    if form.key and not form.append:
        return
    raise ApiError("channel_address_needs_key")


async def update_channel(body: Mapping[str, Any], events: EventBus | None, *, keeps_keys: bool) -> Channel:
    """The fields given, and the keys through models.keyring (one writer: the row stays locked).
    `keeps_keys`: the caller may send the stored keys to a new address (root; check_address_change)."""
    channel_id = int_field(body, "id")
    if not channel_id:
        raise ApiError("channel_not_found")
    form = parse_form(body, creating=False)
    async with in_transaction():
        channel = await Channel.filter(id=channel_id).select_for_update().first()
        if channel is None:
            raise ApiError("channel_not_found")
        merged = {"type": channel.type, "other": channel.other, "base_url": channel.base_url, **form.fields}
        apply_type_defaults(merged, type_changed="type" in form.fields or "base_url" in form.fields)
        form.fields["other"] = merged["other"]
        ring = keyring.load(channel.key, channel.channel_info)
        check_address_change(channel, merged, form, ring, keeps_keys)
        new = _new_ring(ring, form, merged["type"], merged["type"] != channel.type)
        for name, value in form.fields.items():
            setattr(channel, name, value)
        await channel.save(update_fields=list(form.fields))
        if (new.key_text(), new.info_text()) != (ring.key_text(), ring.info_text()):
            channel, _ = await update_keys(channel.id, lambda stored: _replace(stored, new))
        await rebuild_abilities(channel)
    await publish(events, [channel.id])
    return channel


def _replace(ring: keyring.Keyring, new: keyring.Keyring) -> None:
    ring.multi, ring.mode, ring.keys, ring.states = new.multi, new.mode, new.keys, new.states


async def copy_channel(channel_id: int, suffix: str, events: EventBus | None) -> Channel:
    """A copy that keeps the stored key (the browser never sees it): balance and usage reset."""
    source = await get_channel(channel_id)
    fields = {k: v for k, v in source.public_dict().items()
              if k not in {"id", "balance", "balance_updated_time", "used_quota", "created_time", "test_time",
                           "response_time", "other_info", "channel_info"}}
    fields["name"] = source.name + suffix
    async with in_transaction():  # the keys and their states as they are (channel_info is stored, not shown)
        channel = await Channel.create(**fields, key=source.key, channel_info=source.channel_info,
                                       created_time=int(time.time()))
        await rebuild_abilities(channel)
    await publish(events, [channel.id])
    return channel


async def delete_channels(ids: Sequence[int], events: EventBus | None) -> int:
    ids = list(dict.fromkeys(int(i) for i in ids))
    if not ids:
        return 0
    async with in_transaction():
        existing = cast(list[int], await Channel.filter(id__in=ids).values_list("id", flat=True))
        await Ability.filter(channel_id__in=existing).delete()
        await Channel.filter(id__in=existing).delete()
    await publish(events, existing)
    return len(existing)


async def delete_disabled(events: EventBus | None) -> int:
    ids = (await Channel.filter(status__in=[ChannelStatus.MANUALLY_DISABLED, ChannelStatus.AUTO_DISABLED])
           .values_list("id", flat=True))
    return await delete_channels(cast(list[int], ids), events)


async def fix_abilities(events: EventBus | None) -> int:
    """Rebuild every channel's abilities and drop those of channels that no longer exist."""
    fixed: list[int] = []
    async with in_transaction():
        channel_ids = await Channel.all().values_list("id", flat=True)
        await Ability.exclude(channel_id__in=channel_ids).delete()
        for channel in await Channel.all():
            await rebuild_abilities(channel)
            fixed.append(channel.id)
    await publish(events, fixed)
    return len(fixed)


async def set_status(channel_id: int, status: ChannelStatus, *, only_from: Sequence[ChannelStatus],
                     reason: str = "", events: EventBus | None) -> bool:
    """Move a channel to `status` only if it currently is in `only_from` (atomic: a manual disable
    racing an automatic change always wins). Abilities follow. True when the channel changed."""
    fields: dict[str, Any] = {"status": int(status)}
    async with in_transaction():
        if status == ChannelStatus.AUTO_DISABLED:  # merged: the last test's outcome stays beside the reason
            row = await Channel.filter(id=channel_id).only("id", "other_info").first()
            info = parse_other_info(row.other_info) if row is not None else {}
            fields["other_info"] = orjson.dumps({**info, "status_reason": reason,
                                                 "status_time": int(time.time())}).decode()
        changed = await Channel.filter(id=channel_id, status__in=[int(s) for s in only_from]).update(**fields)
        if changed:
            await Ability.filter(channel_id=channel_id).update(enabled=status == ChannelStatus.ENABLED)
    if changed:
        await publish(events, [channel_id])
    return bool(changed)


async def auto_disable(channel_id: int, reason: str, events: EventBus | None) -> bool:
    """Status 3 with other_info {status_reason, status_time}; only an enabled channel is touched."""
    return await set_status(channel_id, ChannelStatus.AUTO_DISABLED, only_from=(ChannelStatus.ENABLED,),
                            reason=reason, events=events)


async def auto_enable(channel_id: int, events: EventBus | None) -> bool:
    """Back to status 1, only from an automatic disable (a manual disable, 2, is never undone)."""
    return await set_status(channel_id, ChannelStatus.ENABLED, only_from=(ChannelStatus.AUTO_DISABLED,),
                            events=events)
