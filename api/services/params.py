"""Parsing of request fields shared by the console, the relay and their services: one place for what
counts as an integer (in a path, a query, a JSON body)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.errors import ApiError

MAX_INT = 2 ** 63 - 1  # the widest integer column


def is_integer_text(text: str) -> bool:
    """ASCII digits (one leading minus allowed), short enough to be a 64-bit integer: what int()
    may be given without a ValueError (Unicode digits like "²") or the 4300-digit limit."""
    digits = text[1:] if text.startswith("-") else text
    return 0 < len(digits) <= 19 and digits.isascii() and digits.isdigit()


def is_digits_text(text: str) -> bool:
    """is_integer_text without a sign: a count or a size written in ASCII digits."""
    return is_integer_text(text) and text.isdigit()


def id_value(text: str) -> int | None:
    """A row id from a path or query string: a positive integer that fits an id column, else None."""
    if not is_integer_text(text) or text.startswith("-"):
        return None
    number = int(text)
    return number if 0 < number <= MAX_ID else None


MAX_ID = 2 ** 31 - 1  # id columns are 32-bit on PostgreSQL and MySQL
QUOTA_BOUND = 2 ** 62  # a quota is below this in size: a balance plus or minus one still fits a BIGINT


def json_int(value: object) -> int | None:
    """The integer a JSON value stands for: an int (never a boolean), a float with no fraction, or
    integer text (is_integer_text once surrounding whitespace is stripped); None for anything else.
    Unbounded: each caller says how large its integer may be."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and is_integer_text(value.strip()):
        return int(value.strip())
    return None


def int_value(value: object, name: str) -> int:
    """An integer from JSON (json_int) that fits a BIGINT; ApiError("invalid_param") otherwise."""
    number = json_int(value)
    if number is None or not -MAX_INT <= number <= MAX_INT:
        raise ApiError("invalid_param", name=name)
    return number


def quota_value(value: object) -> int:
    """A quota, or an amount of quota, from JSON (json_int), negative or not, smaller in size than
    QUOTA_BOUND; ApiError("quota_invalid") otherwise. (A user's quota set by an admin, invite
    earnings moved to the balance.)"""
    number = json_int(value)
    if number is None or abs(number) >= QUOTA_BOUND:
        raise ApiError("quota_invalid")
    return number


def positive_int(value: object, name: str, default: int) -> int:
    """An optional count from 1 in a JSON body (a page, a page size): `default` when absent, null or
    0; a JSON integer above 0 as given; ApiError("invalid_param") for anything else (a boolean, a
    float, text, a negative number)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ApiError("invalid_param", name=name)
    return value or default


def row_id(value: object) -> int | None:
    """A row id in a JSON body: a JSON integer (not a boolean, not text) from 1 to MAX_ID, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        return None
    return value


def body_id(value: object, name: str = "id") -> int:
    """A row id in a JSON body (row_id); ApiError("invalid_param") otherwise, so an id no row can
    have never reaches the database."""
    number = row_id(value)
    if number is None:
        raise ApiError("invalid_param", name=name)
    return number


def body_ids(values: list[object], name: str = "ids") -> list[int]:
    """A JSON list of row ids (body_id each); ApiError("invalid_param") naming the list otherwise."""
    ids = [row_id(value) for value in values]
    if any(number is None for number in ids):
        raise ApiError("invalid_param", name=name)
    return [number for number in ids if number is not None]


def loose_int(value: Any, name: str) -> int:
    """An integer from a JSON number, numeric text ("5", "5.0", "1e3") or a boolean (1/0): the channel
    form's numbers, as new-api's console sends them; ApiError("invalid_param") for anything not integral."""
    if isinstance(value, bool):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ApiError("invalid_param", name=name) from exc
    if number != number or not number.is_integer():
        raise ApiError("invalid_param", name=name)
    return int(number)


def bool_value(value: object, name: str) -> bool:
    """A boolean from JSON (true/false or 0/1); ApiError("invalid_param") otherwise."""
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise ApiError("invalid_param", name=name)


def path_id(request: Any) -> int:
    """The `{id}` of a console route; an id no row can have is not found (never a database error)."""
    found = id_value(request.match_info["id"])
    if found is None:
        raise ApiError("not_found")
    return found


def query_int(query: Mapping[str, str], name: str, default: int) -> int:
    """An integer query parameter (`default` when absent or empty); ApiError("invalid_param") otherwise."""
    raw = query.get(name, "").strip()
    if raw == "":
        return default
    if not is_integer_text(raw) or not -MAX_INT <= int(raw) <= MAX_INT:
        raise ApiError("invalid_param", name=name)
    return int(raw)
