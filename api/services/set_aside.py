"""Rows a batch writer could not write, kept where an operator finds them: one Redis list per
writer (`set-aside:<writer>`: errlog, settlement, record_log), newest first, at most MAX_KEPT
entries each (a client that keeps sending what cannot be written fills no more than that), and
one log line per row naming it (ERROR: the row is not in the database).

Each entry is JSON: {"at": unix seconds, "writer", "id": the row's request id, "error": why, "row":
the row as it was queued}. A settlement record set aside can be applied again once its cause is
fixed: put its `row` back into its user's pending hash (`{u<id>}:pend`, field = its `id`) and the
next billing.sweep applies it (once: settlements are idempotent). Read them with
`LRANGE <REDIS_PREFIX>set-aside:<writer> 0 -1`.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import orjson

from api.services import redis_keys
from api.services.store import Store

log = logging.getLogger(__name__)
MAX_KEPT = 1000  # entries per writer
MAX_ERROR = 500  # characters of the reason kept


async def set_aside(store: Store, writer: str, rows: Sequence[tuple[str, bytes | str, BaseException]]) -> None:
    """Keep these (row id, row as queued, why) and say so in the log."""
    if not rows:
        return
    key = redis_keys.set_aside(store, writer)
    now = int(time.time())
    entries = []
    for row_id, raw, exc in rows:
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        entries.append(orjson.dumps({"at": now, "writer": writer, "id": row_id, "error": repr(exc)[:MAX_ERROR],
                                     "row": text}))
        log.error("%s: row %s set aside in %s, not written: %s", writer, row_id or "(no id)", key,
                  repr(exc)[:MAX_ERROR])
    async with store.redis.pipeline(transaction=True) as pipe:
        pipe.lpush(key, *entries)
        pipe.ltrim(key, 0, MAX_KEPT - 1)
        await pipe.execute()


async def kept(store: Store, writer: str) -> list[dict[str, object]]:
    """The entries set aside by `writer`, newest first."""
    return [orjson.loads(raw) for raw in await store.redis.lrange(redis_keys.set_aside(store, writer), 0, -1)]
