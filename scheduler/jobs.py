"""The timetable: which actor is enqueued how often. The scheduler only sends; actors do the work.

Jobs whose real period is an option (channel tests, balance updates, log retention) tick here at a
short fixed interval and the actor decides from the option and its last run whether it is due, so
the scheduler never reads the database.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timed:
    """Every `seconds`, the leader sends `actor(sent_at: float, sender: str)`."""

    id: str
    actor: str  # "domain.verb"
    seconds: int


JOBS: tuple[Timed, ...] = (
    Timed("heartbeat", "system.heartbeat", 10),
    # Channel health: each actor checks its own interval option and last run in Redis.
    Timed("channel-test", "channel.test_all", 60),
    Timed("channel-balance", "channel.update_balances", 60),
    Timed("channel-probe", "channel.probe_disabled", 30),
    Timed("channel-notify", "channel.notify_root", 60),
    Timed("logs-purge", "logs.purge", 600),
    # The audit log: entries a lost message or a killed worker left in Redis; its retention.
    Timed("audit-sweep", "audit.write", 30),
    Timed("audit-purge", "audit.purge", 600),
    # Billing: settlement records whose billing.apply was lost (a process that died).
    Timed("billing-sweep", "billing.sweep", 30),
    # Budgets: soft-limit alerts whose crossing the settlement worker did not send (killed after its commit).
    Timed("budget-sweep", "budget.sweep", 60),
    # Tasks: one poll per platform; workers claim leased batches, so a slow poll never blocks the next.
    Timed("task-poll-midjourney", "tasks.poll_midjourney", 15),
    Timed("task-poll-suno", "tasks.poll_suno", 15),
    Timed("task-poll-video", "tasks.poll_video", 15),
)
