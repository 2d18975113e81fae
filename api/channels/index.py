"""The in-process channel index: (group, model) → priority tiers → enabled channels.

Built from the enabled channels (their `group` × `models` lists) in one query at start and after
every `channel` event; until the rebuild lands, the channel named by the event is already out of the
index, so a channel disabled in the console is never picked again by any process.

Picking (`pick`): the highest tier that still has a channel this request has not tried, with an
enabled key it has not tried, and not past its in-flight limit (while another can serve). In it:
  1. the session's pin (api/relay/affinity.py) when its channel is there — and its key, when the
     channel's upstream caches per key, the key is still enabled and the channel keeps keys by affinity;
  2. else weighted random (weight + 10, the reference's smoothing, so weight 0 still gets traffic),
     least busy: each weight divided by the channel's expected wait, (requests in flight + 1) × time
     to first byte, so a channel five times slower, or five times as loaded, gets a sixth of the
     traffic of its equal instead of half, and equal channels keep their weights.
A multi-key channel's key: the pin's, else by the channel's mode — `polling` in turn, `random` and
`affinity` at random (the less busy of two draws, when least-busy is on).
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Protocol

import orjson

from api.services.billing.pricing import wildcard_name
from api.services.events import EventBus
from models import Channel, keyring
from models.enums import ChannelStatus

log = logging.getLogger(__name__)
WEIGHT_SMOOTHING = 10
MISS_RELOAD_INTERVAL = 1.0  # seconds: a request finding no channel reloads at most this often
SUPPRESS_SECONDS = 30.0  # a channel this process disabled stays out while the worker records it
SLOWER = 1.5  # a channel's time to first byte counts against it past this many times the fastest's


class Busy(Protocol):
    """How busy channels and keys are (api/relay/load.py)."""

    def inflight(self, channel_id: int) -> int: ...

    def key_inflight(self, channel_id: int, fingerprint: str) -> int: ...

    def latency(self, channel_id: int) -> float | None: ...


class Pin(Protocol):
    """A session's pin (api/relay/affinity.py)."""

    @property
    def channel_id(self) -> int: ...

    @property
    def fingerprint(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ChannelInfo:
    """What the relay needs of a channel (a snapshot: never written back)."""

    id: int
    type: int
    name: str
    key: str
    base_url: str
    other: str
    organization: str
    model_mapping: Mapping[str, str]
    status_code_mapping: Mapping[str, str]
    priority: int
    weight: int
    auto_ban: bool
    groups: tuple[str, ...]
    models: tuple[str, ...]
    # A multi-key channel's enabled keys: (position, key, fingerprint); empty for one key. `key` is
    # the key of this attempt once a key was chosen (`with_key`), `key_index` its position.
    keys: tuple[tuple[int, str, str], ...] = ()
    key_index: int = -1
    key_mode: str = keyring.DEFAULT_MODE
    cache_per_key: bool = True
    max_inflight: int = 0
    tag: str = ""

    @property
    def multi(self) -> bool:
        return bool(self.keys)

    @property
    def fingerprint(self) -> str:
        """The chosen key's fingerprint (multi-key channels), else ""."""
        for index, _, fp in self.keys:
            if index == self.key_index:
                return fp
        return ""

    def with_key(self, index: int, key: str) -> ChannelInfo:
        return replace(self, key=key, key_index=index)

    def upstream_model(self, model: str) -> str:
        mapped = self.model_mapping.get(model)
        return mapped if isinstance(mapped, str) and mapped else model

    def client_status(self, status: int) -> int:
        """`status_code_mapping` applied to the status the client sees (never to a success)."""
        mapped = self.status_code_mapping.get(str(status))
        try:
            value = int(mapped) if mapped is not None else status
        except (TypeError, ValueError):
            return status
        return value if 100 <= value <= 599 and status != 200 else status


def _json_map(text: str) -> Mapping[str, Any]:
    if not text or not text.strip():
        return MappingProxyType({})
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        log.warning("ignoring a mapping that is not JSON: %.80s", text)
        return MappingProxyType({})
    return MappingProxyType({str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {})


def _split(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in (text or "").split(",") if p.strip()))


def fingerprint(key: str) -> str:
    return hashlib.sha256(key.strip().encode()).hexdigest()[:16]


def channel_info(ch: Channel) -> ChannelInfo:
    ring = keyring.load(ch.key, ch.channel_info)
    keys = tuple((i, ring.keys[i], fingerprint(ring.keys[i])) for i in ring.enabled()) if ring.multi else ()
    return ChannelInfo(
        id=ch.id, type=ch.type, name=ch.name, key=keys[0][1] if keys else ch.key.strip(),
        base_url=(ch.base_url or "").rstrip("/"), other=ch.other or "", organization=ch.openai_organization or "",
        model_mapping=_json_map(ch.model_mapping), status_code_mapping=_json_map(ch.status_code_mapping),
        priority=int(ch.priority or 0), weight=max(int(ch.weight or 0), 0), auto_ban=bool(ch.auto_ban),
        groups=_split(ch.group) or ("default",), models=_split(ch.models), keys=keys,
        key_mode=ring.mode, cache_per_key=bool(ch.cache_per_key), max_inflight=max(int(ch.max_inflight or 0), 0),
        tag=ch.tag or "")


class ChannelIndex:
    def __init__(self, rng: random.Random | None = None, usable: Callable[[int], bool] = lambda channel_type: True,
                 ) -> None:
        """`usable(type)`: whether channels of a type may be picked at all (a retired type's are not)."""
        self._usable = usable
        self._tiers: dict[tuple[str, str], tuple[tuple[ChannelInfo, ...], ...]] = {}
        self._by_id: dict[int, ChannelInfo] = {}
        self._models: dict[str, tuple[str, ...]] = {}
        self._types: dict[tuple[str, str], frozenset[int]] = {}
        self._rng = rng or random.Random()
        self._rebuild: asyncio.Task[None] | None = None
        self._again = False
        self._loaded_at = 0.0
        self._suppressed: dict[int, float] = {}  # channel id → monotonic time it may come back
        self._suppressed_keys: dict[tuple[int, str], float] = {}  # (channel id, fingerprint) → the same
        self._turn: dict[int, int] = {}  # polling channels: the next key's turn
        self.loaded = asyncio.Event()

    # -- building --------------------------------------------------------------------------------
    def replace(self, channels: Iterable[ChannelInfo]) -> None:
        by_key: dict[tuple[str, str], list[ChannelInfo]] = {}
        models: dict[str, set[str]] = {}
        by_id: dict[int, ChannelInfo] = {}
        now = time.monotonic()
        for ch in channels:
            if self._suppressed.get(ch.id, 0) > now or not self._usable(ch.type):
                continue
            if ch.keys:
                keys = tuple(k for k in ch.keys if self._suppressed_keys.get((ch.id, k[2]), 0) <= now)
                if not keys:
                    continue  # every key disabled: the channel is about to be (api/channels/keys.py)
                if keys != ch.keys:
                    ch = replace(ch, keys=keys, key=keys[0][1], key_index=-1)
            by_id[ch.id] = ch
            for group in ch.groups:
                for model in ch.models:
                    by_key.setdefault((group, model), []).append(ch)
                    models.setdefault(group, set()).add(model)
        tiers: dict[tuple[str, str], tuple[tuple[ChannelInfo, ...], ...]] = {}
        for key, members in by_key.items():
            priorities = sorted({c.priority for c in members}, reverse=True)
            tiers[key] = tuple(tuple(sorted((c for c in members if c.priority == p), key=lambda c: c.id))
                               for p in priorities)
        self._tiers, self._by_id = tiers, by_id
        self._models = {g: tuple(sorted(m)) for g, m in models.items()}
        self._types = {key: frozenset(c.type for tier in members for c in tier) for key, members in tiers.items()}

    async def load(self) -> None:
        started = time.monotonic()
        rows = await Channel.filter(status=int(ChannelStatus.ENABLED)).all()
        enabled = {r.id for r in rows}
        now = time.monotonic()
        self._suppressed = {cid: until for cid, until in self._suppressed.items() if cid in enabled and until > now}
        self._suppressed_keys = {k: until for k, until in self._suppressed_keys.items()
                                 if k[0] in enabled and until > now}
        self.replace(channel_info(r) for r in rows)
        self._loaded_at = started
        self.loaded.set()

    async def refresh_after_miss(self) -> bool:
        """No channel for a request: a channel created a moment ago may not have reached this
        process yet. Wait for a pending rebuild, or reload if the index is older than a second
        (bounded, so requests for models nobody serves cannot hammer the database)."""
        if self._rebuild is not None and not self._rebuild.done():
            await asyncio.shield(self._rebuild)
            return True
        if time.monotonic() - self._loaded_at < MISS_RELOAD_INTERVAL:
            return False
        self._loaded_at = time.monotonic()
        self.schedule_rebuild()
        if self._rebuild is not None:
            await asyncio.shield(self._rebuild)
        return True

    def drop(self, channel_id: int) -> None:
        """Take one channel out at once (disabled here or announced by an event); copy-on-write."""
        if channel_id not in self._by_id:
            return
        self.replace(c for c in self._by_id.values() if c.id != channel_id)

    def disable_locally(self, channel_id: int) -> None:
        """This process decided to disable the channel: out now, and kept out by reloads until the
        database says so too (or SUPPRESS_SECONDS pass)."""
        self._suppressed[channel_id] = time.monotonic() + SUPPRESS_SECONDS
        self.drop(channel_id)

    def disable_key_locally(self, channel_id: int, fp: str) -> None:
        """This process decided to disable one key of a multi-key channel: the same, for the key."""
        self._suppressed_keys[channel_id, fp] = time.monotonic() + SUPPRESS_SECONDS
        if channel_id in self._by_id:
            self.replace(self._by_id.values())

    def subscribe(self, events: EventBus) -> None:
        events.subscribe("channel", self._on_event)

    def _on_event(self, message: Mapping[str, Any]) -> None:
        channel_id = message.get("id")
        if isinstance(channel_id, int):
            self.drop(channel_id)
        self.schedule_rebuild()

    def schedule_rebuild(self) -> None:
        """Reload from the database soon; a burst of events costs one or two reloads."""
        if self._rebuild is not None and not self._rebuild.done():
            self._again = True
            return
        self._rebuild = asyncio.get_running_loop().create_task(self._rebuild_loop(), name="channel-index")

    async def _rebuild_loop(self) -> None:
        while True:
            self._again = False
            try:
                await self.load()
            except Exception:
                log.exception("channel index reload failed; keeping the previous index")
            if not self._again:
                return

    async def close(self) -> None:
        if self._rebuild is not None:
            self._rebuild.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._rebuild

    # -- reading ---------------------------------------------------------------------------------
    def get(self, channel_id: int) -> ChannelInfo | None:
        return self._by_id.get(channel_id)

    def has(self, group: str, model: str) -> bool:
        return (group, model) in self._tiers or (group, wildcard_name(model)) in self._tiers

    def types(self, group: str, model: str) -> frozenset[int]:
        """The channel types that serve (group, model) (any priority)."""
        found = self._types.get((group, model))
        return found if found is not None else self._types.get((group, wildcard_name(model)), frozenset())

    def models(self, group: str) -> tuple[str, ...]:
        return self._models.get(group, ())

    def pick(self, group: str, model: str, exclude: Iterable[int] = (), *, pin: Pin | None = None,
             busy: Busy | None = None, least_busy: bool = True,
             exclude_keys: Collection[tuple[int, str]] = ()) -> ChannelInfo | None:
        """A channel (with its key chosen) for (group, model): not in `exclude`, with a key not in
        `exclude_keys`; the pin's when it is in the tier that serves (see the module's docstring)."""
        tiers = self._tiers.get((group, model)) or self._tiers.get((group, wildcard_name(model))) or ()
        skip = set(exclude)
        for tier in tiers:
            candidates = [c for c in tier if c.id not in skip and (not c.keys or any(
                (c.id, fp) not in exclude_keys for _, _, fp in c.keys))]
            if not candidates:
                continue
            if busy is not None:
                free = [c for c in candidates if not c.max_inflight or busy.inflight(c.id) < c.max_inflight]
                candidates = free or candidates  # all at their limit: served anyway, by the least busy
            chosen = None
            if pin is not None:
                chosen = next((c for c in candidates if c.id == pin.channel_id), None)
            if chosen is None:
                chosen = self._choose(candidates, busy if least_busy else None)
            return self._with_key(chosen, pin, busy if least_busy else None, exclude_keys)
        return None

    def _weighted(self, candidates: Sequence[ChannelInfo]) -> ChannelInfo:
        total = sum(c.weight + WEIGHT_SMOOTHING for c in candidates)
        point = self._rng.uniform(0, total)
        for c in candidates:
            point -= c.weight + WEIGHT_SMOOTHING
            if point < 0:
                return c
        return candidates[-1]

    def _choose(self, candidates: Sequence[ChannelInfo], busy: Busy | None) -> ChannelInfo:
        if len(candidates) == 1:
            return candidates[0]
        if busy is None:
            return self._weighted(candidates)
        # Least busy: each weight divided by the channel's expected wait — (requests in flight + 1) ×
        # time to first byte (a channel not measured yet counts as the tier's mean; one within SLOWER
        # of the fastest as the fastest). Equal channels keep their weights; one five times slower
        # gets a sixth of the traffic beside its equal.
        measured = [busy.latency(c.id) for c in candidates]
        known = [t for t in measured if t is not None]
        fastest = min(known) if known else 1.0
        default = sum(known) / len(known) if known else 1.0
        shares = []
        for c, t in zip(candidates, measured, strict=True):
            wait = t if t is not None else default
            wait = wait if wait > SLOWER * fastest else fastest  # noise between like channels is not a difference
            shares.append((c.weight + WEIGHT_SMOOTHING) / ((busy.inflight(c.id) + 1) * max(wait, 1e-4)))
        point = self._rng.uniform(0, sum(shares))
        for c, share in zip(candidates, shares, strict=True):
            point -= share
            if point < 0:
                return c
        return candidates[-1]

    def _with_key(self, channel: ChannelInfo, pin: Pin | None, busy: Busy | None,
                  exclude_keys: Collection[tuple[int, str]]) -> ChannelInfo:
        if not channel.keys:
            return channel
        keys = [k for k in channel.keys if (channel.id, k[2]) not in exclude_keys]
        if (pin is not None and pin.channel_id == channel.id and pin.fingerprint and channel.cache_per_key
                and channel.key_mode == "affinity"):
            for index, key, fp in keys:
                if fp == pin.fingerprint:
                    return channel.with_key(index, key)
        if len(keys) == 1:
            index, key, _ = keys[0]
        elif channel.key_mode == "polling":
            turn = self._turn.get(channel.id, 0)
            self._turn[channel.id] = turn + 1
            index, key, _ = keys[turn % len(keys)]
        else:
            index, key, fp = keys[self._rng.randrange(len(keys))]
            if busy is not None:
                other = keys[self._rng.randrange(len(keys))]
                if busy.key_inflight(channel.id, other[2]) < busy.key_inflight(channel.id, fp):
                    index, key, _ = other
        return channel.with_key(index, key)
