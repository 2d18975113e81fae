"""Resource lifetimes of a worker process, as Dramatiq middleware on the AsyncIO loop thread."""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import aiohttp
import dramatiq
from dramatiq.asyncio import EventLoopThread, get_event_loop_thread
from dramatiq.middleware import Middleware, MiddlewareError

from api.resources import HttpPool, open_resources
from api.services.jobs import Send
from models.settings import Settings

from .context import set_context

log = logging.getLogger(__name__)


def _loop() -> EventLoopThread:
    """The AsyncIO middleware's event-loop thread (started before these middlewares run)."""
    thread = get_event_loop_thread()
    assert thread is not None, "the AsyncIO middleware must come first"
    return thread


# The workers' session: each call bounded as a whole; aiohttp's connection pool.
WORKER_HTTP = HttpPool(timeout=aiohttp.ClientTimeout(total=60, sock_connect=10))


class ResourcesMiddleware(Middleware):
    """The process's resources (api.resources: database, Redis store, events, options, HTTP session,
    jobs), opened on the AsyncIO middleware's loop and closed there. Tortoise runs on that loop with
    its global fallback, which lets actor coroutines (started from other threads' contexts) see the
    connection set up here. `send` is the broker's (workers.broker.send), for the jobs actors enqueue."""

    def __init__(self, settings: Settings, send: Send) -> None:
        self.settings = settings
        self.send = send
        self._stack: contextlib.AsyncExitStack | None = None

    def before_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        try:
            _loop().run_coroutine(self._open())
        except Exception as exc:
            raise MiddlewareError(f"resources failed to open: {exc}") from exc

    def after_worker_shutdown(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        # After the worker threads have finished their messages (before_worker_shutdown comes first).
        _loop().run_coroutine(self._close())

    async def _open(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            resources = await stack.enter_async_context(
                open_resources(self.settings, send=self.send, http=WORKER_HTTP, listen=True))
            set_context(resources)
            self._stack = stack.pop_all()  # left open until _close

    async def _close(self) -> None:
        stack, self._stack = self._stack, None
        set_context(None)
        if stack is not None:
            await stack.aclose()


class ShutdownGuard(Middleware):
    """A worker process stops once, and for sure.

    SIGTERM sent to the whole process group (systemd, `docker stop`) reaches each worker process
    twice: directly, and forwarded by Dramatiq's parent. Dramatiq treats the second as "kill now"
    and raises SystemExit in the main thread while the worker threads and the event loop thread
    (not a daemon) keep running: the process lingers, still consuming. Here the repeats are
    ignored (the graceful stop, bounded by --worker-shutdown-timeout, goes on), and a watchdog ends
    the process if it is still alive `grace` seconds after the first signal (Redis gone, say).
    """

    def __init__(self, grace: float = 60.0) -> None:
        self.grace = grace
        self._stopping = False

    def before_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        # Before any message can run.
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers belong to the main thread (a worker started by tests, say)
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is None:
                continue
            previous = signal.getsignal(sig)
            if callable(previous):
                signal.signal(sig, self._handler(previous))

    def _handler(self, previous: Callable[[int, FrameType | None], Any]) -> Callable[[int, FrameType | None], None]:
        def handle(signum: int, frame: FrameType | None) -> None:
            if self._stopping:
                log.info("worker already stopping: signal %s ignored", signum)
                return
            self._stopping = True
            timer = threading.Timer(self.grace, self._force_exit)
            timer.daemon = True
            timer.start()
            previous(signum, frame)

        return handle

    def _force_exit(self) -> None:
        log.error("worker still alive %.0f s after it was told to stop: exiting now", self.grace)
        logging.shutdown()
        os._exit(3)


class ParentWatch(Middleware):
    """A worker process whose parent (Dramatiq's main process) died stops by itself, as if told to.

    Killed with kill -9, the main process leaves its worker processes running, still consuming,
    while `python -m workers` starts a new main process with new workers beside them."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval

    def before_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        if multiprocessing.parent_process() is None:
            return  # not one of Dramatiq's worker processes (a worker started by tests, say)
        parent = os.getppid()
        threading.Thread(target=self._watch, args=(parent,), name="parent-watch", daemon=True).start()

    def _watch(self, parent: int) -> None:
        stopped = threading.Event()
        while not stopped.wait(self.interval):
            if os.getppid() != parent:
                log.error("the main worker process (PID %d) is gone: stopping", parent)
                os.kill(os.getpid(), signal.SIGTERM)
                return
