"""Recording administrative changes from a request: the one call every audited route makes.

    await audit.record(request, "channel.update", "channel", channel.id, before, after)

`before` / `after` are rows (snapshotted as api.services.audit.snapshot says) or dicts, None for
the side that does not exist (a creation, a deletion); secrets are masked by field name, an
update keeps only the fields that changed, and an update that changed nothing records nothing.
The actor is the request's user (its id, name and role at the time) from the address the gateway
computes behind TRUSTED_PROXIES. The entry goes to Redis in one round trip; the workers write it
(api.services.audit_queue). Call it once the change is made: a refused change records nothing.
"""
from __future__ import annotations

from collections.abc import Awaitable, Collection, Coroutine, Iterable
from typing import Any, TypeVar

from aiohttp import web
from tortoise.models import Model
from tortoise.queryset import QuerySet

from api import keys
from api.services import audit as entries
from api.services.audit import Entry, is_secret_name, make_entry
from api.services.configuration.option_rules import SECRET_OPTIONS
from api.services.params import MAX_ID, id_value
from api.web.net import client_ip
from models import User

M = TypeVar("M", bound=Model)
T = TypeVar("T")

async def current(model: type[M], row_id: object) -> M | None:
    """The row a request names, as it is now (None: there is none, or that is not an id): what the
    change is compared with. The action's own checks stay the action's."""
    found = ids(row_id) if not isinstance(row_id, list) else []
    return await model.filter(id=found[0]).first() if found else None


def option_is_secret(key: str) -> bool:
    """Whether an option's value is a secret: one of those GET /api/option/ never returns, or one
    whose name says so (a client secret, a token …)."""
    return key in SECRET_OPTIONS or is_secret_name(key)


def ids(value: object) -> list[int]:
    """The row ids a request names (an id, or a list of them), whatever else it holds: what the
    snapshots of a change are taken of (the action checks its input itself)."""
    found = []
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, str):
            v = id_value(v.strip())
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_ID:
            found.append(v)
    return found


async def each_row(request: web.Request, action: str, rows: QuerySet[M], change: Awaitable[T],
                   target_type: str = "") -> T:
    """Run `change` (an action on some rows of a table: an edit, a deletion, a batch) and record one
    entry per row of `rows` (taken before the change) that it changed or deleted; its result."""
    try:
        before = {row.pk: row for row in await rows}
    except BaseException:
        if isinstance(change, Coroutine):
            change.close()
        raise
    result = await change
    model = rows.model
    after = {row.pk: row for row in await model.filter(pk__in=list(before))} if before else {}
    kind = target_type or model._meta.db_table
    made = [make_entry(action, kind, pk, old, after.get(pk), **actor_of(request)) for pk, old in before.items()]
    for entry in made:
        if entry.changed:
            await queue(request, entry)
    return result


async def new_rows(request: web.Request, action: str, rows: Iterable[Model], target_type: str = "") -> None:
    """One entry per row an action created."""
    for row in rows:
        await record(request, action, target_type or row._meta.db_table, row.pk, None, row)


def actor_of(request: web.Request) -> dict[str, Any]:
    """Who acts: the request's user, if any, and the client address."""
    user = request.get(keys.USER)
    return {"actor_id": user.id if user is not None else 0, "actor_name": user.username if user is not None else "",
            "actor_role": user.role if user is not None else 0, "actor_ip": client_ip(request)}


async def record(request: web.Request, action: str, target_type: str, target_id: object, before: Any = None,
                 after: Any = None, *, target_role: int | None = None,
                 secret_fields: Collection[str] = ()) -> Entry | None:
    """Record this change (see the module); the entry, or None when there was nothing to record.
    `secret_fields`: top-level fields masked whatever their name (an option's value)."""
    entry = make_entry(action, target_type, target_id, before, after, secret_fields, target_role=target_role,
                       **actor_of(request))
    if not entry.changed:
        return None
    await queue(request, entry)
    return entry


async def queue(request: web.Request, entry: Entry) -> None:
    """An entry made by hand (several targets of one action, a login burst) to the workers."""
    app = request.config_dict
    await entries.push(app[keys.STORE], app[keys.JOBS], entry)


async def login_burst(request: web.Request, user_id: int, identifier: str, failures: int, wait: int,
                      known: bool) -> None:
    """A burst of failed logins on an account (api.web.login_guard calls it once per burst): the
    target is the user (or, for an identifier naming nobody, that identifier), the actor nobody,
    from the guesser's address."""
    user = await User.filter(id=user_id).first() if user_id else None
    role = user.role if user is not None else None
    target = ("user", str(user_id)) if role is not None else ("account", identifier.strip())
    entry = make_entry("login.burst", *target, None, {"failures": failures, "wait_seconds": wait,
                                                      "known_browser": known},
                       target_role=role, **actor_of(request))
    await queue(request, entry)
