"""Channel tags: a label several channels share, so they can be switched and edited together
(new-api's `/api/channel/tag*` and `/api/channel/batch/tag`).

A tag does not route (abilities know no tag); changing one still publishes the `channel` event of
every channel it touched, so each process reloads what it holds of them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from tortoise.transactions import in_transaction

from api.channels import admin as channels
from api.channels.form import check_tag, parse_form
from api.errors import ApiError
from api.services.events import EventBus
from api.services.params import body_ids
from models import Channel, keyring
from models.enums import ChannelStatus

# PUT /api/channel/tag: the fields it may change on every channel of the tag
EDITABLE = ("priority", "weight", "models", "groups", "model_mapping")


def tag_of(body: Mapping[str, Any], name: str = "tag") -> str:
    """The tag a request names (required, at most the column's length)."""
    tag = body.get(name)
    if not isinstance(tag, str) or not tag.strip():
        raise ApiError("channel_tag_required")
    check_tag(tag.strip())
    return tag.strip()


async def _ids(tag: str, statuses: Sequence[ChannelStatus]) -> list[int]:
    return cast(list[int], await Channel.filter(tag=tag, status__in=[int(s) for s in statuses])
                .order_by("id").values_list("id", flat=True))


async def disable_tag(tag: str, events: EventBus | None) -> int:
    """Every channel of the tag disabled by hand (status 2, like new-api), those disabled
    automatically included (so no automatic re-enable brings one back). The count changed."""
    changed = 0
    for channel_id in await _ids(tag, (ChannelStatus.ENABLED, ChannelStatus.AUTO_DISABLED)):
        changed += await channels.set_status(channel_id, ChannelStatus.MANUALLY_DISABLED,
                                             only_from=(ChannelStatus.ENABLED, ChannelStatus.AUTO_DISABLED),
                                             events=events)
    return changed


async def enable_tag(tag: str, events: EventBus | None) -> int:
    """Every disabled channel of the tag enabled, whether disabled by hand or automatically (like
    new-api), except a multi-key channel none of whose keys is enabled: it would be picked with no key
    to use, so it stays as it is until a key is enabled (the channel then follows its keys). The
    count enabled."""
    changed = 0
    disabled = (ChannelStatus.MANUALLY_DISABLED, ChannelStatus.AUTO_DISABLED)
    for channel_id in await _ids(tag, disabled):
        row = await Channel.filter(id=channel_id).only("id", "key", "channel_info").first()
        if row is None:
            continue
        ring = keyring.load(row.key, row.channel_info)
        if ring.multi and not ring.enabled():
            continue
        changed += await channels.set_status(channel_id, ChannelStatus.ENABLED, only_from=disabled, events=events)
    return changed


def _edit_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of PUT /api/channel/tag, checked like the channel form. An empty models, groups or
    model_mapping leaves the channels' own (new-api's rule: the tag form sends every field)."""
    given: dict[str, Any] = {}
    for name in EDITABLE:
        value = body.get(name)
        if value is None or (isinstance(value, str | list) and not value):
            continue
        given["group" if name == "groups" and isinstance(value, str) else name] = value
    return parse_form(given, creating=False).fields


async def edit_tag(body: Mapping[str, Any], events: EventBus | None) -> int:
    """Priority, weight, models, groups and model mapping of every channel of the tag, and `new_tag`
    renames the tag ("" removes it). Abilities are rebuilt (they carry models, groups, priority and
    weight). The count of channels changed; nothing changes when a field is refused."""
    tag = tag_of(body)
    fields = _edit_fields(body)
    new_tag = body.get("new_tag")
    if new_tag is not None:
        if not isinstance(new_tag, str):
            raise ApiError("invalid_param", name="new_tag")
        check_tag(new_tag.strip())
        if new_tag.strip() != tag:
            fields["tag"] = new_tag.strip()
    if not fields:
        return 0
    async with in_transaction():
        rows = await Channel.filter(tag=tag).order_by("id").select_for_update()
        for channel in rows:
            for name, value in fields.items():
                setattr(channel, name, value)
            await channel.save(update_fields=list(fields))
            if fields.keys() - {"tag", "model_mapping"}:
                await channels.rebuild_abilities(channel)
    await channels.publish(events, [c.id for c in rows])
    return len(rows)


async def set_tags(ids: Any, tag: Any, events: EventBus | None) -> int:
    """POST /api/channel/batch/tag: the tag of the channels `ids` (null or "" removes it). The count
    of channels found."""
    if not isinstance(ids, list) or not ids:
        raise ApiError("channel_tag_ids_required")
    ids = body_ids(ids)
    if tag is not None and not isinstance(tag, str):
        raise ApiError("invalid_param", name="tag")
    value = (tag or "").strip()
    check_tag(value)
    async with in_transaction():
        found = cast(list[int], await Channel.filter(id__in=ids).values_list("id", flat=True))
        await Channel.filter(id__in=found).update(tag=value)
    await channels.publish(events, sorted(found))
    return len(found)
