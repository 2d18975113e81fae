"""The audit log's entries: what an administrative change says of itself (who, when, what, the
fields before and after), secrets masked, and how an entry reaches the workers.

An entry is made by the request that made the change and pushed to a Redis list in one round trip
(`push`: a script that appends it and says when an `audit.write` message must be sent, as the error
log's queue does); the workers move it into the `audit_entry` table (api.services.audit_queue),
never the request. Each entry carries an id made here (`entry_id`, unique in the table): the
writer is idempotent, so an entry taken twice (a worker killed after its commit) is written once.

Masking (`mask`) is driven by field names, one rule for every entry: a field whose name says it
holds a secret (`is_secret_name`: key, keys, password, token, secret, …), or that the caller names
(`secret_fields`: an option's value when the option is secret, api.web.audit.option_is_secret),
keeps only whether it was set: "***" for a value, the empty value as it was. Before and after
are compared before masking: an update keeps only the fields that changed, so a secret that
changed shows as "***" on both sides, one that did not is absent.
"""
from __future__ import annotations

import logging
import re
import time
import uuid
import weakref
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
from tortoise.models import Model

from api.services import redis_keys
from api.services.columns import cut
from api.services.jobs import Jobs
from api.services.store import Script, Store
from models import AuditEntry, Channel, User

log = logging.getLogger(__name__)
MASK = "***"
SEND_DELAY_MS = 250  # the entries of one moment gathered in one message
DUE_TTL_MS = 30_000  # a lost message is replaced by the first entry after this (and the periodic sweep)
MAX_PENDING = 200_000  # entries waiting in Redis at most (the workers away for long)
MAX_TEXT = 20_000  # characters of one string value kept in before/after (an option's long JSON)
TEXT_COLUMNS = ("actor_name", "actor_ip", "action", "target_type", "target_id")

# A name (lower case, without "_" and "-") that ends with one of these, or contains one of the
# second set, or is one of the third, names a secret.
_SECRET_ENDINGS = ("key", "keys", "secret", "secrets", "password", "passwd", "token", "tokens", "credential",
                   "credentials", "cookie")
_SECRET_PARTS = ("secret", "password", "privatekey", "apikey", "totp")
_SECRET_NAMES = frozenset({"code", "codes", "backupcodes", "recoverycodes", "otp", "session", "sig", "signature"})
_NOT_SECRET = frozenset({"maxtokens", "prompttokens", "completiontokens", "totaltokens", "cachetokens", "cacheperkey"})
_SEPARATORS = re.compile(r"[_\-\s.]")
# Fields that change by use, not by an administrator (left out of snapshots: diffs show changes only)
_VOLATILE = {
    "Channel": frozenset({"test_time", "response_time", "balance", "balance_updated_time", "used_quota"}),
    "User": frozenset({"used_quota", "request_count"}),
}

_PUSH = """
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return -2 end
redis.call('RPUSH', KEYS[1], ARGV[1])
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return 1 end
return 0
"""
PUSHED, SEND, FULL = 0, 1, -2


def is_secret_name(name: str) -> bool:
    """Whether a field called `name` holds a secret (a key, a password, a token, a client secret …)."""
    flat = _SEPARATORS.sub("", name).lower()
    if flat in _NOT_SECRET:
        return False
    return flat in _SECRET_NAMES or flat.endswith(_SECRET_ENDINGS) or any(part in flat for part in _SECRET_PARTS)


def masked(value: Any) -> Any:
    """What is kept of a secret: whether it was set."""
    return value if value in (None, "", [], {}) else MASK


