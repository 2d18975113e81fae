"""What a text column can hold, read from the models themselves (a CharField's max_length), and the
two rules built on it: a row's free text is cut to its columns before it is written, and a
console filter longer than its column matches no row.

Cutting keeps a log row writable whatever the client sent (a model name of any length, a NUL
character, which PostgreSQL refuses in text); it is only for free text: an identifier (a unique
column) is never cut, since two values that differ past the cut would become one.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tortoise.expressions import Q
from tortoise.models import Model

NOTHING = Q(id__in=[])  # a condition no row meets (Tortoise writes it `1=0`)


def max_length(model: type[Model], field: str) -> int | None:
    """The most characters the column of `field` holds (None: unbounded text)."""
    return getattr(model._meta.fields_map[field], "max_length", None)


def cut(model: type[Model], field: str, value: str) -> str:
    """`value` without NUL characters and cut to the column of `field`."""
    value = value.replace("\x00", "") if "\x00" in value else value
    limit = max_length(model, field)
    return value if limit is None else value[:limit]


def fitted(model: type[Model], row: Mapping[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """The row with the text of each of these fields made to fit its column (cut)."""
    fitted_row = dict(row)
    for field in fields:
        value = fitted_row.get(field)
        if isinstance(value, str):
            fitted_row[field] = cut(model, field, value)
    return fitted_row


def text_filter(model: type[Model], field: str, value: str, lookup: str = "") -> Q:
    """The condition `field <lookup> value` of a list filter (exact when no lookup is named); one
    that no row meets when `value` is longer than the column: no stored value can equal it or
    contain it, and the query is never asked to compare a value its column cannot hold."""
    limit = max_length(model, field)
    if limit is not None and len(value) > limit:
        return NOTHING
    return Q(**{f"{field}__{lookup}" if lookup else field: value})
