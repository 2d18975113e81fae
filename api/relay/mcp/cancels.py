"""A client's notifications/cancelled may reach another API process than the one running the call
(sessions live in Redis): it is published as an `mcp_cancel` event (api.services.events), and the
process running that (session, request id) cancels its task."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from api.services.events import EventBus

EVENT = "mcp_cancel"
Running = dict[str, "asyncio.Task[Any]"]


def running_key(session_id: str, request_id: Any) -> str:
    return f"{session_id}:{orjson.dumps(request_id).decode()}"


def listener(running: Running) -> Callable[[Mapping[str, Any]], None]:
    def on_cancel(message: Mapping[str, Any]) -> None:
        key = message.get("key")
        task = running.get(key) if isinstance(key, str) else None
        if task is not None and not task.done():
            task.cancel()

    return on_cancel


async def announce(events: EventBus, running: Running, session_id: str, request_id: Any) -> None:
    """Cancel the call here at once if it runs here, else tell the other processes."""
    key = running_key(session_id, request_id)
    task = running.get(key)
    if task is not None:
        if not task.done():
            task.cancel()
        return
    await events.publish(EVENT, key=key)