def mask(value: Any, secret_fields: Collection[str] = ()) -> Any:
    """`value` with every secret field (by name, at any depth, and those of `secret_fields` at the
    top) masked; long text cut."""
    if isinstance(value, Mapping):
        return {str(k): masked(v) if is_secret_name(str(k)) or k in secret_fields else mask(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask(v) for v in value]
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[:MAX_TEXT] + "…"
    return value


def snapshot(obj: Model | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The fields of a row as the audit compares them (not masked yet): a channel as the console
    sees it plus its key; a user as the console sees it plus the password and access-token hashes;
    any other row its columns. Fields that change by use (balances, counters) are left out."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, Channel):
        fields = {**obj.public_dict(), "key": obj.key}
    elif isinstance(obj, User):
        fields = {**obj.public_dict(), "password": obj.password, "access_token": obj.access_token}
    else:
        fields = {name: getattr(obj, name) for name in obj._meta.db_fields}
    volatile = _VOLATILE.get(type(obj).__name__, frozenset())
    return {k: v for k, v in fields.items() if k not in volatile}


def changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
            ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The fields that differ when both sides are there (an update); a side alone as it is (a
    creation, a deletion). Not masked yet."""
    if before is None or after is None:
        return (dict(before) if before is not None else None), (dict(after) if after is not None else None)
    names = [k for k in {**before, **after} if before.get(k) != after.get(k)]
    return {k: before.get(k) for k in names if k in before}, {k: after.get(k) for k in names if k in after}


def new_entry_id() -> str:
    return uuid.uuid4().hex


@dataclass(slots=True)
class Entry:
    """One administrative change, as its row will say it (before/after masked already)."""

    action: str
    target_type: str
    target_id: str
    actor_id: int = 0
    actor_name: str = ""
    actor_role: int = 0
    actor_ip: str = ""
    target_role: int | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    entry_id: str = field(default_factory=new_entry_id)
    created_at: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        for name in TEXT_COLUMNS:
            value = getattr(self, name)
            setattr(self, name, cut(AuditEntry, name, value) if isinstance(value, str) else str(value))

    @property
    def changed(self) -> bool:
        """Whether there is anything to say: a side alone, or fields that differ."""
        return self.before is None or self.after is None or bool(self.before or self.after)

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self), default=str)

    @classmethod
    def decode(cls, raw: bytes | str) -> Entry:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise TypeError(f"an audit entry is a JSON object, not {type(data).__name__}")
        return cls(**{k: v for k, v in data.items() if k in cls.__slots__})

    def row(self) -> dict[str, Any]:
        """The table's columns."""
        text = {name: getattr(self, name) for name in TEXT_COLUMNS}
        return {**text, "entry_id": self.entry_id, "created_at": int(self.created_at),
                "actor_id": int(self.actor_id), "actor_role": int(self.actor_role),
                "target_role": None if self.target_role is None else int(self.target_role),
                "before": "" if self.before is None else orjson.dumps(self.before, default=str).decode(),
                "after": "" if self.after is None else orjson.dumps(self.after, default=str).decode()}


def make_entry(action: str, target_type: str, target_id: object, before: Any = None, after: Any = None,
               secret_fields: Collection[str] = (), **who: Any) -> Entry:
    """An entry of this change: the rows or dicts snapshotted, compared, masked (`secret_fields`:
    top-level fields masked whatever their name, an option's value); a user target's role taken
    from it (the higher of before and after: the stricter for who may read it)."""
    old, new = snapshot(before), snapshot(after)
    roles = [r for r in ((old or {}).get("role"), (new or {}).get("role")) if isinstance(r, int)]
    if target_type == "user" and roles and who.get("target_role") is None:
        who["target_role"] = max(roles)
    old, new = changes(old, new)
    return Entry(action=action, target_type=target_type, target_id=str(target_id),
                 before=None if old is None else mask(old, secret_fields),
                 after=None if new is None else mask(new, secret_fields), **who)


_scripts: weakref.WeakKeyDictionary[Store, Script] = weakref.WeakKeyDictionary()


async def push(store: Store, jobs: Jobs | None, entry: Entry) -> bool:
    """Queue `entry` for the workers (one round trip; the message sent with the first entry since the
    last drain). False when it could not be queued (Redis away, or MAX_PENDING waiting): logged,
    the change it describes stands."""
    script = _scripts.get(store)
    if script is None:
        script = _scripts[store] = Script(store.redis, _PUSH)
    try:
        answer = int(await script(keys=[redis_keys.audit_rows(store), redis_keys.audit_due(store)],
                                  args=[entry.encode(), MAX_PENDING, DUE_TTL_MS]))
    except Exception as exc:  # the change is made; its entry is lost: say so loudly
        log.error("audit entry %s (%s %s:%s) not queued: %r", entry.entry_id, entry.action, entry.target_type,
                  entry.target_id, exc)
        return False
    if answer == FULL:
        log.error("audit entry %s (%s %s:%s) not queued: %d entries wait already", entry.entry_id,
                  entry.action, entry.target_type, entry.target_id, MAX_PENDING)
        return False
    if answer == SEND and jobs is not None:
        try:
            await jobs.send("audit.write", delay_ms=SEND_DELAY_MS)
        except Exception as exc:  # queued all the same: the periodic sweep writes it
            log.warning("audit.write not sent for entry %s: %r", entry.entry_id, exc)
    return True
