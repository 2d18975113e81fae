"""Enqueue worker jobs from the event loop without blocking it (dramatiq's send is synchronous)."""
from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping

import dramatiq

from api import keys
from workers.broker import send


async def enqueue(app: Mapping, actor_name: str, *args: object, delay_ms: int | None = None,
                  **kwargs: object) -> dramatiq.Message:
    loop = asyncio.get_running_loop()
    call = functools.partial(send, actor_name, *args, delay_ms=delay_ms, **kwargs)
    return await loop.run_in_executor(app[keys.ENQUEUE_POOL], call)
