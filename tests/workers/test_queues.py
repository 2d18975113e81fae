"""The queue table (api.services.queues) is the actors' own: every actor consumes a queue of it, the one
its name's domain gives (what a sender by name enqueues to)."""
from __future__ import annotations

import dramatiq

import workers.actors  # noqa: F401  (declares every actor)
from api.services.queues import Queue
from workers.broker import queue_of


def test_every_actor_consumes_a_queue_of_the_table_named_after_its_domain() -> None:
    actors = [dramatiq.get_broker().get_actor(name) for name in dramatiq.get_broker().get_declared_actors()]
    assert actors
    assert sorted((a.actor_name, a.queue_name) for a in actors if a.queue_name not in set(Queue)) == []
    assert [a.actor_name for a in actors if queue_of(a.actor_name) != a.queue_name] == []


def test_every_queue_of_the_table_has_an_actor() -> None:
    used = {dramatiq.get_broker().get_actor(name).queue_name for name in dramatiq.get_broker().get_declared_actors()}
    assert set(Queue) == used
