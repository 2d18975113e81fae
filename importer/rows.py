"""The source's rows as this gateway's: value conversions, and the converters of users, keys, logs and
the tables copied as they are (channels: importer.channels)."""
from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from typing import Any

import orjson
from tortoise import Model

from models import Log, Token, User


def epoch(value: Any) -> int | None:
    """A gorm DeletedAt / created_at (datetime, text or number) → unix seconds."""
    if value in (None, "", 0):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, dt.datetime):
        return int(value.replace(tzinfo=value.tzinfo or dt.UTC).timestamp())
    try:
        return int(dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def text(value: Any) -> str:
    return "" if value is None else str(value)


def integer(value: Any) -> int:
    if value in (None, ""):
        return 0
    return int(value)


def pick(row: dict[str, Any], model: type[Model], renames: dict[str, str] | None = None) -> dict[str, Any]:
    """The row's columns that `model` has (after renames), None left out (the model's default)."""
    names = set(model._meta.fields_map) - {"lease_until", "lease_owner", "billing"}
    out: dict[str, Any] = {}
    for column, value in row.items():
        target = (renames or {}).get(column, column)
        if target in names and value is not None:
            out[target] = value
    return out


# -- per table ---------------------------------------------------------------------------------------
def convert_user(row: dict[str, Any]) -> dict[str, Any]:
    out = pick(row, User, {"linux_do_id": "linuxdo_id", "aff_history": "aff_history_quota", "created_at": "_"})
    token = row.get("access_token")
    out["access_token"] = hashlib.sha256(token.encode()).hexdigest() if token else None
    out["aff_code"] = row.get("aff_code") or None
    out["deleted_at"] = epoch(row.get("deleted_at"))
    if row.get("created_at"):
        out["created_time"] = epoch(row["created_at"]) or 0
    for name in ("username", "display_name", "email", "group", "github_id", "wechat_id", "telegram_id", "linuxdo_id"):
        if name in out:
            out[name] = text(out[name])
    return out


def convert_token(row: dict[str, Any], one_api: bool) -> dict[str, Any] | str:
    if row.get("deleted_at"):
        return "deleted in the source"
    out = pick(row, Token, {"models": "_", "subnet": "_"})
    if one_api:
        models = text(row.get("models")).strip()
        out["model_limits_enabled"] = bool(models)
        out["model_limits"] = models
        out["allow_ips"] = "\n".join(p.strip() for p in text(row.get("subnet")).split(",") if p.strip())
    out["unlimited_quota"] = bool(out.get("unlimited_quota"))
    if "model_limits_enabled" in out:
        out["model_limits_enabled"] = bool(out["model_limits_enabled"])
    return out


def convert_plain(model: type[Model]) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    def convert(row: dict[str, Any]) -> dict[str, Any] | str:
        if row.get("deleted_at"):
            return "deleted in the source"
        return pick(row, model)

    return convert


def convert_log(row: dict[str, Any]) -> dict[str, Any]:
    out = pick(row, Log, {"channel": "channel_id", "elapsed_time": "_", "request_id": "_"})
    if "use_time" not in row and row.get("elapsed_time"):
        out["use_time"] = int(row["elapsed_time"]) // 1000
    out["is_stream"] = bool(out.get("is_stream"))
    for name in ("content", "username", "token_name", "model_name", "group", "other"):
        if name in out:
            out[name] = text(out[name])
    return out


def json_dict(value: Any) -> dict[str, Any]:
    try:
        data = orjson.loads(value or "{}")
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}
