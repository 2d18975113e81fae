"""The worker process's resources (api.resources), set by ResourcesMiddleware on the loop thread."""
from __future__ import annotations

from api.resources import Resources

_resources: Resources | None = None


def set_context(resources: Resources | None) -> None:
    global _resources
    _resources = resources


def ctx() -> Resources:
    if _resources is None:
        raise RuntimeError("worker resources are not initialised (ResourcesMiddleware missing?)")
    return _resources
