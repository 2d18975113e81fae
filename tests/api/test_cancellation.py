"""A long-lived loop stops when it is cancelled even if the cancellation is lost inside a Redis call
(api/services/cancellation.py: redis-py's asyncio client sometimes answers a cancelled task normally),
instead of going on forever while whoever cancelled it waits. The lost cancellation is reproduced by a
step that swallows it, as such a call does."""
from __future__ import annotations

import asyncio
import contextlib

import pytest

from api.relay.load import Load
from api.services.billing.reservations import ReservationKeeper
from api.services.cancellation import raise_if_cancelled
from api.services.store import Store


async def losing_the_cancel(entered: asyncio.Event) -> None:
    """The first call waits until cancelled and loses the cancellation; later ones wait to be cancelled."""
    if entered.is_set():
        await asyncio.Event().wait()
    entered.set()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()  # until cancelled; the cancellation goes no further


async def stops_when_cancelled(task: asyncio.Task | None) -> None:
    assert task is not None
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=20)  # a bound, not a wait: it ends at once or never
    assert done, "the loop went on after its cancellation was lost"


async def test_raise_if_cancelled_raises_only_for_a_cancelled_task() -> None:
    raise_if_cancelled()  # not cancelled: nothing
    entered = asyncio.Event()

    async def step() -> str:
        await losing_the_cancel(entered)
        raise_if_cancelled()
        return "went on"

    task = asyncio.create_task(step())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_reservation_keeper_stops_though_its_cancellation_was_lost(settings, monkeypatch) -> None:
    store = Store.from_settings(settings)
    keeper = ReservationKeeper(store, ttl_ms=60_000, interval=0)
    entered = asyncio.Event()

    async def renew(now_ms: int | None = None) -> int:
        await losing_the_cancel(entered)
        return 0

    monkeypatch.setattr(keeper, "renew", renew)
    keeper.start()
    await entered.wait()
    await stops_when_cancelled(keeper._task)
    await keeper.stop()
    await store.close()


async def test_the_inflight_sync_stops_though_its_cancellation_was_lost(settings, monkeypatch) -> None:
    store = Store.from_settings(settings)
    sync = Load(store, interval=0)
    entered = asyncio.Event()

    async def one_sync() -> None:
        await losing_the_cancel(entered)

    monkeypatch.setattr(sync, "sync", one_sync)
    sync.start()
    await entered.wait()
    await stops_when_cancelled(sync._task)
    await sync.close()
    await store.close()
