"""workers.waking: an enqueue wakes the queue's waiting consumer (a Redis of the test's own).

The consumers here wait up to 30 s for a token, longer than any test waits: a message they return
came by its wake, never by the wait's timeout."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis as sync_redis
from dramatiq import Message

from tests.helpers import eventually
from workers.waking import WAKE_CAP, WakingRedisBroker

LONG = 30_000  # ms: the consumers' wait for a token


@pytest.fixture
def broker(own_redis) -> Iterator[WakingRedisBroker]:
    broker = WakingRedisBroker(url=own_redis.url, namespace="wake-test", middleware=[])
    broker.declare_queue("q")
    yield broker
    broker.client.close()


def message(n: int = 0) -> Message[Any]:
    return Message(queue_name="q", actor_name="job", args=(n,), kwargs={}, options={})


def test_an_enqueue_leaves_a_bounded_expiring_token(broker) -> None:
    for n in range(WAKE_CAP + 10):
        broker.enqueue(message(n))
    key = broker.wake_key("q")
    assert broker.client.llen(key) == WAKE_CAP
    assert 0 < broker.client.pttl(key) <= 60_000
    broker.enqueue(message(), delay=60_000)
    assert broker.client.llen(broker.wake_key("q.DQ")) == 1  # a delayed message wakes its delay queue


async def test_a_waiting_consumer_takes_a_message_as_soon_as_it_is_sent(broker, own_redis) -> None:
    consumer = broker.consume("q", prefetch=4, timeout=LONG)
    fetches = 0
    fetch = broker.do_fetch

    def counted_fetch(*args: Any) -> Any:
        nonlocal fetches
        fetches += 1
        return fetch(*args)

    broker.do_fetch = counted_fetch
    admin = sync_redis.Redis(port=own_redis.port)
    taken: list[Any] = []
    for n in range(5):
        worker = threading.Thread(target=lambda: taken.append(next(consumer)), daemon=True)
        worker.start()

        async def waiting() -> bool:
            return admin.info("clients")["blocked_clients"] == 1

        await eventually(waiting)  # the consumer found nothing and waits on the wake list
        broker.enqueue(message(n))
        await eventually(lambda thread=worker: _done(thread))
        assert taken[-1] is not None and taken[-1].args == (n,)
        consumer.ack(taken[-1])
    assert fetches == 2 * 5  # per message: the empty fetch before the wait, the one after the wake
    admin.close()


async def _done(thread: threading.Thread) -> bool:
    return not thread.is_alive()


def test_a_failed_wake_leaves_the_message_enqueued(broker, monkeypatch) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise sync_redis.ConnectionError("gone")

    monkeypatch.setattr(broker.client, "pipeline", broken)
    sent = broker.enqueue(message(7))  # no error for the sender
    consumer = broker.consume("q", prefetch=1, timeout=LONG)
    got = next(consumer)
    assert got is not None and got.message_id == sent.message_id


def test_a_consumer_whose_prefetch_is_running_backs_off_without_waiting(broker, monkeypatch) -> None:
    broker.enqueue(message(1))
    broker.enqueue(message(2))
    consumer = broker.consume("q", prefetch=1, timeout=LONG)
    first = next(consumer)
    assert first is not None

    def no_wait(*_args: Any) -> bool:
        raise AssertionError("waited on the wake list with its prefetch full")

    monkeypatch.setattr(broker, "wait_for_wake", no_wait)
    assert next(consumer) is None  # the one message it may hold is still running
    consumer.ack(first)
    second = next(consumer)
    assert second is not None and second.args == (2,)
