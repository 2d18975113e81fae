"""The channel form: its fields validated into model fields, and the checks and defaults of its type.

On update only the fields present are changed. The keys pasted in the form are read by
api.channels.pasted_keys.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from api.errors import ApiError
from api.services.params import loose_int
from api.upstream import catalogue
from models import Channel, keyring
from models.enums import ChannelStatus

MIN_PRIORITY = -999
DEFAULT_GROUP = "default"
TAG_MAX = 64  # the column's length
KEY_LIST_MODES = ("append", "replace")  # new-api's `key_mode` on an update of a multi-key channel


def valid_types() -> set[int]:
    return set(catalogue.CATALOGUE)


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


def int_field(body: Mapping[str, Any], name: str) -> int | None:
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
        number = int_field(body, name)
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
