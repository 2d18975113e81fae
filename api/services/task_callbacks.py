"""A task's stored `properties` as a user may see them: without the gateway's signed callback.

midjourney-proxy keeps the hook it was given in the task's properties; a user holding it could
sign callbacks for the task. Used when tasks are stored (api.relay.tasks) and when rows stored
before callbacks were stripped are shown (api.services.tasks).
"""
from __future__ import annotations

from typing import Any

import orjson

CALLBACK_KEYS = frozenset({"notifyhook", "notify_hook", "callback", "callbackurl", "callback_url", "webhook"})
_MARKS = ("sig=", "notify", "callback", "webhook")
_MAX_DEPTH = 32


def _signed(value: Any) -> bool:
    return isinstance(value, str) and "sig=" in value


def without_callbacks(value: Any, _depth: int = 0) -> Any:
    """`value` (JSON) without callback hooks: keys named like one, and strings carrying `sig=`."""
    if _depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {k: without_callbacks(v, _depth + 1) for k, v in value.items()
                if str(k).lower() not in CALLBACK_KEYS and not _signed(v)}
    if isinstance(value, list):
        return [without_callbacks(v, _depth + 1) for v in value if not _signed(v)]
    return "" if _signed(value) else value


def public_properties(text: str) -> str:
    """A stored `properties` JSON text as a user may see it (see without_callbacks)."""
    lowered = text.lower()
    if not any(mark in lowered for mark in _MARKS):
        return text
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return "" if "sig=" in text else text
    return orjson.dumps(without_callbacks(value)).decode()
