"""Rows inserted from plain dicts, many at once, without building model instances (the settlement's
Settlement and Log rows: hundreds per batch, where bulk_create's per-instance cost shows)."""
from __future__ import annotations

from typing import Any

from tortoise.models import Model

_INSERTS: dict[tuple[type, str, type], tuple[str, tuple[str, ...], tuple[Any, ...]]] = {}


def _insert_plan(conn: Any, model: type[Model]) -> tuple[str, tuple[str, ...], tuple[Any, ...]]:
    """The model's INSERT statement (Tortoise's own, for this connection's dialect), its columns
    in order, and for each column the field's to_db_value when the value needs converting."""
    plan_key = (conn.executor_class, conn.connection_name, model)  # the executor class fixes the dialect
    plan = _INSERTS.get(plan_key)
    if plan is None:
        executor = conn.executor_class(model=model, db=conn)
        fields_map = model._meta.fields_map
        columns = tuple(executor.regular_columns)
        converters = tuple(None if type(fields_map[c]).__name__ in _NATIVE_FIELDS else fields_map[c].to_db_value
                           for c in columns)
        plan = _INSERTS[plan_key] = (executor.insert_query, columns, converters)
    return plan


# Fields whose Python value (int, text) every backend stores as it is and Tortoise does not validate:
# passed through; the others (CharField length, BooleanField) go through the field's to_db_value.
_NATIVE_FIELDS = frozenset({"IntField", "BigIntField", "SmallIntField", "TextField"})


async def insert_rows(conn: Any, model: type[Model], rows: list[dict[str, Any]]) -> None:
    """bulk_create without building model instances: one parameterised INSERT run for every row
    (execute_many), values taken from dicts; a column missing from a row gets the field's default."""
    if not rows:
        return
    sql, columns, converters = _insert_plan(conn, model)
    fields_map = model._meta.fields_map
    values: list[list[Any]] = []
    for row in rows:
        line = []
        for column, convert in zip(columns, converters, strict=True):
            value = row[column] if column in row else _default(fields_map[column].default)
            line.append(value if convert is None else convert(value, None))
        values.append(line)
    await conn.execute_many(sql, values)


def _default(value: Any) -> Any:
    return value() if callable(value) else value
