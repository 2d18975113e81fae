"""Dramatiq's Redis broker, its consumers woken by a message instead of polling for one.

Dramatiq's Redis consumer asks Redis for messages (its `fetch` script) and, finding none, sleeps
5, 10, 20 … ms up to the worker timeout (1 s) before asking again: a consumer that just took a
message polls four or five times before the next one comes, an idle one about once a second, and
a message sent to an idle worker waits up to that second before it is taken. Every queue and its
delay queue have a consumer in each worker process (18 here), so the polls were most of an idle
worker's CPU and, under load, more of it than the settlements it applies.

Here an enqueue also pushes a token onto the queue's wake list (`<namespace>:<queue>.wake`,
at most WAKE_CAP tokens, expiring); a consumer that found nothing waits on that list (BLPOP) for
up to the worker timeout, and fetches at once when a token comes. A message is taken as soon as
it is sent; the fetches per message drop to one or two; a token nobody waited for costs one empty
fetch. Messages that reach a queue without an enqueue (Dramatiq's maintenance moving a dead
worker's messages back) are found by the wait's timeout, as before. A consumer whose prefetched
messages are all still running does not wait on the list (nothing could be fetched): it backs off
as Dramatiq's does, until one is acknowledged.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import redis
from dramatiq.broker import MessageProxy
from dramatiq.brokers.redis import RedisBroker, _RedisConsumer
from dramatiq.common import compute_backoff
from dramatiq.errors import ConnectionClosed
from dramatiq.message import Message

log = logging.getLogger(__name__)
WAKE_CAP = 64  # tokens kept per queue: more than any burst needs to wake every waiting consumer
WAKE_TTL_MS = 60_000  # a list nobody reads goes away


class WakingRedisBroker(RedisBroker):
    """RedisBroker whose enqueues wake the queue's waiting consumer (module docstring)."""

    def __init__(self, **parameters: Any) -> None:  # RedisBroker's (url, namespace, middleware, …)
        super().__init__(**parameters)  # type: ignore[no-untyped-call]  # RedisBroker has no annotations

    @property
    def consumer_class(self) -> type[_RedisConsumer]:
        return WakingConsumer

    def wake_key(self, queue_name: str) -> str:
        return f"{self.namespace}:{queue_name}.wake"

    def enqueue(self, message: Message[Any], *, delay: int | None = None) -> Message[Any]:
        enqueued: Message[Any] = super().enqueue(message, delay=delay)  # queue_name: its delay queue when delayed
        self.wake(enqueued.queue_name)
        return enqueued

    def wake(self, queue_name: str) -> None:
        """One token on the queue's wake list. A failure here leaves the message to the consumers'
        timed fetch (it is enqueued already): never an error for the sender."""
        key = self.wake_key(queue_name)
        try:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.lpush(key, 1)
                pipe.ltrim(key, 0, WAKE_CAP - 1)
                pipe.pexpire(key, WAKE_TTL_MS)
                pipe.execute()
        except redis.RedisError as exc:
            log.debug("wake of %s not sent: %s", queue_name, exc)

    def wait_for_wake(self, queue_name: str, timeout_ms: int) -> bool:
        """Wait up to `timeout_ms` for a token on the queue's wake list; whether one came."""
        try:
            return self.client.blpop([self.wake_key(queue_name)], timeout=max(timeout_ms, 1) / 1000) is not None
        except redis.TimeoutError:  # a socket timeout below the wait (a BROKER_URL's socket_timeout)
            return False


class WakingConsumer(_RedisConsumer):
    """Dramatiq's Redis consumer, its sleep between empty fetches replaced by the wait for a token."""

    broker: WakingRedisBroker

    def __next__(self) -> MessageProxy | None:
        try:
            waited = False
            while True:
                if self.message_cache:
                    data = self.message_cache.pop(0)
                    if data is None:  # as Dramatiq's own consumer: skipped (its issue #266)
                        continue
                    self.misses = 0
                    message = Message.decode(data)
                    self.queued_message_ids.add(message.message_id)
                    return MessageProxy(message)
                if self.outstanding_message_count >= self.prefetch:
                    # Every prefetched message is still running: nothing may be fetched until one is
                    # acknowledged (by a worker thread), so back off as Dramatiq's consumer does.
                    self.misses, backoff_ms = compute_backoff(self.misses, max_backoff=self.timeout)
                    time.sleep(backoff_ms / 1000)
                    return None
                self.message_cache = self.broker.do_fetch(self.queue_name,
                                                          self.prefetch - self.outstanding_message_count)
                if self.message_cache:
                    continue
                # One wait per call at most: the consumer thread then looks at its state (stopping,
                # its delayed messages' due times) at least once per worker timeout, as it did.
                if waited or not self.broker.wait_for_wake(self.queue_name, self.timeout):
                    return None
                waited = True
        except redis.ConnectionError as e:
            raise ConnectionClosed(e) from None
