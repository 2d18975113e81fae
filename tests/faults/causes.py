"""What cut a request's wait for its database, read from what the process logged rather than from how
long the request took (a loaded machine makes every wait longer; a wall-clock bound would fail on it
without the product being wrong).

`Causes` collects, in the test's own process (the app under aiohttp_client), the API's line for each
request answered 503 because the database was unreachable — "database unreachable on GET /path
(request id …): <the exception>" — keyed by the request id the answer carries, and the database
breaker's openings and closings (models.breaker). `names` lists the exception types a failure went
through (the exception, then what caused it), so a test can say which timeout, or the breaker, ended
the wait.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from api.middlewares import REQUEST_ID_HEADER

HANG_GUARD = 60.0  # seconds: only a request that hangs (no timeout applied at all) gets near this


@dataclass(frozen=True, slots=True)
class Answer:
    seconds: float  # a figure to print, never asserted against a ceiling
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def request_id(self) -> str:
        return self.headers.get(REQUEST_ID_HEADER, "")


async def timed(call: Awaitable[Any]) -> Answer:
    """One request's answer, and how long it took (for the report). A request that hangs fails the
    test after HANG_GUARD seconds instead of holding the suite."""
    started = time.monotonic()
    resp = await asyncio.wait_for(call, HANG_GUARD)
    body = await resp.json(content_type=None)
    return Answer(time.monotonic() - started, resp.status, body, dict(resp.headers))


def names(exc: BaseException | None) -> list[str]:
    """The exception's type and those of what caused it, outermost first (five links at most)."""
    found: list[str] = []
    while exc is not None and len(found) < 5:
        found.append(type(exc).__name__)
        exc = exc.__cause__ or exc.__context__
    return found


class Causes(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.by_request: dict[str, BaseException] = {}
        self.opened: list[str] = []  # the breaker's reason, for each time it opened
        self.closed = 0  # how many times a probe was answered and the breaker closed

    def emit(self, record: logging.LogRecord) -> None:
        message = str(record.msg)
        args = record.args if isinstance(record.args, tuple) else ()
        if message.startswith("database unreachable on") and len(args) == 4 and isinstance(args[3], BaseException):
            self.by_request[str(args[2])] = args[3]
        elif record.name == "models.breaker" and message.startswith("database unreachable ("):
            self.opened.append(type(args[0]).__name__ if args else "")
        elif record.name == "models.breaker" and message.startswith("database answers again"):
            self.closed += 1

    def of(self, answer: Answer) -> list[str]:
        """The exception types that made the process answer this 503 (empty when it logged none)."""
        return names(self.by_request.get(answer.request_id))


@contextmanager
def watching() -> Iterator[Causes]:
    causes = Causes()
    loggers = [logging.getLogger(name) for name in ("api", "models.breaker")]
    saved = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(causes)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        yield causes
    finally:
        for logger, level in zip(loggers, saved, strict=True):
            logger.removeHandler(causes)
            logger.setLevel(level)
