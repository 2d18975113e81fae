"""Channels: validation of the channel form, paging and search, and the abilities that route to them.

Every mutation commits in the database (channel and abilities in one transaction) and then
publishes `channel` with the channel id, so the relay's in-process index of every process reloads
it at once. Keys never leave this module except towards an adaptor: callers get `public_dict()`.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from tortoise.expressions import Q
from tortoise.transactions import in_transaction

from api.channels.test_outcome import parse_other_info
from api.errors import ApiError
from api.services.events import EventBus
from api.services.paging import Page
from api.services.params import id_value, loose_int
from api.upstream import catalogue
from models import Ability, Channel, keyring
from models.enums import ChannelStatus

MAX_KEYS_PER_CREATE = 1000
MIN_PRIORITY = -999
DEFAULT_GROUP = "default"
TAG_MAX = 64  # the column's length
KEY_LIST_MODES = ("append", "replace")  # new-api's `key_mode` on an update of a multi-key channel


def valid_types() -> set[int]:
    return set(catalogue.CATALOGUE)


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


# -- parsing helpers -------------------------------------------------------------------------------

def split_list(value: str | Sequence[Any] | None) -> list[str]:
    """"a, b,,a" or ["a", "b"] → ["a", "b"]: trimmed, empties dropped, first occurrence kept."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return list(dict.fromkeys(s.strip() for s in items if s and s.strip()))


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in `text`; {} for empty text; None when it is not a JSON object."""
    if not text.strip():
        return {}
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def model_mapping_of(channel: Channel) -> dict[str, str]:
    mapping = json_object(channel.model_mapping or "") or {}
    return {k: v for k, v in mapping.items() if isinstance(v, str) and v}


def _int_field(body: Mapping[str, Any], name: str) -> int | None:
    if name not in body or body[name] is None or body[name] == "":
        return None
    return loose_int(body[name], name)


def _str_field(body: Mapping[str, Any], name: str) -> str | None:
    if name not in body or body[name] is None:
        return None
    value = body[name]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ApiError("invalid_param", name=name)
    return value


def _flag(body: Mapping[str, Any], name: str) -> bool | None:
    """true/false (or 1/0) when given, None when not."""
    if name not in body or body[name] is None:
        return None
    value = body[name]
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ApiError("invalid_param", name=name)


@dataclass
class ChannelForm:
    """The validated fields of a create or update (None = not given, keep the stored value)."""

    fields: dict[str, Any]
    key: str | None  # None or "" = not given
    multi: bool | None = None  # `multi_key`: the keys of `key` make one channel
    mode: str | None = None  # `multi_key_mode`: random | polling | affinity
    append: bool = False  # `key_mode: "append"`: the keys of `key` are added to the channel's


def _key_modes(body: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(the key mode, whether `key` is appended). `multi_key_mode` names the mode; `key_mode` is
    new-api's append | replace, and also takes a mode name (the two sets do not overlap)."""
    mode = _str_field(body, "multi_key_mode")
    key_mode = _str_field(body, "key_mode")
    mode = mode.strip() if mode else None
    key_mode = key_mode.strip() if key_mode else None
    if key_mode in keyring.MODES and mode is None:
        mode, key_mode = key_mode, None
    if mode is not None and mode not in keyring.MODES:
        raise ApiError("channel_multi_key_mode_invalid", mode=mode)
    if key_mode is not None and key_mode not in KEY_LIST_MODES:
        raise ApiError("channel_key_mode_invalid", mode=key_mode)
    return mode, key_mode == "append"


