"""The log queries of the console timed through its API, on a million generated rows.

The rows go into the gateway's own PostgreSQL database with the generator of bench.log_queries (30
days, 1000 users of which user 1 (root) owns a fifth, 8 models, 40 channels, 7 token names), then
VACUUM ANALYZE, as autovacuum would soon after. Each query is a real HTTP call with the console's
session (root for /api/log/, and root or the bench user for /api/log/self/), timed end to end:
median and max of `repeat` calls after one warm-up. When the gateway has no log routes, the same
filters are timed as Tortoise queries on models.Log instead, and the table says so.
"""
from __future__ import annotations

import statistics
import time

from bench.gateway import Console, Gateway
from models import Log

DAY = 86400


def cases(now: int, bench_user: int) -> list[tuple[str, str, str, dict]]:
    """(label, who, path, query) — the filters the console's log page sends."""
    return [
        ("all logs, page 1", "root", "/api/log/", {}),
        ("consume logs, page 1", "root", "/api/log/", {"type": 2}),
        ("a user (username), page 1", "root", "/api/log/", {"username": "user500"}),
        ("a token name + consume", "root", "/api/log/", {"token_name": "token3", "type": 2}),
        ("a model, last 24 h", "root", "/api/log/", {"model_name": "gpt-4o", "start_timestamp": now - DAY,
                                                     "end_timestamp": now}),
        ("a channel", "root", "/api/log/", {"channel": 7}),
        ("last 7 days, page 100", "root", "/api/log/", {"start_timestamp": now - 7 * DAY, "end_timestamp": now,
                                                        "p": 100}),
        ("stat: consume, all", "root", "/api/log/stat", {"type": 2}),
        ("own, heavy user (200k rows)", "root", "/api/log/self/", {}),
        ("own, heavy user, a model, 24 h", "root", "/api/log/self/", {"model_name": "gpt-4o-mini",
                                                                      "start_timestamp": now - DAY}),
        ("own, light user", "bench", "/api/log/self/", {}),
        ("own, light user, consume", "bench", "/api/log/self/", {"type": 2}),
        ("own stat, heavy user", "root", "/api/log/self/stat", {"type": 2}),
    ]


async def fill(rows: int, database_url: str) -> float:
    """The rows generated on a connection of its own, without the gateway's statement timeout (a
    million rows take longer than any one request may)."""
    import asyncpg

    from bench.log_queries import FILL, MODELS  # the generator of the log query bench

    conn = await asyncpg.connect(database_url)
    try:
        started = time.perf_counter()
        await conn.execute("SET statement_timeout = 0")
        await conn.execute(FILL.format(now=int(time.time()), rows=rows, models=MODELS))
        await conn.execute("VACUUM ANALYZE log")
        return time.perf_counter() - started
    finally:
        await conn.close()


async def _timed(run, repeat: int) -> tuple[float, float, object]:
    result = await run()  # warm-up (and the answer, for the row count)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples), result


def _orm_query(path: str, query: dict, who_id: int):
    qs = Log.all()
    if "/self" in path:
        qs = qs.filter(user_id=who_id)
    names = {"type": "type", "username": "username", "token_name": "token_name", "model_name": "model_name",
             "channel": "channel_id"}
    for key, field in names.items():
        if key in query:
            qs = qs.filter(**{field: query[key]})
    if "start_timestamp" in query:
        qs = qs.filter(created_at__gte=query["start_timestamp"])
    if "end_timestamp" in query:
        qs = qs.filter(created_at__lte=query["end_timestamp"])
    return qs


async def time_queries(gw: Gateway, rows: int, repeat: int = 5) -> tuple[list[dict], str, float]:
    """(one row per query, how they were run, seconds the fill took)."""
    fill_seconds = await fill(rows, gw.database_url)
    root = gw.root
    assert root is not None
    owner = Console(gw.base)
    await owner.login("bench", "bench-password-1")
    try:
        via_http = True
        try:
            await root.call("GET", "/api/log/", p=1, page_size=1)
        except RuntimeError:
            via_http = False
        now = int(time.time())
        out: list[dict] = []
        for label, who, path, query in cases(now, gw.user_id):
            client = root if who == "root" else owner
            if via_http:
                params = {"p": 1, "page_size": 10, **query}

                async def run(client=client, path=path, params=params):
                    return (await client.call("GET", path, **params))["data"]
            else:
                qs = _orm_query(path, query, 1 if who == "root" else gw.user_id)
                if path.endswith("stat"):
                    async def run(qs=qs):
                        return {"count": await qs.count()}
                else:
                    offset = (int(query.get("p", 1)) - 1) * 10

                    async def run(qs=qs, offset=offset):
                        rows_ = await qs.order_by("-created_at", "-id").offset(offset).limit(10)
                        return {"items": rows_, "total": await qs.count()}
            median, worst, data = await _timed(run, repeat)
            total = data.get("total") if isinstance(data, dict) else None
            out.append({"query": label, "route": path, "matched": total, "median_ms": median, "max_ms": worst})
        how = ("through the console API (HTTP, session cookie)" if via_http
               else "as Tortoise queries on models.Log (the gateway has no log routes yet)")
        return out, how, fill_seconds
    finally:
        await owner.close()
