"""The timetable: which actor is enqueued how often. The scheduler only sends; actors do the work.

Jobs whose real period is an option (channel tests, balance updates, log retention) tick here at a
short fixed interval and the actor decides from the option and its last run whether it is due, so
the scheduler never reads the database.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    """Every `seconds`, the leader sends `actor(sent_at: float, sender: str)`."""

    id: str
    actor: str  # "domain.verb"
    seconds: int


JOBS: tuple[Job, ...] = (
    Job("heartbeat", "system.heartbeat", 10),
)
