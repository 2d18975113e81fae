"""Log and dashboard queries on a generated million-row PostgreSQL table.

    .venv/bin/python -m bench.log_queries [--rows 1000000] [--pg postgres://postgres@127.0.0.1:5432]

Creates a scratch database `gw_bench_<pid>` (dropped at the end), fills `log` with N rows spread over
30 days, 1000 users (one heavy user owns a fifth of the rows), 8 models, 40 channels and 7 token names,
then times each console query exactly as api.services.logs builds it (median of 5 runs, warm cache)
and prints the plan's access path, so an index regression shows as "Seq Scan".
This is a benchmark, not a test: absolute times depend on the machine; the plans should not.

One run (2 shared cores, PostgreSQL 1M rows, medians in ms):
    every first page (any filter, own or admin)   0.7-4.5   index scans, never a Seq Scan
    count of a small result (a user, a channel)   0.5-3.6   index-only scans
    count of 140k-1M matching rows                50-160    exact totals cost what they count
    stat of a light user / of 200k+ rows          2-4 / ~105
    delete the oldest day (33k rows, 5k batches)  ~450
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import time

from tortoise import Tortoise

from api.services import logs
from api.services.logs import LogFilter
from models import Log
from models.db import close_database, init_database

MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini", "claude-3-5-sonnet-20241022", "gemini-2.0-flash",
          "deepseek-chat", "qwen-plus"]

FILL = """
INSERT INTO log (user_id, created_at, type, content, username, token_name, token_id, model_name, quota,
                 prompt_tokens, completion_tokens, use_time, is_stream, channel_id, "group", other)
SELECT u, {now} - (g::bigint * 2592000 / {rows}), CASE WHEN g % 50 = 0 THEN 1 ELSE 2 END, '',
       'user' || u, 'token' || (g % 7), g % 5000, (ARRAY{models})[1 + g % 8], g % 900, g % 500, g % 700, g % 30,
       g % 2 = 0, 1 + g % 40, 'default', '{{"model_ratio":1,"admin_info":{{"use_channel":[1]}}}}'
FROM (SELECT g, CASE WHEN g % 5 = 0 THEN 1 ELSE 2 + g % 999 END AS u FROM generate_series(1, {rows}) g) s
"""


def psql(admin_url: str, sql: str) -> None:
    subprocess.run(["psql", admin_url + "/postgres", "-qc", sql], check=True, capture_output=True)


async def timed(run, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def access_path(sql: str) -> str:
    conn = Tortoise.get_connection("default")
    _, rows = await conn.execute_query("EXPLAIN " + sql)
    nodes = [r["QUERY PLAN"].strip().lstrip("-> ").split("  ")[0] for r in rows]
    scans = [n.replace(" on log", "") for n in nodes if "Scan" in n]
    return "; ".join(scans[:2]) or nodes[0]


async def main(rows: int, admin_url: str) -> None:
    database = f"gw_bench_{os.getpid()}"
    psql(admin_url, f"DROP DATABASE IF EXISTS {database}")
    psql(admin_url, f"CREATE DATABASE {database}")
    try:
        await init_database(f"{admin_url}/{database}", generate_schemas=True)
        conn = Tortoise.get_connection("default")
        now = int(time.time())
        start = time.perf_counter()
        await conn.execute_script(FILL.format(now=now, rows=rows, models=MODELS))
        await conn.execute_script("VACUUM ANALYZE log")  # what autovacuum does soon after a bulk load
        print(f"filled {rows:,} rows in {time.perf_counter() - start:.1f}s\n")

        heavy = LogFilter(user_id=1)
        light = LogFilter(user_id=500)
        cases = {
            "admin page 1, no filter": LogFilter(),
            "admin page 1, username (light user)": LogFilter(username="user500"),
            "admin page 1, model + last day": LogFilter(model_name="gpt-4o", start=now - 86400),
            "admin page 1, channel": LogFilter(channel=7),
            "admin page 1, token name + type": LogFilter(token_name="token3", log_type=2),
            "own page 1, heavy user (200k rows)": heavy,
            "own page 1, light user": light,
            "own page 1, light user, model": LogFilter(user_id=500, model_name="gpt-4o"),
        }
        print(f"{'query':44} {'page ms':>8} {'count ms':>9}  access paths: page | count")
        for name, flt in cases.items():
            query = flt.apply(Log.all())
            page_sql = query.order_by("-created_at", "-id").limit(10).sql(params_inline=True)
            count_sql = query.count().sql(params_inline=True)
            page_ms = await timed(lambda q=query: q.order_by("-created_at", "-id").limit(10))
            count_ms = await timed(lambda q=query: q.count())
            paths = f"{await access_path(page_sql)} | {await access_path(count_sql)}"
            print(f"{name:44} {page_ms:8.1f} {count_ms:9.1f}  {paths}")

        print(f"\n{'statistics':44} {'ms':>8}")
        for name, flt in {"stat, everyone": LogFilter(), "stat, heavy user": heavy, "stat, light user": light,
                          "stat, light user, last day": LogFilter(user_id=500, start=now - 86400)}.items():
            print(f"{name:44} {await timed(lambda f=flt: logs.stat(f)):8.1f}")

        start = time.perf_counter()
        deleted = await logs.delete_before(now - 29 * 86400)
        print(f"\ndelete_before (oldest day): {deleted:,} rows in {(time.perf_counter() - start) * 1000:.0f} ms")
    finally:
        await close_database()
        psql(admin_url, f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pg", default=os.environ.get("TEST_PG_URL", "postgres://postgres@127.0.0.1:5432"))
    args = parser.parse_args()
    asyncio.run(main(args.rows, args.pg))
