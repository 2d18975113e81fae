"""The relay's lifetime in one process: the channel index, key cache, quota scripts, settlement sender,
reservation keeper and load counters started before the server listens (the state, api/relay/state.py),
and on shutdown the running requests drained and everything closed."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from api import keys
from api.channels.index import ChannelIndex
from api.mcp.hub import McpHub
from api.relay.affinity import Pins
from api.relay.auth import KeyAuth
from api.relay.fallback_sticky import StickyModels
from api.relay.kept_reasoning import KeptReasoning
from api.relay.load import Load
from api.relay.mcp import cancels
from api.relay.state import RELAY, RelayState
from api.services.billing.quota import QuotaService
from api.services.billing.reservations import ReservationKeeper
from api.services.billing.settlement_sender import SettlementSender
from api.services.store import Store
from api.upstream import catalogue
from api.upstream.tokenizer import get_encoding

log = logging.getLogger("api.relay")
SHUTDOWN_GRACE = 10.0  # seconds background work may take once the server stops


async def relay_ctx(app: web.Application) -> AsyncIterator[None]:
    """Index, key cache, quota scripts and the settlement sender of this process."""
    store, events = app[keys.STORE], app[keys.EVENTS]
    index = ChannelIndex(usable=catalogue.usable)
    index.subscribe(events)
    await index.load()
    auth = KeyAuth(store)
    auth.subscribe(events)
    sender = SettlementSender(app[keys.JOBS].send)
    sender.start()
    # Warm the tokenizer (~0.3 s) in this thread: the server is not listening yet, and loading it in an
    # executor thread would leave that thread's malloc arena with ~2 MiB resident for good.
    get_encoding()
    settings = app[keys.SETTINGS]
    ttl_ms = int(settings.reservation_ttl * 1000)
    keeper = ReservationKeeper(store, ttl_ms, settings.checkpoint_interval)
    keeper.start()
    own_queues = settings.broker_url and settings.broker_url != settings.redis_url
    queues = Store.from_url(settings.broker_url, settings.redis_prefix, 4) if own_queues else store
    load = Load(store)
    load.start()
    mcp = McpHub(app[keys.OPTIONS])
    await mcp.start(events)
    app[RELAY] = RelayState(index=index, auth=auth, quota=QuotaService(store, ttl_ms), settlements=sender,
                            keeper=keeper, options=app[keys.OPTIONS], settings=settings, http=app[keys.HTTP],
                            queues=queues, load=load, pins=Pins(store),
                            reasoning=KeptReasoning(store), sticky=StickyModels(store), mcp=mcp,
                            jobs=app[keys.JOBS])
    events.subscribe(cancels.EVENT, cancels.listener(app[RELAY].mcp_calls))
    yield
    state = app[RELAY]
    if state.background:  # settlements waiting for Redis get a grace; the sweep closes what is left
        _, left = await asyncio.wait(set(state.background), timeout=SHUTDOWN_GRACE)
        for task in left:
            task.cancel()
        if left:
            log.warning("%d settlements still waiting for Redis at shutdown: their reservations are closed "
                        "by the sweep", len(left))
            await asyncio.gather(*left, return_exceptions=True)
    await keeper.stop()
    await load.close()
    await sender.stop()
    await state.disconnects.close()
    await index.close()
    if state.queues is not store:
        await state.queues.close()
    await mcp.close()
    await state.credentials.close()  # refreshes in flight (the cached credentials stay for the process)


async def stop_relay(app: web.Application) -> None:
    """The server stops (listening already closed): running relay requests get SHUTDOWN_TIMEOUT
    seconds to end, then streams end with an error event and waiting requests get 503."""
    await app[RELAY].disconnects.drain(app[keys.SETTINGS].shutdown_timeout)
