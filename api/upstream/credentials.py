"""Per-process cache of credentials obtained by exchange (OAuth access tokens, provider tokens).

`get(key, fetch)` answers from the cache while the credential is fresh; inside the refresh margin
before its expiry it still answers at once and starts one background refresh; a missing or expired
credential is fetched once for all concurrent callers (single-flight). Callers key entries by a
hash of the channel's key, never by the secret itself.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from api.upstream.masking import mask_secrets

log = logging.getLogger("api.upstream.credentials")


@dataclass(frozen=True, slots=True)
class Credential:
    value: str
    expires_at: float  # unix seconds


class CredentialCache:
    def __init__(self, refresh_margin: float = 300.0, max_entries: int = 1024,
                 clock: Callable[[], float] = time.time) -> None:
        self.refresh_margin = refresh_margin
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, Credential] = OrderedDict()
        self._inflight: dict[str, asyncio.Task[Credential]] = {}

    async def get(self, key: str, fetch: Callable[[], Awaitable[Credential]]) -> str:
        now = self.clock()
        entry = self._entries.get(key)
        if entry is not None and now < entry.expires_at:
            self._entries.move_to_end(key)
            if now >= entry.expires_at - self.refresh_margin and key not in self._inflight:
                task = self._start(key, fetch)
                task.add_done_callback(self._log_failure)
            return entry.value
        task = self._inflight.get(key) or self._start(key, fetch)
        return (await asyncio.shield(task)).value

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)

    async def close(self) -> None:
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _start(self, key: str, fetch: Callable[[], Awaitable[Credential]]) -> asyncio.Task[Credential]:
        async def run() -> Credential:
            try:
                credential = await fetch()
                self._entries[key] = credential
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
                return credential
            finally:
                self._inflight.pop(key, None)

        task = asyncio.get_running_loop().create_task(run())
        self._inflight[key] = task
        return task

    @staticmethod
    def _log_failure(task: asyncio.Task[Credential]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.warning("background credential refresh failed (the current one is kept): %s",
                        mask_secrets(str(task.exception())))


_PROCESS_CACHE: CredentialCache | None = None


def process_credentials() -> CredentialCache:
    """The cache shared by everything in this process (relay, channel tests, balance jobs)."""
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None:
        _PROCESS_CACHE = CredentialCache()
    return _PROCESS_CACHE
