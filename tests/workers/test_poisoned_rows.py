"""A record or row the database will not take is set aside and reported; the others are written,
on SQLite and PostgreSQL (settlements and their consume logs, audit rows). A database that is away
sets nothing aside."""
from __future__ import annotations

import time

import pytest
from tortoise.exceptions import DBConnectionError

from api import keys
from api.services import redis_keys
from api.services.billing import settlement
from api.services.billing.records import SettlementRecord, TokenUsage
from api.services.billing.settlement import apply_pending
from api.services.set_aside import kept
from models import Log, QuotaData, Settlement, User
from models.enums import LogType
from tests.helpers import both_databases, make_user
from workers.actors import system


def record(rid: str, quota: int, **fields) -> SettlementRecord:
    return SettlementRecord(rid, quota, TokenUsage(10, 5), **{
        "username": "alice", "token_name": "k", "group": "default", "model": "gpt-4", "upstream_model": "gpt-4",
        "at": time.time(), **fields})


async def pend(store, user_id: int, entries: dict[str, bytes | str]) -> None:
    await store.redis.hset(redis_keys.pending(store, user_id), mapping=entries)


@both_databases
async def test_a_poisoned_settlement_is_set_aside_and_the_users_others_are_applied(client) -> None:
    app = client.server.app
    store, options = app[keys.STORE], app[keys.OPTIONS]
    user = await make_user("alice", quota=1000)
    long_model = "x" * 400
    await pend(store, user.id, {
        "r1": record("r1", 10).encode(),
        "r2": record("r2", 20, token_id=2 ** 63).encode(),  # beyond the token column
        "r3": "{not json",
        "r4": record("r4", 40, model=long_model, upstream_model=long_model).encode(),
    })
    assert await apply_pending(store, options, user.id) == 2
    assert sorted(await Settlement.all().values_list("request_id", flat=True)) == ["r1", "r4"]
    assert (await User.get(id=user.id)).quota == 1000 - 50
    logs = await Log.filter(type=LogType.CONSUME).order_by("id")
    assert [(r.request_id, r.model_name) for r in logs] == [("r1", "gpt-4"), ("r4", "x" * 255)]
    assert sorted(await QuotaData.all().values_list("model_name", flat=True)) == ["gpt-4", "x" * 255]
    aside = await kept(store, settlement.WRITER)
    assert sorted(e["id"] for e in aside) == ["r2", "r3"] and all(e["error"] for e in aside)
    assert [e["row"] for e in aside if e["id"] == "r3"] == ["{not json"]
    assert await store.redis.hlen(redis_keys.pending(store, user.id)) == 0
    # Put back once its cause is gone (here: another token id), it is applied like any record.
    await pend(store, user.id, {"r2": record("r2", 20).encode()})
    assert await apply_pending(store, options, user.id) == 1
    assert (await User.get(id=user.id)).quota == 1000 - 70


async def test_the_database_away_sets_no_settlement_aside(client, monkeypatch) -> None:
    app = client.server.app
    store, options = app[keys.STORE], app[keys.OPTIONS]
    user = await make_user("alice", quota=1000)
    await pend(store, user.id, {"r1": record("r1", 10).encode(), "r2": record("r2", 20, token_id=2 ** 63).encode()})

    async def away(*args, **kwargs):
        raise DBConnectionError("connection refused")

    monkeypatch.setattr(settlement, "_apply_records", away)
    with pytest.raises(DBConnectionError):
        await apply_pending(store, options, user.id)
    assert await store.redis.hlen(redis_keys.pending(store, user.id)) == 2
    assert await kept(store, settlement.WRITER) == []
    monkeypatch.undo()
    assert await apply_pending(store, options, user.id) == 1
    assert [e["id"] for e in await kept(store, settlement.WRITER)] == ["r2"]


@both_databases
async def test_an_audit_row_is_cut_to_its_columns_and_a_refused_one_set_aside(client) -> None:
    store = client.server.app[keys.STORE]
    await system.write_record(store, 1, int(LogType.MANAGE), "renamed\x00", username="u" * 100, request_id="audit-1")
    row = await Log.get(request_id="audit-1")
    assert (row.username, row.content) == ("u" * 64, "renamed")
    await system.write_record(store, 2 ** 63, int(LogType.MANAGE), "beyond the user column", request_id="audit-2")
    assert not await Log.filter(request_id="audit-2").exists()
    assert [e["id"] for e in await kept(store, system.WRITER)] == ["audit-2"]
