"""What of an upstream's task answer a user may see: the channel's secrets masked, the gateway's
signed callback removed.

- `masked`: every string of an answer (a refusal, a task's failReason, description, properties, a
  Suno clip list, an image seed) through api.upstream.errors.mask_secrets with the channel's key and
  base URL, before it is stored or answered; NUL characters dropped (no column can hold one).
- `without_callbacks`: a task's properties without `notifyHook` nor any value carrying a signed
  callback (`sig=`): midjourney-proxy keeps the hook it was given in the task's properties, and a
  user holding it could sign callbacks for the task.
"""
from __future__ import annotations

from typing import Any

from api.services.task_callbacks import public_properties as public_properties
from api.services.task_callbacks import without_callbacks
from api.upstream.errors import mask_secrets

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


def safe_properties(value: Any, key: str, base_url: str) -> Any:
    """An upstream's `properties` as the gateway keeps them: without callbacks, secrets masked."""
    return masked(without_callbacks(value), key, base_url)
