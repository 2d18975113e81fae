"""What of an upstream's task answer a user may see: the channel's secrets masked, the gateway's
signed callback removed.

- `masked`: every string of an answer (a refusal, a task's failReason, description, properties, a
  Suno clip list, an image seed) through api.relay.errors.mask_secrets with the channel's key and
  base URL, before it is stored or answered; NUL characters dropped (no column can hold one).
- `without_callbacks`: a task's properties without `notifyHook` nor any value carrying a signed
  callback (`sig=`): midjourney-proxy keeps the hook it was given in the task's properties, and a
  user holding it could sign callbacks for the task.
"""
from __future__ import annotations

from typing import Any

import orjson

from api.relay.errors import mask_secrets

CALLBACK_KEYS = frozenset({"notifyhook", "notify_hook", "callback", "callbackurl", "callback_url", "webhook"})
_MARKS = ("sig=", "notify", "callback", "webhook")
_MAX_DEPTH = 32


def masked(value: Any, key: str, base_url: str, _depth: int = 0) -> Any:
    """`value` (JSON) with each string, and each object key, masked; deeper than _MAX_DEPTH: dropped."""
    if isinstance(value, str):
        return mask_secrets(value.replace("\x00", ""), key, base_url)
    if _depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {mask_secrets(str(k), key, base_url): masked(v, key, base_url, _depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, key, base_url, _depth + 1) for v in value]
    return value


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


def safe_properties(value: Any, key: str, base_url: str) -> Any:
    """An upstream's `properties` as the gateway keeps them: without callbacks, secrets masked."""
    return masked(without_callbacks(value), key, base_url)
