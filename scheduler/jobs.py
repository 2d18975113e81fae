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
    # Channel health: each actor checks its own interval option and last run in Redis.
    Job("channel-test", "channel.test_all", 60),
    Job("channel-balance", "channel.update_balances", 60),
    Job("channel-probe", "channel.probe_disabled", 30),
    Job("channel-notify", "channel.notify_root", 60),
    Job("logs-purge", "logs.purge", 600),
    # Billing: settlement records whose billing.apply was lost (a process that died).
    Job("billing-sweep", "billing.sweep", 30),
    # Tasks: one poll per platform; workers claim leased batches, so a slow poll never blocks the next.
    Job("task-poll-midjourney", "tasks.poll_midjourney", 15),
    Job("task-poll-suno", "tasks.poll_suno", 15),
)
