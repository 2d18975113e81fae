"""The task seam: asynchronous jobs (Midjourney drawings, Suno songs) relayed beside the chat adaptors.

A task is submitted once (charged at submission through the same reservation as a chat request),
then polled by the workers until it ends; a task that fails or times out is refunded. A
`TaskAdaptor` is a pure translator for one upstream protocol: where a submission goes and how its
answer reads, how a batch of tasks is fetched and how the upstream's view of each task reads. The
pipeline (api.relay.tasks.relay) and the poller (api.relay.tasks.poll) own the I/O.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import aiohttp
import orjson

# Statuses as the console and the clients know them (midjourney-proxy's, and the task table's).
SUCCESS, FAILURE = "SUCCESS", "FAILURE"
FINAL = frozenset({SUCCESS, FAILURE})
TASK_TIMEOUT = 3600  # seconds: a task not finished an hour after its submission fails (and is refunded)


@dataclass(slots=True)
class Submitted:
    """What the upstream said to a submission."""

    accepted: bool  # charged: the upstream took the task
    task_id: str = ""
    answer: dict[str, Any] = field(default_factory=dict)  # the body the client gets
    reason: str = ""  # why it was not accepted (the upstream's words)
    retry_elsewhere: bool = False  # a failure another channel may not have (5xx, unreachable): a retry
    busy: bool = False  # the channel's queue is full: another channel is tried without using a retry
    row: dict[str, Any] = field(default_factory=dict)  # fields of the task row known at submission


@dataclass(slots=True)
class TaskUpdate:
    """The upstream's view of one task: the row fields it sets (status, progress, times, result)."""

    task_id: str
    status: str
    fields: dict[str, Any]

    @property
    def final(self) -> bool:
        return self.status in FINAL


@dataclass(frozen=True, slots=True)
class Upstream:
    """An upstream HTTP call: method, URL, headers and JSON body (None: no body)."""

    method: str
    url: str
    headers: dict[str, str]
    body: Any = None
    raw: bytes | None = None  # a body sent as these bytes (a multipart form), instead of JSON

    def data(self) -> bytes | None:
        if self.raw is not None:
            return self.raw
        return None if self.body is None else orjson.dumps(self.body)


class TaskAdaptor(ABC):
    platform: ClassVar[str]  # "mj" (the midjourney table) or the task table's platform ("suno", "video")
    batched: ClassVar[bool] = True  # `fetch` takes a batch of ids; False: one id per call (the poller loops)
    answer_limit: ClassVar[int] = 4 * 1024 * 1024  # bytes of an upstream answer read at most
    fetch_timeout: ClassVar[float | None] = None  # seconds for a fetch (None: the poller's own bound)

    def __init__(self, base_url: str, key: str, other: str = "") -> None:
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.other = other  # the channel's `other` field (a region table, …)

    async def authorize(self, up: Upstream, http: aiohttp.ClientSession) -> Upstream:
        """The call with its credential attached when that needs an exchange (an OAuth token); as is by default."""
        return up

    @abstractmethod
    def submit(self, path: str, body: dict[str, Any]) -> Upstream:
        """The submission at `path` (the route below the platform's prefix, e.g. "/submit/imagine")."""

    @abstractmethod
    def read_submit(self, status: int, raw: bytes) -> Submitted: ...

    @abstractmethod
    def fetch(self, task_ids: list[str]) -> Upstream:
        """One call that fetches a batch of tasks."""

    @abstractmethod
    def read_fetch(self, raw: bytes) -> list[TaskUpdate]: ...

    def read_fetched(self, task_ids: list[str], status: int, raw: bytes) -> list[TaskUpdate]:
        """The answer (HTTP `status`) to the fetch of `task_ids`: `read_fetch` of a 200, anything else
        a failure the poller tries again. A protocol whose answer does not name its task, or that
        answers a task's failure with another status, reads it here."""
        if status != 200:
            raise ValueError(f"HTTP {status}: {raw[:200]!r}")
        return self.read_fetch(raw)


def text(value: Any, limit: int | None = None) -> str:
    """An upstream value as a text column keeps it: no NUL (PostgreSQL refuses one), at most `limit`."""
    out = str(value or "").replace("\x00", "")
    return out if limit is None else out[:limit]


def percent(value: Any) -> str:
    """A progress as the tables keep it ("40%"), from "40%", 40 or 0.4-style upstream values."""
    if isinstance(value, str):
        shown = value.strip().replace("\x00", "")
        shown = shown if shown.endswith("%") else (f"{shown}%" if shown.replace(".", "", 1).isdigit() else "")
    elif isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e6:
        shown = f"{int(value)}%"
    else:
        shown = ""
    return shown if len(shown) <= 20 else ""  # the column's width
