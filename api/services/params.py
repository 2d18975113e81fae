"""Parsing of request fields shared by the console services: one place for what counts as an integer."""
from __future__ import annotations

from api.errors import ApiError


def int_value(value: object, name: str) -> int:
    """An integer from JSON (int, integral float, or digit string); ApiError("invalid_param") otherwise."""
    if isinstance(value, bool):
        raise ApiError("invalid_param", name=name)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ApiError("invalid_param", name=name)


def bool_value(value: object, name: str) -> bool:
    """A boolean from JSON (true/false or 0/1); ApiError("invalid_param") otherwise."""
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise ApiError("invalid_param", name=name)
