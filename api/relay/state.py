"""The relay's per-process state, created by api.relay.lifetime's cleanup context."""
from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from api.channels.health import ChannelHealth
from api.channels.index import ChannelIndex
from api.mcp.hub import McpHub
from api.relay.affinity import Pins
from api.relay.auth import KeyAuth
from api.relay.disconnects import DisconnectWatcher
from api.relay.fallback_sticky import StickyModels
from api.relay.kept_reasoning import KeptReasoning
from api.relay.load import Load
from api.services.billing.quota import QuotaService
from api.services.billing.reservations import ReservationKeeper
from api.services.billing.settlement_sender import SettlementSender
from api.services.configuration.options import OptionsService
from api.services.jobs import Jobs
from api.services.store import Store
from api.upstream.credentials import CredentialCache, process_credentials
from api.upstream.metrics import Metrics
from models.settings import Settings


@dataclass
class NativeRouteMarks:
    """Channels found without a client format's own endpoint (api/relay/responses_support.py), as
    this process knows them: `<channel id>:<path>` → (base URL, marked at), and when each was read."""

    missing: dict[str, tuple[str, float]] = field(default_factory=dict)
    read_at: dict[str, float] = field(default_factory=dict)


@dataclass
class RelayState:
    index: ChannelIndex
    auth: KeyAuth
    quota: QuotaService
    settlements: SettlementSender
    keeper: ReservationKeeper
    # The root application's options, settings and upstream HTTP session, looked up once here: a
    # request of a sub-application reaches them through a ChainMapProxy that raises KeyError first.
    options: OptionsService
    settings: Settings
    http: aiohttp.ClientSession
    queues: Store  # the Redis of the workers' queues (BROKER_URL), for their depth in /metrics
    health: ChannelHealth = field(default_factory=ChannelHealth)
    metrics: Metrics = field(default_factory=Metrics)
    background: set[asyncio.Task[object]] = field(default_factory=set)
    disconnects: DisconnectWatcher = field(default_factory=DisconnectWatcher)  # clients that left
    credentials: CredentialCache = field(default_factory=process_credentials)  # exchanged upstream tokens
    native_routes: NativeRouteMarks = field(default_factory=NativeRouteMarks)
    load: Load = field(default_factory=lambda: Load(None))  # requests in flight, latency (api/relay/load.py)
    pins: Pins | None = None  # sessions' channels and keys (api/relay/affinity.py); None: no affinity
    reasoning: KeptReasoning | None = None  # state kept for clients that drop it (api/relay/kept_reasoning.py)
    sticky: StickyModels | None = None  # the model each session fell back to (api/relay/fallback_sticky.py)
    mcp: McpHub | None = None  # the registered MCP servers and the client to them (api/mcp)
    jobs: Jobs | None = None  # the workers' messages (error log rows of MCP calls)
    # running tool calls of /mcp, by session and request id (api/relay/mcp/cancels.py)
    mcp_calls: dict[str, asyncio.Task[Any]] = field(default_factory=dict)

    def spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        """Fire-and-forget work off the request path (kept referenced until it ends)."""
        task = asyncio.get_running_loop().create_task(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


RELAY = web.AppKey("relay", RelayState)


def relay_state(request: web.Request) -> RelayState:
    return request.config_dict[RELAY]
