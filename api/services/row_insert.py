"""Rows inserted from plain dicts, many at once, without building model instances (the settlement's
Settlement and Log rows: hundreds per batch, where bulk_create's per-instance cost shows), and what
a batch writer does with a row the database will not take.

Free text is made to fit as it is inserted (api.services.columns): a CharField that is not unique
is cut to its column and loses its NUL characters, a TextField loses its NUL characters (PostgreSQL
refuses them). An identifier (a unique CharField) is validated instead: one too long is refused.

One bad row never holds up the others: `insert_each` writes a batch at once, and when the batch
fails on a row's value (`row_refused`: the value, not the database being away) writes its rows
one at a time and hands back those refused on their own, for the caller to set aside
(api.services.set_aside). A database that is away fails the batch as before: nothing is set aside,
the caller retries.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from tortoise.exceptions import IntegrityError, ValidationError
from tortoise.fields import CharField, TextField
from tortoise.models import Model

from api.services.columns import cut
from models.db import database_refused_value, database_unreachable

Row = TypeVar("Row")
Prepare = Callable[[Any], Any] | None
_INSERTS: dict[tuple[type, str, type], tuple[str, tuple[str, ...], tuple[Prepare, ...]]] = {}


def _prepare(model: type[Model], column: str) -> Prepare:
    """How a column's value is made ready for the statement (None: passed as it is)."""
    field = model._meta.fields_map[column]
    if isinstance(field, CharField) and not field.unique:
        return lambda value: cut(model, column, value) if isinstance(value, str) else field.to_db_value(value, model)
    if isinstance(field, TextField):
        return lambda value: value.replace("\x00", "") if isinstance(value, str) and "\x00" in value else value
    if type(field).__name__ in _NATIVE_FIELDS:
        return None
    return lambda value: field.to_db_value(value, model)


def _insert_plan(conn: Any, model: type[Model]) -> tuple[str, tuple[str, ...], tuple[Prepare, ...]]:
    """The model's INSERT statement (Tortoise's own, for this connection's dialect), its columns
    in order, and for each column how its value is prepared (None: as it is)."""
    plan_key = (conn.executor_class, conn.connection_name, model)  # the executor class fixes the dialect
    plan = _INSERTS.get(plan_key)
    if plan is None:
        executor = conn.executor_class(model=model, db=conn)
        columns = tuple(executor.regular_columns)
        plan = _INSERTS[plan_key] = (executor.insert_query, columns, tuple(_prepare(model, c) for c in columns))
    return plan


# Fields whose Python value (int) every backend stores as it is and Tortoise does not validate:
# passed through; the others (CharField length, BooleanField) are prepared (_prepare).
_NATIVE_FIELDS = frozenset({"IntField", "BigIntField", "SmallIntField"})


async def insert_rows(conn: Any, model: type[Model], rows: list[dict[str, Any]]) -> None:
    """bulk_create without building model instances: one parameterised INSERT run for every row
    (execute_many), values taken from dicts; a column missing from a row gets the field's default."""
    if not rows:
        return
    sql, columns, prepares = _insert_plan(conn, model)
    fields_map = model._meta.fields_map
    values: list[list[Any]] = []
    for row in rows:
        line = []
        for column, prepare in zip(columns, prepares, strict=True):
            value = row[column] if column in row else _default(fields_map[column].default)
            line.append(value if prepare is None else prepare(value))
        values.append(line)
    await conn.execute_many(sql, values)


def _default(value: Any) -> Any:
    return value() if callable(value) else value


# Refusals of a value as it is converted or stored: Tortoise's validation (an identifier too long),
# a constraint, a number beyond 64 bits, text the driver cannot encode. Not any Python error: a
# mistake in the writer's code must not set every row aside.
_VALUE_ERRORS = (ValidationError, IntegrityError, OverflowError, UnicodeError)


def row_refused(exc: BaseException) -> bool:
    """True when `exc` says a row's values were refused (out of range, too long, not text, a
    constraint) rather than that the database is away or gave up in
    time (database_unreachable): writing that row again would fail again, writing it alone shows
    whether it is the row's fault."""
    if database_unreachable(exc):
        return False
    if database_refused_value(exc):
        return True
    seen: BaseException | None = exc
    for _ in range(5):  # the driver's error under the ORM's
        if seen is None:
            return False
        if isinstance(seen, _VALUE_ERRORS) or str(getattr(seen, "sqlstate", "") or "")[:2] in {"22", "23"}:
            return True  # PostgreSQL's classes 22 (data exception) and 23 (integrity constraint)
        seen = seen.__cause__ or seen.__context__
    return False


async def insert_each(write: Callable[[Sequence[Row]], Awaitable[int]],
                      rows: Sequence[Row]) -> tuple[int, list[tuple[Row, BaseException]]]:
    """`write(rows)` once (it returns how many it wrote); when that fails on a row's value
    (row_refused), `write([row])` for each row → (rows written, [(row, why)] for each row refused
    on its own). Any other failure is raised, the rows written one by one so far staying written
    (the writers are idempotent)."""
    try:
        return await write(rows), []
    except Exception as exc:
        if not row_refused(exc):
            raise
        if len(rows) == 1:
            return 0, [(rows[0], exc)]
    written = 0
    refused: list[tuple[Row, BaseException]] = []
    for row in rows:
        try:
            written += await write([row])
        except Exception as exc:
            if not row_refused(exc):
                raise
            refused.append((row, exc))
    return written, refused