def parse_form(body: Mapping[str, Any], *, creating: bool) -> ChannelForm:
    """Validate the channel form into model fields.

    On update only the fields present are changed; an empty key keeps the stored one.
    """
    fields: dict[str, Any] = {}
    for name in ("name", "openai_organization", "test_model", "base_url", "other", "model_mapping",
                 "status_code_mapping"):
        value = _str_field(body, name)
        if value is not None:
            fields[name] = value.strip()
    for name in ("type", "priority", "weight", "auto_ban", "status", "max_input_tokens", "cache_per_key",
                 "max_inflight"):
        number = _int_field(body, name)
        if number is not None:
            fields[name] = number
    tag = _str_field(body, "tag")
    if tag is not None:
        fields["tag"] = tag.strip()
    if "models" in body and body["models"] is not None:
        models = body["models"]
        if not isinstance(models, str | list):
            raise ApiError("invalid_param", name="models")
        fields["models"] = ",".join(split_list(models))
    groups = body.get("groups") if isinstance(body.get("groups"), list) else body.get("group")
    if groups is not None:
        if not isinstance(groups, str | list):
            raise ApiError("invalid_param", name="group")
        fields["group"] = ",".join(split_list(groups)) or DEFAULT_GROUP
    key = _str_field(body, "key")
    key = key.strip() if key is not None else None

    if creating:
        if not fields.get("name") or not key:
            raise ApiError("channel_name_key_required")
        if not fields.get("models"):
            raise ApiError("channel_models_required")
        fields.setdefault("type", catalogue.DEFAULT_TYPE)
        fields.setdefault("group", DEFAULT_GROUP)
    else:
        if "name" in fields and not fields["name"]:
            raise ApiError("channel_name_key_required")
        if "models" in fields and not fields["models"]:
            raise ApiError("channel_models_required")
    if "type" in fields and fields["type"] not in valid_types():
        raise ApiError("channel_type_invalid", type=fields["type"])
    if "status" in fields and fields["status"] not in (ChannelStatus.ENABLED, ChannelStatus.MANUALLY_DISABLED,
                                                       ChannelStatus.AUTO_DISABLED):
        raise ApiError("channel_status_invalid")
    if "model_mapping" in fields:
        mapping = json_object(fields["model_mapping"])
        if mapping is None or not all(isinstance(v, str) for v in mapping.values()):
            raise ApiError("channel_model_mapping_invalid")
    if "status_code_mapping" in fields:
        mapping = json_object(fields["status_code_mapping"])
        if mapping is None or not all(isinstance(v, str | int) and not isinstance(v, bool)
                                      for v in mapping.values()):
            raise ApiError("channel_status_code_mapping_invalid")
    if "base_url" in fields:
        fields["base_url"] = fields["base_url"].rstrip("/")
    if "weight" in fields:
        fields["weight"] = max(0, fields["weight"])
    if "priority" in fields:
        fields["priority"] = max(MIN_PRIORITY, fields["priority"])
    if "auto_ban" in fields:
        fields["auto_ban"] = 1 if fields["auto_ban"] else 0
    if "max_input_tokens" in fields:
        fields["max_input_tokens"] = max(0, fields["max_input_tokens"])
    check_tag(fields.get("tag", ""))
    if fields.get("cache_per_key", 0) not in (0, 1):
        raise ApiError("channel_cache_per_key_invalid")
    if fields.get("max_inflight", 0) < 0 or fields.get("max_inflight", 0) > 2**31 - 1:
        raise ApiError("channel_max_inflight_invalid")
    mode, append = _key_modes(body)
    return ChannelForm(fields, key or None, _flag(body, "multi_key"), mode, append)


def check_tag(tag: str) -> None:
    if len(tag) > TAG_MAX:
        raise ApiError("channel_tag_too_long", max=TAG_MAX)


def check_type(fields: Mapping[str, Any]) -> None:
    """On the merged, final values: a type the relay can serve (not a retired one), and a base URL
    where the type has no default one."""
    channel_type = fields.get("type")
    if channel_type is None:
        return
    row = catalogue.provider(channel_type)
    if row.retired is not None:
        raise ApiError("channel_type_retired", type=catalogue.label(channel_type), reason=row.retired[0],
                       reason_zh=row.retired[1])
    if not (fields.get("base_url") or "").strip() and catalogue.known(channel_type) and row.base_url_required:
        raise ApiError("channel_base_url_required", type=catalogue.label(channel_type))


def key_problem(key: str, channel_type: int) -> str | None:
    """The i18n key of the refusal when `key` does not have the type's format, else None."""
    return catalogue.provider(channel_type).key.problem(key.strip())


def check_keys(keys: Sequence[str], channel_type: int, lines: Sequence[int] | None = None) -> None:
    """Every key has the type's format (its catalogue row); the refusal names the format and the line
    (`lines`: each key's line in what was pasted, else its position from 1)."""
    fmt = catalogue.provider(channel_type).key
    for i, key in enumerate(keys):
        problem = fmt.problem(key.strip())
        if problem is not None:
            raise ApiError(problem, line=lines[i] if lines is not None else i + 1, problem=fmt.detail(key))


def apply_type_defaults(fields: dict[str, Any], *, type_changed: bool = True) -> None:
    """The type's `other` default and check (on the merged, final values). The type and base URL
    are checked when they are set or changed, so an existing channel of a type that can no longer
    be relayed (a retired one) can still be disabled, reweighted or switched to another type."""
    if type_changed:
        check_type(fields)
    channel_type = fields.get("type")
    if channel_type is None:
        return
    field = catalogue.provider(channel_type).other
    if field is None:
        return
    other = (fields.get("other") or "").strip()
    if not other and field.default:
        fields["other"] = other = field.default
    refused = field.check(other)
    if refused is not None:
        message, args = refused
        raise ApiError(message, **args)


