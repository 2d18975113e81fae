"""The Dramatiq broker: one builder, one ordered middleware list.

Actors are named "domain.verb" and consume the queue named after their domain, so a sender that
knows only an actor's name (the API, the scheduler) can enqueue it without importing the actor.
"""
from __future__ import annotations

from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import (
    AgeLimit,
    AsyncIO,
    Callbacks,
    Pipelines,
    Retries,
    ShutdownNotifications,
    TimeLimit,
)

from api.services import redis_keys
from models.settings import Settings

from .middleware import ParentWatch, ResourcesMiddleware, ShutdownGuard

_broker: RedisBroker | None = None
SHUTDOWN_TIMEOUT_MS = 30_000  # --worker-shutdown-timeout: running messages get this long to finish


def queue_of(actor_name: str) -> str:
    return actor_name.split(".", 1)[0]


def build_broker(settings: Settings) -> RedisBroker:
    middleware = [
        AgeLimit(max_age=3_600_000),  # drop a message that waited over an hour (actors resend what matters)
        TimeLimit(time_limit=600_000),  # no actor runs longer than 10 minutes
        ShutdownNotifications(),  # actors can see a shutdown coming
        Callbacks(),  # on_success / on_failure hooks
        Pipelines(),  # pipe_target chaining
        Retries(max_retries=5, min_backoff=500, max_backoff=60_000),  # per-actor max_retries overrides
        AsyncIO(),  # one event-loop thread per worker process (started in before_worker_boot)
        # The process's resources (api.resources: database, Redis store, events, options, HTTP session, jobs)
        # on that loop; before_* hooks run in list order, so after AsyncIO.
        ResourcesMiddleware(settings, send),
        # Repeated stop signals ignored, a stop bounded in time. Resources close in after_worker_shutdown,
        # which runs in reverse list order: ResourcesMiddleware (jobs, HTTP session, events, Redis, then the
        # database), then AsyncIO stops the loop.
        ShutdownGuard(grace=SHUTDOWN_TIMEOUT_MS / 1000 + 15),
        ParentWatch(),  # a worker process whose main process was killed stops (a new one replaces it)
    ]
    return RedisBroker(url=settings.broker_url or settings.redis_url,
                       namespace=redis_keys.dramatiq_namespace(settings.redis_prefix), middleware=middleware)


def setup_broker(settings: Settings | None = None) -> RedisBroker:
    """Build and install the global broker once per process (actors bind to it at import)."""
    global _broker
    if _broker is None:
        _broker = build_broker(settings or Settings.from_env())
        dramatiq.set_broker(_broker)
    return _broker


def send(actor_name: str, *args: object, delay_ms: int | None = None, **kwargs: object) -> dramatiq.Message[Any]:
    """Enqueue by name (synchronous Redis I/O: call it off the event loop)."""
    broker = setup_broker()
    message: dramatiq.Message[Any] = dramatiq.Message(queue_name=queue_of(actor_name), actor_name=actor_name,
                                                      args=args, kwargs=kwargs, options={})
    return broker.enqueue(message, delay=delay_ms)
