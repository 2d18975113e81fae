"""An API process that is told to stop (SIGTERM) is gone within its grace, and says what it waits for.

aiohttp stops listening, closes the idle keep-alive connections and runs the shutdown hooks (the
relay's: SHUTDOWN_TIMEOUT for relay requests, then streams end with an error event and waiting
requests get 503); then it waits, silently, `shutdown_timeout` for each request still running and as
long again once it cancelled it. A request the relay does not watch — a console call, a request whose
body is still arriving — kept a process that long past its grace, with nothing in the log.

Here every request is known from its start (a root middleware); when the server stops, those still
running after the other hooks get what is left of SHUTDOWN_TIMEOUT (one clock from the stop), are
then cancelled (their connection closed) and given what is left of FINAL_WAIT more to end; each wait
is logged with the requests it is for. aiohttp's own wait then finds nothing left.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from api import keys

log = logging.getLogger("api")
FINAL_WAIT = 5.0  # seconds after the grace for what was ended (last frames to slow clients) to end
SHOWN = 5  # requests named in a log line


class Stop:
    """The requests running in this process, and the clock of its stop."""

    def __init__(self) -> None:
        self.requests: dict[asyncio.Task[Any], web.Request] = {}
        self.since: float | None = None  # time.monotonic() of the stop

    def left(self, grace: float) -> float:
        """Seconds left of `grace` counted from the stop."""
        since = self.since if self.since is not None else time.monotonic()
        return max(0.0, since + grace - time.monotonic())


STOP = web.AppKey("stop", Stop)


def described(requests: dict[asyncio.Task[Any], web.Request]) -> str:
    names = []
    for request in list(requests.values())[:SHOWN]:
        arriving = "" if request.content.is_eof() else " (its body still arriving)"
        names.append(f"{request.method} {request.path[:80]}{arriving}")
    more = len(requests) - SHOWN
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


@web.middleware
async def running_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    task = asyncio.current_task()
    running = request.config_dict[STOP].requests
    if task is not None:
        running[task] = request
    try:
        return await handler(request)
    finally:
        if task is not None:
            running.pop(task, None)


async def _stopping(app: web.Application) -> None:
    app[STOP].since = time.monotonic()
    log.info("stopping: no new connections; running requests get %.0f s", app[keys.SETTINGS].shutdown_timeout)


async def _end_requests(app: web.Application) -> None:
    stop, grace = app[STOP], app[keys.SETTINGS].shutdown_timeout
    running = {task: request for task, request in stop.requests.items() if not task.done()}
    if not running:
        return
    left = stop.left(grace)
    if left > 0:
        log.info("stopping: waiting up to %.1f s for %d requests: %s", left, len(running), described(running))
        await asyncio.wait(set(running), timeout=left)
        running = {task: request for task, request in running.items() if not task.done()}
        if not running:
            return
    log.warning("stopping: %d requests still running after the %.0f s grace are cancelled: %s", len(running),
                grace, described(running))
    for task in running:
        task.cancel()
    await asyncio.wait(set(running), timeout=max(0.1, stop.left(grace + FINAL_WAIT)))
    left_over = {task: request for task, request in running.items() if not task.done()}
    if left_over:
        log.warning("stopping: %d requests did not end once cancelled: %s", len(left_over), described(left_over))


def setup_stopping(app: web.Application) -> None:
    """Called last: the middleware goes first (it sees every request), the clock starts with the
    first shutdown hook and the running requests are ended by the last one."""
    app[STOP] = Stop()
    app.middlewares.insert(0, running_middleware)
    app.on_shutdown.insert(0, _stopping)
    app.on_shutdown.append(_end_requests)
