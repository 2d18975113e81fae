"""`python -m scheduler`: APScheduler that only enqueues actors, with one leader at a time.

Every instance keeps a timer; only the holder of the Redis leader lock sends. The leader renews the
lock every LEADER_TTL/3 seconds; when it dies, the lock expires and another instance takes over
within LEADER_TTL seconds.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from api.resources import Resources, open_resources
from api.services import locks, redis_keys
from api.services.store import Store
from models.settings import Settings
from scheduler.jobs import JOBS, Timed
from workers.broker import send, setup_broker

log = logging.getLogger("scheduler")


class Leadership:
    """The leader holds a lock whose token is its identity (api.services.locks)."""

    def __init__(self, store: Store, key: str, ttl: float) -> None:
        self.store = store
        self.key = key
        self.ttl = ttl
        self.identity = f"{socket.gethostname()}:{os.getpid()}"
        self.is_leader = False

    async def refresh(self) -> bool:
        if self.is_leader:
            self.is_leader = await locks.refresh(self.store, self.key, self.identity, self.ttl)
        if not self.is_leader:
            self.is_leader = await locks.acquire(self.store, self.key, self.ttl, token=self.identity) is not None
            if self.is_leader:
                log.info("became the leader (%s)", self.identity)
        return self.is_leader


async def run(settings: Settings, jobs: tuple[Timed, ...] = JOBS) -> None:
    setup_broker(settings)
    # Only the store and the jobs are used: no database (this process never touches it), no events.
    async with open_resources(settings, send=send, database=False) as resources:
        await _schedule(resources, jobs)


async def _schedule(resources: Resources, jobs: tuple[Timed, ...]) -> None:
    store = resources.store
    client = store.redis
    ttl = resources.settings.scheduler_leader_ttl
    leader = Leadership(store, redis_keys.scheduler_leader(store), ttl)
    beat_key = redis_keys.heartbeat(store, "scheduler")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def make_tick(job: Timed) -> Callable[[], Awaitable[None]]:
        async def tick() -> None:
            if not leader.is_leader:
                return
            try:
                await resources.jobs.send(job.actor, time.time(), leader.identity)
            except Exception:
                log.exception("could not enqueue %s", job.actor)
        return tick

    async def keep_leadership() -> None:
        try:
            if await leader.refresh():
                await client.set(beat_key, f"{time.time():.3f}", ex=600)
        except Exception:
            leader.is_leader = False
            log.exception("leader lock refresh failed")

    scheduler = AsyncIOScheduler(job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 30})
    scheduler.add_job(keep_leadership, "interval", seconds=max(ttl / 3, 0.2), id="leadership")
    scale = resources.settings.scheduler_interval_scale
    for job in jobs:
        scheduler.add_job(make_tick(job), "interval", seconds=job.seconds * scale, id=job.id)
    await keep_leadership()
    scheduler.start()
    log.info("scheduler started with %d jobs", len(jobs))
    await stop.wait()
    scheduler.shutdown(wait=False)
    if leader.is_leader:  # hand over at once on a clean stop
        await locks.release(store, leader.key, leader.identity)


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # one line per tick otherwise
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