def _numbered(text: str, whole: bool, multi: bool) -> list[tuple[int, str]]:
    """The keys pasted in `text` with their line (or, in a JSON array, their position), from 1.
    A whole-document key (a service-account JSON) is one key, or one element of a JSON array when
    the channel holds several."""
    text = text.strip()
    if not text:
        return []
    if multi and text.startswith("["):
        try:
            docs = orjson.loads(text)
        except orjson.JSONDecodeError:
            docs = None
        if isinstance(docs, list):
            return [(i, d.strip() if isinstance(d, str) else orjson.dumps(d).decode())
                    for i, d in enumerate(docs, start=1) if d not in (None, "")]
    if whole and not multi:
        return [(1, text)]
    if whole and text.startswith("{"):
        return [(1, _compact(text))]
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _compact(document: str) -> str:
    """A JSON document as a multi-key channel stores it (compact, as models.keyring reads it back)."""
    try:
        return orjson.dumps(orjson.loads(document)).decode()
    except orjson.JSONDecodeError:
        return document


def split_keys(key: str, channel_type: int) -> list[str]:
    """One channel per line; a key that is one document (a service-account JSON) is kept whole.
    Each key is checked against the type's format."""
    numbered = _numbered(key, catalogue.provider(channel_type).key.whole, multi=False)
    check_keys([k for _, k in numbered], channel_type, [n for n, _ in numbered])
    keys = list(dict.fromkeys(k for _, k in numbered))
    if len(keys) > MAX_KEYS_PER_CREATE:
        raise ApiError("channel_too_many_keys", max=MAX_KEYS_PER_CREATE)
    return keys


def key_list(text: str, channel_type: int) -> list[str]:
    """The keys of a multi-key channel pasted in `text` (one per line, or a JSON array of documents),
    each checked against the type's format (the refusal names the line), duplicates dropped, at most
    models.keyring.MAX_KEYS of them. Documents and one-line keys are not mixed: the channel stores either a JSON array
    or lines."""
    numbered = _numbered(text, catalogue.provider(channel_type).key.whole, multi=True)
    check_keys([k for _, k in numbered], channel_type, [n for n, _ in numbered])
    keys = list(dict.fromkeys(k for _, k in numbered))
    check_storable(keys)
    if len(keys) > keyring.MAX_KEYS:
        raise ApiError("channel_keys_too_many", max=keyring.MAX_KEYS)
    return keys


def check_storable(keys: Sequence[str]) -> None:
    """The keys can be stored together (models.keyring: lines, or a JSON array when one of them is a
    document, which then all must be)."""
    documents = [k for k in keys if k.lstrip().startswith(("{", "["))]
    if not documents:
        return
    for key in documents:
        try:
            doc = orjson.loads(key)
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            raise ApiError("channel_keys_mixed")
    if len(documents) != len(keys):
        raise ApiError("channel_keys_mixed")


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

async def page_of(query_set, page: Page, id_sort: bool) -> dict[str, Any]:
    total = await query_set.count()
    ordering = ("-id",) if id_sort else ("-priority", "id")
    rows = await query_set.order_by(*ordering).offset(page.offset).limit(page.size)
    return page.envelope([c.public_dict() for c in rows], total)


def _list_member(field: str, value: str) -> Q:
    """`value` is one element of the comma-separated column `field`."""
    return (Q(**{field: value}) | Q(**{f"{field}__startswith": value + ","})
            | Q(**{f"{field}__endswith": "," + value}) | Q(**{f"{field}__contains": "," + value + ","}))


def search_filter(keyword: str = "", group: str = "", model: str = "", tag: str = "") -> Q:
    query = Q()
    keyword, group, model, tag = keyword.strip(), group.strip(), model.strip(), tag.strip()
    if tag:
        query &= Q(tag=tag)
    if keyword:
        match = Q(name__icontains=keyword) | Q(key=keyword)
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


async def update_channel(body: Mapping[str, Any], events: EventBus | None) -> Channel:
    """The fields given, and the keys through models.keyring (one writer: the row stays locked)."""
    channel_id = _int_field(body, "id")
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
        new = _new_ring(ring, form, merged["type"], merged["type"] != channel.type)
        for name, value in form.fields.items():
            setattr(channel, name, value)
        await channel.save(update_fields=list(form.fields))
        if (new.key_text(), new.info_text()) != (ring.key_text(), ring.info_text()):
            channel, _ = await keyring.update(channel.id, lambda stored: _replace(stored, new))
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
    ids = await Channel.filter(status__in=[ChannelStatus.MANUALLY_DISABLED, ChannelStatus.AUTO_DISABLED]) \
        .values_list("id", flat=True)
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
