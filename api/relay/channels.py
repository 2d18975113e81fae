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

from api.errors import ApiError
from api.relay import catalogue
from api.relay.test_outcome import parse_other_info
from api.services.events import EventBus
from api.services.params import id_value
from models import Ability, Channel
from models.enums import ChannelStatus

DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 100
MAX_KEYS_PER_CREATE = 1000
MIN_PRIORITY = -999
DEFAULT_GROUP = "default"


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
    value = body[name]
    if isinstance(value, bool):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ApiError("invalid_param", name=name) from exc
    if number != number or not number.is_integer():
        raise ApiError("invalid_param", name=name)
    return int(number)


def _str_field(body: Mapping[str, Any], name: str) -> str | None:
    if name not in body or body[name] is None:
        return None
    value = body[name]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ApiError("invalid_param", name=name)
    return value


@dataclass
class ChannelForm:
    """The validated fields of a create or update (None = not given, keep the stored value)."""

    fields: dict[str, Any]
    key: str | None  # None or "" = not given


def parse_form(body: Mapping[str, Any], *, creating: bool) -> ChannelForm:
    """Validate the channel form (spec 000 §5 "Channel form") into model fields.

    On update only the fields present are changed; an empty key keeps the stored one.
    """
    fields: dict[str, Any] = {}
    for name in ("name", "openai_organization", "test_model", "base_url", "other", "model_mapping",
                 "status_code_mapping"):
        value = _str_field(body, name)
        if value is not None:
            fields[name] = value.strip()
    for name in ("type", "priority", "weight", "auto_ban", "status", "max_input_tokens"):
        number = _int_field(body, name)
        if number is not None:
            fields[name] = number
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
    return ChannelForm(fields, key or None)


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


def check_keys(keys: Sequence[str], channel_type: int) -> None:
    """Every key has the type's format (its catalogue row); the refusal names the format and the line."""
    fmt = catalogue.provider(channel_type).key
    for line, key in enumerate(keys, start=1):
        problem = fmt.problem(key.strip())
        if problem is not None:
            raise ApiError(problem, line=line, problem=fmt.detail(key))


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


def split_keys(key: str, channel_type: int) -> list[str]:
    """One channel per line; a key that is one document (a service-account JSON) is kept whole.
    Each key is checked against the type's format."""
    if catalogue.provider(channel_type).key.whole:
        keys = [key.strip()] if key.strip() else []
    else:
        keys = list(dict.fromkeys(line.strip() for line in key.splitlines() if line.strip()))
    check_keys(keys, channel_type)
    if len(keys) > MAX_KEYS_PER_CREATE:
        raise ApiError("channel_too_many_keys", max=MAX_KEYS_PER_CREATE)
    return keys


# -- abilities -------------------------------------------------------------------------------------

def abilities_of(channel: Channel) -> list[Ability]:
    enabled = channel.status == ChannelStatus.ENABLED
    return [
        Ability(group=group, model=model, channel_id=channel.id, enabled=enabled, priority=channel.priority,
                weight=channel.weight)
        for group in split_list(channel.group) or [DEFAULT_GROUP]
        for model in split_list(channel.models)
    ]


async def _rebuild_abilities(channel: Channel) -> None:
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

def page_args(query: Mapping[str, str]) -> tuple[int, int, bool]:
    try:
        page = max(0, int(query.get("p", "0") or 0))
        size = int(query.get("page_size", "") or DEFAULT_PAGE_SIZE)
    except ValueError as exc:
        raise ApiError("invalid_param", name="p") from exc
    size = min(max(size, 1), MAX_PAGE_SIZE)
    id_sort = query.get("id_sort", "").lower() in {"true", "1"}
    return page, size, id_sort


async def page_of(query_set, page: int, size: int, id_sort: bool) -> dict[str, Any]:
    total = await query_set.count()
    ordering = ("-id",) if id_sort else ("-priority", "id")
    rows = await query_set.order_by(*ordering).offset(page * size).limit(size)
    return {"items": [c.public_dict() for c in rows], "total": total, "page": page, "page_size": size}


def _list_member(field: str, value: str) -> Q:
    """`value` is one element of the comma-separated column `field`."""
    return (Q(**{field: value}) | Q(**{f"{field}__startswith": value + ","})
            | Q(**{f"{field}__endswith": "," + value}) | Q(**{f"{field}__contains": "," + value + ","}))


def search_filter(keyword: str, group: str, model: str) -> Q:
    query = Q()
    keyword, group, model = keyword.strip(), group.strip(), model.strip()
    if keyword:
        match = Q(name__icontains=keyword) | Q(key=keyword)
        if id_value(keyword) is not None:
            match |= Q(id=int(keyword))
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

async def create_channels(body: Mapping[str, Any], events: EventBus | None) -> list[Channel]:
    form = parse_form(body, creating=True)
    apply_type_defaults(form.fields)
    keys = split_keys(form.key or "", form.fields["type"])
    if not keys:
        raise ApiError("channel_name_key_required")
    now = int(time.time())
    created: list[Channel] = []
    async with in_transaction():
        for key in keys:
            channel = await Channel.create(**form.fields, key=key, created_time=now)
            await _rebuild_abilities(channel)
            created.append(channel)
    await publish(events, (c.id for c in created))
    return created


async def update_channel(body: Mapping[str, Any], events: EventBus | None) -> Channel:
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
        if form.key or merged["type"] != channel.type:
            check_keys([form.key or channel.key], merged["type"])
        for name, value in form.fields.items():
            setattr(channel, name, value)
        if form.key:
            channel.key = form.key
        await channel.save()
        await _rebuild_abilities(channel)
    await publish(events, [channel.id])
    return channel


async def copy_channel(channel_id: int, suffix: str, events: EventBus | None) -> Channel:
    """A copy that keeps the stored key (the browser never sees it): balance and usage reset."""
    source = await get_channel(channel_id)
    fields = {k: v for k, v in source.public_dict().items()
              if k not in {"id", "balance", "balance_updated_time", "used_quota", "created_time", "test_time",
                           "response_time", "other_info"}}
    fields["name"] = source.name + suffix
    async with in_transaction():
        channel = await Channel.create(**fields, key=source.key, created_time=int(time.time()))
        await _rebuild_abilities(channel)
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
            await _rebuild_abilities(channel)
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
