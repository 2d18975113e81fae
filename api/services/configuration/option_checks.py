"""The checks of single option values that take more than a type or a range (api/services/configuration/
option_rules.py names which option each one checks): each raises the ApiError the console shows."""
from __future__ import annotations

from urllib.parse import urlsplit

import orjson

from api.errors import ApiError
from api.services.budgets.limits import parse_group_limits
from api.services.budgets.windows import valid_zone
from api.services.configuration.capability_lookup import validate_overrides


def parse_json(key: str, value: str) -> object:
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise ApiError("option_invalid_json", key=key) from exc


def check_ratio_map(key: str, value: str) -> None:
    data = parse_json(key, value)
    if not isinstance(data, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in data.values()
    ):
        raise ApiError("option_ratio_map", key=key)


def check_usable_groups(key: str, value: str) -> None:
    data = parse_json(key, value)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ApiError("option_invalid_json", key=key)


def check_chats(key: str, value: str) -> None:
    data = parse_json(key, value)
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and all(isinstance(v, str) for v in item.values()) for item in data
    ):
        raise ApiError("option_chats")


def check_currency(key: str, value: str) -> None:
    if len(value) != 3 or not value.isascii() or not value.isalpha() or value != value.lower():
        raise ApiError("option_currency", key=key)


def check_export_time(key: str, value: str) -> None:
    if value not in {"hour", "day", "week"}:
        raise ApiError("option_data_export_time")


def parse_status_ranges(spec: str) -> tuple[tuple[int, int], ...]:
    """`"401-407,429,500-503"` → ((401, 407), (429, 429), (500, 503)). Raises ValueError if malformed."""
    ranges: list[tuple[int, int]] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        low, sep, high = part.partition("-")
        start, end = int(low), int(high) if sep else int(low)
        if not (100 <= start <= end <= 599):
            raise ValueError(f"invalid status code range {part!r}")
        ranges.append((start, end))
    return tuple(ranges)


def check_status_ranges(key: str, value: str) -> None:
    try:
        parse_status_ranges(value)
    except ValueError as exc:
        raise ApiError("option_status_ranges", key=key) from exc


def check_model_capabilities(key: str, value: str) -> None:
    """What the capability table refuses, said (an empty value is no change to the table)."""
    if not value:
        return
    problem = validate_overrides(parse_json(key, value))
    if problem is not None:
        raise ApiError("option_model_capabilities", problem=problem)


def check_origins(key: str, value: str) -> None:
    """Comma-separated browser origins (`https://app.example.com`, scheme and host, a port if any)."""
    for origin in (o.strip() for o in value.split(",")):
        if not origin:
            continue
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
                or parts.query or parts.fragment:
            raise ApiError("option_origins", key=key, origin=origin[:80])


def check_group_limits(key: str, value: str) -> None:
    """GroupLimits: `{"<group>": [limits…]}`; the message names the group, the entry and the field."""
    parse_group_limits(value)


def check_time_zone(key: str, value: str) -> None:
    if not value or not valid_zone(value):
        raise ApiError("budget_timezone_invalid", value=value[:64])
