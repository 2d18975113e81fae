"""Option events name what changed and carry no value: each process reads the value from its own
deployment's store, and deployments sharing a Redis server (same prefix, another database) never
hear each other's events."""
from __future__ import annotations

import asyncio
import contextlib

from api import keys
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.store import Store
from tests.conftest import REDIS_URL
from tests.helpers import eventually


async def test_an_event_cannot_set_an_option(client, settings) -> None:
    app = client.server.app
    store, options, events = app[keys.STORE], app[keys.OPTIONS], app[keys.EVENTS]
    # Another process of this deployment, with its own listener.
    peer_events = EventBus(store)
    peer = OptionsService(store, peer_events)
    await peer.load()
    listener = asyncio.get_running_loop().create_task(peer_events.run())
    await peer_events.wait_ready()
    before = peer.get("SystemName")
    neighbour = Store.from_url(REDIS_URL.rsplit("/", 1)[0] + "/1", settings.redis_prefix)  # same prefix, db 1
    try:
        assert EventBus(neighbour).channel != events.channel
        await EventBus(neighbour).publish("option", key="SystemName", value="pwned by a neighbour")
        await events.publish("option", key="SystemName", value="pwned by a forged event")  # the value is ignored
        await options.update("Notice", "marker")  # a real change, announced after the forged events

        async def marker_seen() -> bool:
            return peer.get("Notice") == "marker"

        await eventually(marker_seen)  # the peer has handled every event before it
        assert peer.get("SystemName") == before
    finally:
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
        await neighbour.close()
