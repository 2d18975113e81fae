"""The resources of one process, opened and closed by one async context manager.

Every program (the API, a worker process, the scheduler, the importer) enters `open_resources` once
and reads what it needs from the `Resources` value; what differs between them is said by the
arguments (whether to open the database, listen to events, create the root user; the HTTP pool;
the jobs' thread pool), not by each program building its store, events, options and session anew.

The broker's `send` is given by the program (api.resources is imported by the workers: it cannot
import them).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp

from api.services.configuration.bootstrap import ensure_root_user
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.jobs import Jobs, Send
from api.services.store import Store
from api.upstream.credentials import CredentialCache, process_credentials
from models.db import close_database, init_database
from models.settings import Settings

EVENTS_READY_TIMEOUT = 10.0  # seconds for the events listener to subscribe before the process gives up


@dataclass(frozen=True, slots=True)
class HttpPool:
    """How the process's one ClientSession is built. The defaults are aiohttp's own."""

    timeout: aiohttp.ClientTimeout = aiohttp.ClientTimeout(total=300, sock_connect=30)
    limit: int = 100  # connections open at once; 0 = no limit
    keepalive_timeout: float = 15.0  # seconds an idle connection is kept
    ttl_dns_cache: int | None = 10  # seconds a name's addresses are kept
    # The relay passes bodies on as the upstream sent them (no decompression here) and sends no
    # User-Agent of aiohttp's own.
    passthrough: bool = False

    def session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=self.limit, limit_per_host=0,
                                         keepalive_timeout=self.keepalive_timeout, ttl_dns_cache=self.ttl_dns_cache)
        if self.passthrough:
            return aiohttp.ClientSession(connector=connector, timeout=self.timeout, auto_decompress=False,
                                         skip_auto_headers=("User-Agent",))
        return aiohttp.ClientSession(connector=connector, timeout=self.timeout)


@dataclass(frozen=True, slots=True)
class Resources:
    """What the code of a process acts on, open for as long as the process runs."""

    settings: Settings
    store: Store  # Redis
    events: EventBus  # cross-process cache invalidation
    options: OptionsService  # runtime options (loaded only in a process that listens to events)
    http: aiohttp.ClientSession
    jobs: Jobs  # actor messages sent without blocking the loop
    # The process's one cache of exchanged upstream credentials (the relay and the upstream call
    # reach it through process_credentials()); its refreshes in flight end with the process's loop.
    credentials: CredentialCache


@contextlib.asynccontextmanager
async def open_resources(settings: Settings, *, send: Send, http: HttpPool | None = None, database: bool = True,
                         listen: bool = False, root_user: bool = False,
                         jobs_threads: int = 0) -> AsyncIterator[Resources]:
    """Open this process's resources; closed in reverse order on exit (also when opening fails part way).

    send: the broker's send (workers.broker.send; the program sets its broker up).
    http: the HTTP session's pool and timeouts (aiohttp's defaults when not given).
    database: open the database (the scheduler never touches it).
    listen: run the events listener and load the options, which it keeps current. A process that does
      not listen can publish events; its options hold the defaults and are not to be read.
    root_user: create the root account when there is none (the API, on every start).
    jobs_threads: the jobs' own thread pool of this size; 0 = the loop's default executor.
    """
    async with contextlib.AsyncExitStack() as stack:
        if database:
            await init_database(settings.database_url, timeouts=settings.database_timeouts)
            stack.push_async_callback(close_database)
            if root_user:
                await ensure_root_user(settings.initial_root_password)
        store = Store.from_settings(settings)
        stack.push_async_callback(store.close)
        events = EventBus(store)
        options = OptionsService(store, events)
        if listen:
            listener = asyncio.get_running_loop().create_task(events.run(), name="events")
            stack.push_async_callback(_cancel, listener)
            # Subscribed before the options are read: a change published in between is heard (and
            # reloads them), not lost. Then the listener keeps every cache of this process current.
            await asyncio.wait_for(events.wait_ready(), EVENTS_READY_TIMEOUT)
            await options.load()
        session = (http or HttpPool()).session()
        stack.push_async_callback(session.close)
        credentials = process_credentials()
        stack.push_async_callback(credentials.close)  # before the session its refreshes use
        pool = None
        if jobs_threads:
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs_threads, thread_name_prefix="enqueue")
            stack.callback(pool.shutdown, wait=True)
        yield Resources(settings, store, events, options, session, Jobs(send, pool), credentials)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
