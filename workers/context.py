"""Process-wide resources of a worker process, set by ResourcesMiddleware on the loop thread."""
from __future__ import annotations

from dataclasses import dataclass

import aiohttp

from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.store import Store
from models.settings import Settings


@dataclass
class WorkerContext:
    settings: Settings
    store: Store
    events: EventBus
    options: OptionsService
    http: aiohttp.ClientSession


_context: WorkerContext | None = None


def set_context(context: WorkerContext | None) -> None:
    global _context
    _context = context


def ctx() -> WorkerContext:
    if _context is None:
        raise RuntimeError("worker resources are not initialised (ResourcesMiddleware missing?)")
    return _context
