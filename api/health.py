"""Liveness and readiness for load balancers and compose."""
from __future__ import annotations

import asyncio
import time

from aiohttp import web
from tortoise import Tortoise

from api import keys
from api.response import json_body
from api.services import redis_keys

# A heartbeat older than this means the process is gone (the scheduler beats every 10 s).
HEARTBEAT_MAX_AGE = 60.0


async def healthz(request: web.Request) -> web.Response:
    return web.Response(body=b'{"status":"ok"}', content_type="application/json")


async def _check_database() -> str:
    try:
        await asyncio.wait_for(Tortoise.get_connection("default").execute_query("SELECT 1"), 3)
        return "ok"
    except Exception as exc:
        return f"error: {type(exc).__name__}"


async def readyz(request: web.Request) -> web.Response:
    store = request.config_dict[keys.STORE]
    checks: dict[str, str] = {"database": await _check_database()}
    try:
        worker, scheduler = await asyncio.wait_for(asyncio.gather(  # two slots on a Redis Cluster
            store.redis.get(redis_keys.heartbeat(store, "worker")),
            store.redis.get(redis_keys.heartbeat(store, "scheduler"))), 3)
        checks["redis"] = "ok"
        now = time.time()
        for name, beat in (("workers", worker), ("scheduler", scheduler)):
            if beat is None:
                checks[name] = "never seen"
            else:
                age = now - float(beat)
                checks[name] = "ok" if age <= HEARTBEAT_MAX_AGE else f"last seen {age:.0f}s ago"
    except Exception as exc:
        checks["redis"] = f"error: {type(exc).__name__}"
    ready = all(v == "ok" for v in checks.values())
    return web.Response(body=json_body({"ready": ready, "checks": checks}), status=200 if ready else 503,
                        content_type="application/json")


def setup_health(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
