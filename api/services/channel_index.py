"""The in-process channel index: (group, model) → priority tiers → enabled channels.

Built from the enabled channels (their `group` × `models` lists) in one query at start and after
every `channel` event; until the rebuild lands, the channel named by the event is already out of the
index, so a channel disabled in the console is never picked again by any process. Picking: the
highest tier that still has a channel not tried by this request, weighted random inside it
(weight + 10, the reference's smoothing, so weight 0 still gets traffic).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson

from models import Channel
from models.enums import ChannelStatus

from .events import EventBus
from .pricing import wildcard_name

log = logging.getLogger(__name__)
WEIGHT_SMOOTHING = 10
MISS_RELOAD_INTERVAL = 1.0  # seconds: a request finding no channel reloads at most this often
SUPPRESS_SECONDS = 30.0  # a channel this process disabled stays out while the worker records it


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


def channel_info(ch: Channel) -> ChannelInfo:
    return ChannelInfo(
        id=ch.id, type=ch.type, name=ch.name, key=ch.key.strip(), base_url=(ch.base_url or "").rstrip("/"),
        other=ch.other or "", organization=ch.openai_organization or "",
        model_mapping=_json_map(ch.model_mapping), status_code_mapping=_json_map(ch.status_code_mapping),
        priority=int(ch.priority or 0), weight=max(int(ch.weight or 0), 0), auto_ban=bool(ch.auto_ban),
        groups=_split(ch.group) or ("default",), models=_split(ch.models))


class ChannelIndex:
    def __init__(self, rng: random.Random | None = None, usable: Callable[[int], bool] = lambda channel_type: True,
                 ) -> None:
        """`usable(type)`: whether channels of a type may be picked at all (a retired type's are not)."""
        self._usable = usable
        self._tiers: dict[tuple[str, str], tuple[tuple[ChannelInfo, ...], ...]] = {}
        self._by_id: dict[int, ChannelInfo] = {}
        self._models: dict[str, tuple[str, ...]] = {}
        self._rng = rng or random.Random()
        self._rebuild: asyncio.Task | None = None
        self._again = False
        self._loaded_at = 0.0
        self._suppressed: dict[int, float] = {}  # channel id → monotonic time it may come back
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

    async def load(self) -> None:
        started = time.monotonic()
        rows = await Channel.filter(status=int(ChannelStatus.ENABLED)).all()
        enabled = {r.id for r in rows}
        now = time.monotonic()
        self._suppressed = {cid: until for cid, until in self._suppressed.items() if cid in enabled and until > now}
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

    def models(self, group: str) -> tuple[str, ...]:
        return self._models.get(group, ())

    def pick(self, group: str, model: str, exclude: Iterable[int] = ()) -> ChannelInfo | None:
        """A channel for (group, model) not in `exclude`: highest tier first, weighted random."""
        tiers = self._tiers.get((group, model)) or self._tiers.get((group, wildcard_name(model))) or ()
        skip = set(exclude)
        for tier in tiers:
            candidates = [c for c in tier if c.id not in skip]
            if not candidates:
                continue
            if len(candidates) == 1:
                return candidates[0]
            total = sum(c.weight + WEIGHT_SMOOTHING for c in candidates)
            point = self._rng.uniform(0, total)
            for c in candidates:
                point -= c.weight + WEIGHT_SMOOTHING
                if point < 0:
                    return c
            return candidates[-1]
        return None
