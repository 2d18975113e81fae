"""What the account services act on, passed to them explicitly: the API builds one per process at
start-up (`keys.SERVICES`), a worker or a command-line tool builds its own from its resources."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.jobs import Jobs
from api.services.store import Store


class Sessions(Protocol):
    """Ends a user's console sessions (api.web.sessions.SessionManager)."""

    async def revoke_user(self, user_id: int) -> None: ...


@dataclass(frozen=True, slots=True)
class Services:
    store: Store
    options: OptionsService
    events: EventBus
    sessions: Sessions
    jobs: Jobs
