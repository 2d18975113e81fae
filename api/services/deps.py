"""What the account services act on, passed to them explicitly: the API builds one per process at
start-up (`keys.SERVICES`), a worker or a command-line tool builds its own from its resources."""
from __future__ import annotations

from dataclasses import dataclass

from .events import EventBus
from .jobs import Jobs
from .options import OptionsService
from .sessions import SessionManager
from .store import Store


@dataclass(frozen=True, slots=True)
class Services:
    store: Store
    options: OptionsService
    events: EventBus
    sessions: SessionManager
    jobs: Jobs
