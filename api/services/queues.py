"""Every Dramatiq queue, in one table: each actor declares its queue from it and /metrics reports
the depth of each one.

An actor named "domain.verb" consumes the queue named after its domain (workers.broker.queue_of),
so that a sender knowing only the actor's name can enqueue it.
"""
from __future__ import annotations

from enum import StrEnum


class Queue(StrEnum):
    BILLING = "billing"
    RELAY = "relay"
    MAIL = "mail"
    SYSTEM = "system"
    CHANNEL = "channel"
    TASKS = "tasks"
    LOGS = "logs"
    AUDIT = "audit"
    BUDGET = "budget"
