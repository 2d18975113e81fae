"""Error log rows: relayed calls that failed for good (LogType.ERROR, new-api's type 5), no charge.

The relay never writes them to the database while it answers: `push` (one Redis script, run in
the background once the error is answered) appends the row to a Redis list and says when a
`logs.write_errors` message must be sent; a worker's `write_pending` then moves the rows into the
database in batches. The script bounds what a client can make the gateway write: at most
ERRORS_PER_KEY_MINUTE rows per key (per user for the playground) and minute, at most MAX_PENDING
rows waiting in all; what is over is not written (the client got its error all the same).

One message per burst: the script sets `{errlog}:due` (NX) with the first row after the last drain
and asks for a message, delayed by SEND_DELAY_MS so that the rows of the next moment go in the same
batch; the worker deletes the marker before it drains, so a row pushed meanwhile asks for the next
message. The marker expires after DUE_TTL_MS: a message lost on its way is replaced by the first
error after that. The keys share the hash tag `{errlog}` (one Redis Cluster slot for the script).

What the client chose (its model's name above all) is cut to the log's columns as the row is made
(`ErrorRow`, also as it is read back: a row queued by an older version is cut too), so no request
can make a row the database refuses. Should a row still be refused (or be unreadable), the
worker writes the others and sets that one aside (api.services.set_aside, writer "errlog"):
one row never holds up the queue. A database that is away fails the batch, which goes back to the
head of the list for the message's retry.

The row's shape follows new-api's error logs (`other`: error_type, error_code, status_code,
channel_id, channel_name, channel_type, admin_info.use_channel), plus the request id the client was
given. The channel fields are an administrator's: api.services.logs hides them from users.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.columns import cut
from api.services.row_insert import insert_each, insert_rows
from api.services.set_aside import set_aside
from api.services.store import Script, Store
from models import Log
from models.enums import LogType

ERRORS_PER_KEY_MINUTE = 30  # rows a key (or a playground user) may cause per minute
MAX_PENDING = 50_000  # rows waiting in Redis at most (the workers away, a flood)
SEND_DELAY_MS = 250  # a burst's rows gathered in one message
DUE_TTL_MS = 30_000  # a lost message is replaced by the first error after this
BATCH = 500  # rows per INSERT
MAX_BATCHES = 40  # per message; the rest asks for another message
MAX_MESSAGE = 2000  # characters of the reason kept
REQUEST_ID_PREFIX = "error:"  # Log.request_id of an error row: this + the request's settlement id
WRITER = "errlog"  # the name its refused rows are set aside under
# ErrorRow's free text → the Log column it is written to (and cut to)
LOG_COLUMNS = {"username": "username", "token_name": "token_name", "model": "model_name", "group": "group"}

_PUSH = """
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('EXPIRE', KEYS[2], 120) end
if n > tonumber(ARGV[2]) then return -1 end
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[3]) then return -2 end
redis.call('RPUSH', KEYS[1], ARGV[1])
if redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[4]) then return 1 end
return 0
"""

PUSHED, SEND, OVER_KEY_LIMIT, FULL = 0, 1, -1, -2


@dataclass(slots=True)
class ErrorRow:
    """One failed call, as its log row will say it."""

    request_id: str  # the request's settlement id (unique per request)
    user_id: int
    username: str
    token_id: int
    token_name: str
    model: str
    group: str
    status: int  # the HTTP status the client got
    message: str  # the reason the client got, masked
    error_type: str = ""
    error_code: str = ""
    channel_id: int = 0  # the last channel tried (0: none was)
    channel_name: str = ""
    channel_type: int = 0
    used_channels: list[int] = field(default_factory=list)
    is_stream: bool = False
    use_time: int = 0  # seconds
    path: str = ""
    client_request_id: str = ""  # the X-Oneapi-Request-Id the client was given
    fallback: dict[str, Any] = field(default_factory=dict)  # a chain's models passed over (api/relay/fallbacks.py)
    mcp: dict[str, Any] = field(default_factory=dict)  # an MCP tool call's server, tool, time, status (api/relay/mcp)
    created_at: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        for name, column in LOG_COLUMNS.items():
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, cut(Log, column, value))
        if isinstance(self.message, str):
            self.message = self.message[:MAX_MESSAGE].replace("\x00", "")

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def decode(cls, raw: bytes | str) -> ErrorRow:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise TypeError(f"an error log row is a JSON object, not {type(data).__name__}")
        known = {k: v for k, v in data.items() if k in cls.__slots__}  # a field dropped later is ignored
        return cls(**known)

    def other(self) -> str:
        return orjson.dumps({
            "error_type": self.error_type, "error_code": self.error_code, "status_code": self.status,
            "request_path": self.path, "request_id": self.client_request_id,
            "channel_id": self.channel_id, "channel_name": self.channel_name, "channel_type": self.channel_type,
            "admin_info": {"use_channel": self.used_channels or ([self.channel_id] if self.channel_id else [])},
            **({"fallback": self.fallback} if self.fallback else {}),
            **({"mcp": self.mcp} if self.mcp else {}),
        }).decode()

    def log_fields(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id, "created_at": self.created_at, "type": int(LogType.ERROR),
            "content": self.message, "username": self.username, "token_name": self.token_name,
            "token_id": self.token_id, "model_name": self.model, "quota": 0, "use_time": self.use_time,
            "is_stream": self.is_stream, "channel_id": self.channel_id, "group": self.group,
            "other": self.other(), "request_id": (REQUEST_ID_PREFIX + self.request_id)[:64],
        }


def _keys(store: Store) -> tuple[str, str]:
    return redis_keys.error_log_rows(store), redis_keys.error_log_due(store)


class ErrorLogQueue:
    """The API side: rows into Redis (the script above)."""

    def __init__(self, store: Store, per_key_minute: int = ERRORS_PER_KEY_MINUTE,
                 max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self.per_key_minute = per_key_minute
        self.max_pending = max_pending
        self._script = Script(store.redis, _PUSH)

    async def push(self, row: ErrorRow) -> int:
        """SEND: queued, and a message must be sent (first row since the last drain); PUSHED: queued;
        OVER_KEY_LIMIT / FULL: not queued."""
        rows, due = _keys(self.store)
        who = f"t{row.token_id}" if row.token_id else f"u{row.user_id}"
        counter = redis_keys.error_log_count(self.store, who, int(time.time()) // 60)
        return int(await self._script(keys=[rows, counter, due],
                                      args=[row.encode(), self.per_key_minute, self.max_pending, DUE_TTL_MS]))


async def write_pending(store: Store, batch: int = BATCH, max_batches: int = MAX_BATCHES) -> tuple[int, bool]:
    """The worker side: waiting rows into the database, `batch` per transaction → (rows written,
    whether rows are left for another message). A row that cannot be read, or that the database
    refuses on its own, is set aside and the others written; a batch that fails otherwise (the
    database away) goes back to the head of the list (and the error is raised: the message is
    retried)."""
    rows_key, due = _keys(store)
    redis = store.redis
    await redis.delete(due)  # from now on a new row asks for a new message
    written = 0
    for _ in range(max_batches):
        raw = await redis.lpop(rows_key, batch)
        if not raw:
            return written, False
        try:
            written += await _write_batch(store, raw)
        except BaseException:
            await redis.lpush(rows_key, *reversed(raw))
            raise
        if len(raw) < batch:
            return written, False
    return written, bool(await redis.llen(rows_key))


async def _write_batch(store: Store, raw: list[str]) -> int:
    """These queued rows into the table; those that cannot be read or written set aside."""
    rows: list[tuple[str, ErrorRow]] = []
    refused: list[tuple[str, bytes | str, BaseException]] = []
    for item in raw:
        try:
            rows.append((item, ErrorRow.decode(item)))
        except (ValueError, TypeError) as exc:  # not JSON, a field missing or of another type
            refused.append(("", item, exc))
    written, failed = await insert_each(lambda some: _insert([row for _, row in some]), rows)
    refused += [(REQUEST_ID_PREFIX + row.request_id, item, exc) for (item, row), exc in failed]
    await set_aside(store, WRITER, refused)
    return written


async def _insert(rows: list[ErrorRow]) -> int:
    """New rows only (a row whose request id is in the table already was written by a delivery
    that died before it could say so)."""
    fields = [r.log_fields() for r in rows]
    async with in_transaction() as conn:
        ids = [f["request_id"] for f in fields]
        done = set(await Log.filter(request_id__in=ids).using_db(conn).values_list("request_id", flat=True))
        new = list({f["request_id"]: f for f in fields if f["request_id"] not in done}.values())
        await insert_rows(conn, Log, new)
    return len(new)
