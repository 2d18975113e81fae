"""Runtime options: database rows, cached in a Redis hash and in every process, changed via pub/sub."""
from __future__ import annotations

import logging
from typing import Any

import orjson
from tortoise.transactions import in_transaction

from api.services import redis_keys
from api.services.configuration.option_rules import DEFAULTS, SECRET_OPTIONS, normalize
from api.services.events import EventBus
from api.services.store import Store
from models import Option

log = logging.getLogger(__name__)


class OptionsService:
    """Read options synchronously from memory; write them through the database and Redis."""

    def __init__(self, store: Store, events: EventBus | None = None) -> None:
        self.store = store
        self.events = events
        self.values: dict[str, str] = dict(DEFAULTS)
        self._parsed: dict[str, Any] = {}
        self.hash_key = redis_keys.options(store)
        if events is not None:
            events.subscribe("option", self._on_event)

    async def load(self) -> None:
        """Fill from the Redis hash, or from the database (and then write the hash)."""
        cached = await self.store.redis.hgetall(self.hash_key)
        if cached:
            self._replace({**DEFAULTS, **cached})
            return
        await self.reload_from_db()

    async def reload_from_db(self) -> None:
        rows = await Option.all().values_list("key", "value")
        values = {**DEFAULTS, **{k: v for k, v in rows if k in DEFAULTS}}
        async with self.store.redis.pipeline(transaction=True) as pipe:
            pipe.delete(self.hash_key)
            pipe.hset(self.hash_key, mapping=values)
            await pipe.execute()
        self._replace(values)

    def _replace(self, values: dict[str, str]) -> None:
        self.values = values
        self._parsed.clear()

    async def _on_event(self, message: dict[str, Any]) -> None:
        if message.get("reset"):
            await self.load()
            return
        key = message.get("key")
        if not isinstance(key, str) or key not in DEFAULTS:
            return
        # The event names the option; its value is read from this deployment's own store (an event
        # is never trusted with a value: pub/sub crosses Redis databases).
        value = await self.store.redis.hget(self.hash_key, key)
        if value is None:
            await self.load()
            return
        self.values[key] = value
        self._parsed.pop(key, None)

    # -- reads ---------------------------------------------------------------
    def get(self, key: str) -> str:
        return self.values.get(key, DEFAULTS.get(key, ""))

    def get_bool(self, key: str) -> bool:
        return self.get(key) == "true"

    def get_int(self, key: str) -> int:
        try:
            return int(float(self.get(key)))
        except ValueError:
            return int(float(DEFAULTS.get(key, "0") or 0))

    def get_float(self, key: str) -> float:
        try:
            return float(self.get(key))
        except ValueError:
            return float(DEFAULTS.get(key, "0") or 0)

    def get_json(self, key: str) -> Any:
        """Parsed once per change; callers must not mutate the result."""
        if key not in self._parsed:
            try:
                self._parsed[key] = orjson.loads(self.get(key) or "null")
            except orjson.JSONDecodeError:
                self._parsed[key] = orjson.loads(DEFAULTS.get(key) or "null")
        return self._parsed[key]

    def public_items(self) -> list[dict[str, str]]:
        return [{"key": k, "value": v} for k, v in sorted(self.values.items()) if k not in SECRET_OPTIONS]

    # -- writes --------------------------------------------------------------
    async def update(self, key: str, value: object) -> str:
        """Validate, persist, cache and broadcast one option; returns the stored value."""
        normalized = normalize(key, value, self.values)
        await self.set_raw(key, normalized)
        return normalized

    async def set_raw(self, key: str, value: str) -> None:
        async with in_transaction():
            updated = await Option.filter(key=key).update(value=value)
            if not updated:
                await Option.create(key=key, value=value)
        await self.store.redis.hset(self.hash_key, key, value)
        self.values[key] = value
        self._parsed.pop(key, None)
        if self.events is not None:
            await self.events.publish("option", key=key)
