"""What the channel monitor is given: every I/O dependency, passed in, so nothing in the monitor
(api.channels.monitor, probes, status_mail) knows which process it runs in."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.store import Store

Sender = Callable[..., Awaitable[Any]]  # send(actor_name, *args): enqueue a worker job


@dataclass
class Deps:
    store: Store
    options: OptionsService
    events: EventBus | None
    http: aiohttp.ClientSession
    send: Sender | None = None
