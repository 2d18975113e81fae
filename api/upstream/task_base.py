"""The task seam: asynchronous jobs (Midjourney drawings, Suno songs, videos) relayed beside the chat
adaptors, one `TaskAdaptor` per upstream protocol, kept beside its provider's chat adaptor in
api/upstream/providers/ and named by its catalogue row (`task`, `video`).

A task is submitted once (charged at submission through the same reservation as a chat request),
then polled by the workers until it ends; a task that fails or times out is refunded. A
`TaskAdaptor` is a pure translator for one upstream protocol: the `UpstreamRequest` of a submission
and how its answer reads, the request that fetches a batch of tasks and how the upstream's view of
each task reads. Its `authorize` signs a request or attaches an exchanged credential, called by the
one upstream call (api/upstream/call.py) as a chat adaptor's is. The task pipeline
(api/relay/tasks/: submit, poll, notify, content) owns the I/O, the rows and the billing.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard

import orjson

from api.upstream.base import UpstreamContext, UpstreamRequest
from api.upstream.errors import RelayError, mask_secrets

# Statuses as the console and the clients know them (midjourney-proxy's, and the task table's).
SUCCESS, FAILURE = "SUCCESS", "FAILURE"
FINAL = frozenset({SUCCESS, FAILURE})
VIDEO_PLATFORM = "video"  # the task table's platform of video tasks
_MAX_DEPTH = 32


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


def upstream_request(method: str, url: str, headers: dict[str, str], body: Any = None, *,
            raw: bytes | None = None) -> UpstreamRequest:
    """A task call: `body` sent as JSON (None: no body), or `raw` as these bytes (a multipart form)."""
    data = raw if raw is not None else None if body is None else orjson.dumps(body)
    return UpstreamRequest(url, headers, data, method)


class TaskAdaptor(ABC):
    platform: ClassVar[str]  # "mj" (the midjourney table) or the task table's platform ("suno", "video")
    # The table its tasks are kept in: "task" (the task table, under `platform`), or "midjourney"
    # (midjourney-proxy's own shape, which its clients read).
    table: ClassVar[str] = "task"
    batched: ClassVar[bool] = True  # `fetch` takes a batch of ids; False: one id per call (the poller loops)
    answer_limit: ClassVar[int] = 4 * 1024 * 1024  # bytes of an upstream answer read at most
    fetch_timeout: ClassVar[float | None] = None  # seconds for a fetch (None: the poller's own bound)

    def __init__(self, base_url: str, key: str, other: str = "") -> None:
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.other = other  # the channel's `other` field (a region table, …)

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        """Sign the request or attach an exchanged credential (from `ctx.credentials`); called by the
        one upstream call. The default: the headers the request was built with are enough."""
        return None

    @classmethod
    def relays_refusal(cls, answer: dict[str, Any]) -> bool:
        """Whether a refusal answered in the protocol's own terms goes back to the client as it is
        (midjourney-proxy's codes, HTTP 200), instead of the gateway's error."""
        return False

    def mask(self, value: Any) -> Any:
        """Upstream words (text or JSON) with the channel's key and address masked."""
        return masked(value, self.key, self.base_url)

    @abstractmethod
    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        """The submission at `path` (the route below the platform's prefix, e.g. "/submit/imagine")."""

    @abstractmethod
    def read_submit(self, status: int, raw: bytes) -> Submitted: ...

    @abstractmethod
    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
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


class VideoAdaptor(TaskAdaptor):
    """What every video protocol shares: the task platform, one task per fetch."""

    platform = VIDEO_PLATFORM
    batched = False

    @classmethod
    def unfit(cls, body: dict[str, Any]) -> tuple[str, str] | None:
        """What of a video request (api/relay/tasks/video_shape.py) this protocol cannot render, as
        (parameter, reason): the client's 400 before anything is charged; None when it can."""
        return None


# -- reading upstream answers ---------------------------------------------------------------------


TASK_ID_LIMIT = 191  # the task tables' id column


def keepable_id(task_id: Any) -> TypeGuard[str]:
    """Whether an id the upstream gave can be kept as a task row's id (a non-empty string, no NUL,
    within the column)."""
    return isinstance(task_id, str) and bool(task_id) and len(task_id) <= TASK_ID_LIMIT and "\x00" not in task_id


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


def masked(value: Any, key: str, base_url: str, _depth: int = 0) -> Any:
    """`value` (JSON) with each string, and each object key, through mask_secrets with the channel's key
    and base URL (before it is stored or answered); NUL characters dropped (no column can hold one);
    deeper than _MAX_DEPTH: dropped."""
    if isinstance(value, str):
        return mask_secrets(value.replace("\x00", ""), key, base_url)
    if _depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {mask_secrets(str(k), key, base_url): masked(v, key, base_url, _depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, key, base_url, _depth + 1) for v in value]
    return value


def json_or_none(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def not_json(status: int) -> Submitted:
    """A submission answered without a JSON object: not taken; another channel may take it when the
    upstream failed (5xx, 429) or answered 200 with something else."""
    return Submitted(False, reason=f"the upstream answered HTTP {status} without a JSON object",
                     retry_elsewhere=status >= 500 or status == 429 or status == 200)


def mapped_status(table: dict[str, str], value: Any, what: str) -> str:
    """The task status of an upstream's state (`table`); ValueError for one the protocol does not have."""
    status = table.get(str(value), "")
    if not status:
        raise ValueError(f"unknown {what} {str(value)[:40]!r}")
    return status


class KeyPairInvalid(RelayError):
    """A channel key that is not the `access|secret` pair its protocol signs with (a key imported or written
    past the form's check): the channel's failure, answered like an upstream that refused it (another
    channel may serve)."""

    def __init__(self, provider: str, form: str) -> None:
        super().__init__(502, f"the channel's {provider} key is not {form}", "upstream_error", "channel_key_invalid")


def key_pair(key: str, provider: str, form: str) -> tuple[str, str]:
    """(access key, secret key) of a channel key `access|secret`; KeyPairInvalid when it is not one."""
    parts = [part.strip() for part in key.strip().split("|")]
    if len(parts) != 2 or not all(parts):
        raise KeyPairInvalid(provider, form)
    return parts[0], parts[1]
