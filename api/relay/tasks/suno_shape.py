"""Suno's routes as the clients know them (a suno-api proxy's API, relayed by api/relay/tasks/routes.py):
the actions and their priced models, and a task row answered as the proxy answers a fetch. The
protocol itself is api/upstream/providers/suno.py."""
from __future__ import annotations

from typing import Any

import orjson

ACTIONS = {"music": "MUSIC", "lyrics": "LYRICS"}
DEFAULT_MV = "chirp-v3-0"


def model_of(action: str) -> str:
    return f"suno_{action.lower()}"


def clip_ids(row: Any) -> set[str]:
    """The ids of the clips a finished task made (its data: a clip or a list of clips, each with `id`)."""
    try:
        data = orjson.loads(row.data) if row.data else None
    except orjson.JSONDecodeError:
        return set()
    clips = data if isinstance(data, list) else [data]
    return {c["id"] for c in clips if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"]}


def task_answer(row: Any) -> dict[str, Any]:
    """A task row as the gateway answers /suno/fetch (the upstream's data parsed back)."""
    try:
        data = orjson.loads(row.data) if row.data else None
    except orjson.JSONDecodeError:
        data = None
    return {"task_id": row.task_id, "action": row.action, "status": row.status, "fail_reason": row.fail_reason,
            "submit_time": row.submit_time, "start_time": row.start_time, "finish_time": row.finish_time,
            "progress": row.progress, "data": data}
