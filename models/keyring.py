"""A channel's keys: one, or several in one channel (a multi-key channel).

Storage follows new-api's so an imported channel keeps its keys and their states: `channel.key` holds
one key per line (a JSON array when the keys are whole documents, such as service-account JSON), and
`channel.channel_info` a JSON object with `is_multi_key`, `multi_key_mode` (`random`, `polling` — the
console's round-robin — or `affinity`), and per key position `multi_key_status_list` (2 disabled by
hand, 3 disabled automatically; an enabled key is absent), `multi_key_disabled_reason`,
`multi_key_disabled_time`. Positions are renumbered by `with_keys` whenever the list changes, so a
key's state follows the key, not its old position.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .enums import ChannelStatus

MODES = ("random", "polling", "affinity")
DEFAULT_MODE = "affinity"
MAX_KEYS = 1000  # keys one channel may hold
ENABLED = int(ChannelStatus.ENABLED)
MANUAL = int(ChannelStatus.MANUALLY_DISABLED)
AUTO = int(ChannelStatus.AUTO_DISABLED)


@dataclass(frozen=True, slots=True)
class KeyState:
    status: int = ENABLED
    reason: str = ""
    time: int = 0


@dataclass(slots=True)
class Keyring:
    multi: bool = False
    mode: str = DEFAULT_MODE
    keys: list[str] = field(default_factory=list)
    states: dict[int, KeyState] = field(default_factory=dict)  # disabled keys only, by position

    def status(self, index: int) -> int:
        state = self.states.get(index)
        return state.status if state is not None else ENABLED

    def enabled(self) -> list[int]:
        return [i for i in range(len(self.keys)) if self.status(i) == ENABLED]

    def set_status(self, index: int, status: int, reason: str = "", when: int = 0) -> None:
        if status == ENABLED:
            self.states.pop(index, None)
        else:
            self.states[index] = KeyState(status, reason[:500], when)

    def with_keys(self, keys: Sequence[str]) -> Keyring:
        """The same ring over a new list of keys: a key kept keeps its state, wherever it moved."""
        by_key = {self.keys[i]: state for i, state in self.states.items() if i < len(self.keys)}
        unique = list(dict.fromkeys(k for k in keys if k))
        states = {i: by_key[k] for i, k in enumerate(unique) if k in by_key}
        return Keyring(self.multi, self.mode, unique, states)

    def key_text(self) -> str:
        if not self.multi:
            return self.keys[0] if self.keys else ""
        if any(k.lstrip().startswith(("{", "[")) for k in self.keys):
            return orjson.dumps([orjson.loads(k) for k in self.keys]).decode()
        return "\n".join(self.keys)

    def info(self) -> dict[str, Any]:
        """The `channel_info` fields: the keys' number, mode and states (never a key)."""
        states = sorted(self.states.items())
        return {
            "is_multi_key": self.multi,
            "multi_key_size": len(self.keys) if self.multi else 0,
            "multi_key_mode": self.mode,
            "multi_key_status_list": {str(i): s.status for i, s in states},
            "multi_key_disabled_reason": {str(i): s.reason for i, s in states if s.reason},
            "multi_key_disabled_time": {str(i): s.time for i, s in states if s.time},
        }

    def info_text(self) -> str:
        return orjson.dumps(self.info()).decode() if self.multi else ""


def split_keys(text: str, multi: bool) -> list[str]:
    """The keys stored in `channel.key`: one (a single-key channel, whatever it holds), else one per
    line, or the documents of a JSON array."""
    text = (text or "").strip()
    if not multi:
        return [text] if text else []
    if text.startswith("["):
        try:
            docs = orjson.loads(text)
        except orjson.JSONDecodeError:
            docs = None
        if isinstance(docs, list):
            return list(dict.fromkeys(orjson.dumps(d).decode() if not isinstance(d, str) else d.strip()
                                      for d in docs if d))
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def primary(key_text: str, info_text: str) -> str:
    """The key used where one key must serve for good (a task polled later with the key that
    submitted it, a balance query): a single-key channel's key, else the first enabled key."""
    ring = load(key_text, info_text)
    enabled = ring.enabled()
    if enabled:
        return ring.keys[enabled[0]]
    return ring.keys[0] if ring.keys else ""


def _info(text: str) -> Mapping[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def by_position(value: Any) -> dict[int, Any]:
    """A map keyed by key position (JSON object keys are strings); anything else is empty."""
    if not isinstance(value, Mapping):
        return {}
    out: dict[int, Any] = {}
    for k, v in value.items():
        try:
            out[int(k)] = v
        except (TypeError, ValueError):
            continue
    return out


def load(key_text: str, info_text: str) -> Keyring:
    info = _info(info_text)
    multi = bool(info.get("is_multi_key"))
    mode = info.get("multi_key_mode")
    keys = split_keys(key_text, multi)
    statuses = by_position(info.get("multi_key_status_list"))
    reasons = by_position(info.get("multi_key_disabled_reason"))
    times = by_position(info.get("multi_key_disabled_time"))
    states: dict[int, KeyState] = {}
    for i, status in statuses.items():
        if 0 <= i < len(keys) and isinstance(status, int) and status in (MANUAL, AUTO):
            reason, when = reasons.get(i, ""), times.get(i, 0)
            states[i] = KeyState(status, str(reason or ""), when if isinstance(when, int) else 0)
    return Keyring(multi, mode if mode in MODES else DEFAULT_MODE, keys, states)


def public_channel_info(info_text: str, key_text: str) -> dict[str, Any]:
    """What the console may see of a channel's keys: their number and states, never a key."""
    return load(key_text, info_text).info()


def mask(key: str) -> str:
    """A key as the console shows it: enough to tell keys apart, never enough to use one."""
    key = key.strip()
    if key.startswith("{"):
        try:
            doc = orjson.loads(key)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            for name in ("client_email", "access_key_id", "accessKeyId", "project_id"):
                value = doc.get(name)
                if isinstance(value, str) and value:
                    return f"{{{name}: {value[:4]}…{value[-4:]}}}" if len(value) > 8 else f"{{{name}}}"
        return "{…}"
    if len(key) >= 16:
        return f"{key[:6]}…{key[-4:]}"
    if len(key) >= 8:
        return f"…{key[-3:]}"
    return "…"
