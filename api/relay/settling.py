"""The end of a relay request: the exact amount settled, or the pre-charge refunded when nothing was
produced, in one Redis call; while Redis is unreachable the settlement is sent again in the
background and the reservation, renewed meanwhile, closes once either way (docs/billing.md,
Settlement, Refunds, Outages)."""
from __future__ import annotations

import asyncio
import logging
import time

from api.middlewares import REDIS_DOWN
from api.relay import kept_reasoning
from api.relay.affinity import Pin, Pins
from api.relay.job import Job, Outcome
from api.services.billing.records import encode_settlement

log = logging.getLogger("api.relay")


# -- 7. settle ----------------------------------------------------------------------------------------


async def settle_shielded(job: Job, outcome: Outcome | None) -> None:
    """The settlement as its own task: a cancelled request still settles or refunds."""
    await asyncio.shield(asyncio.get_running_loop().create_task(settle(job, outcome)))



async def settle(job: Job, outcome: Outcome | None) -> None:
    """The exact amount when output was produced (user and key, one Redis call, record to the
    workers); otherwise the whole pre-charge back to both, and no record. Redis unreachable: the
    settlement is sent again in the background until it answers (the reservation, renewed
    meanwhile with the final output as its checkpoint, closes once either way)."""
    charge, facts, state = job.charge, job.facts, job.state
    if charge is None or facts is None:
        return
    final, record, tokens = 0, None, 0
    if outcome is not None and outcome.produced:
        usage = outcome.usage
        final, tokens, job.produced = outcome.quota, usage.total_tokens, usage.completion_tokens
        record = encode_settlement(facts, outcome.quota, usage)
        state.metrics.input_tokens(facts.channel_id, usage.prompt_tokens, usage.cached_tokens)
    else:
        job.produced = 0
    try:  # with the answer's reasoning state to keep, if any (api/relay/kept_reasoning.py)
        await state.quota.settle(charge, final, record, tokens, kept_reasoning.taken(job))
    except REDIS_DOWN as exc:
        log.warning("settlement of request %s failed (%s): sent again until Redis answers", facts.request_id, exc)
        state.spawn(settle_later(job, final, record, tokens))
        return
    except Exception:
        log.exception("settlement of request %s failed (its reservation is closed by the sweep)", facts.request_id)
        return
    state.keeper.release(facts.request_id)
    if record is not None:
        state.settlements.mark(charge.user_id)
    if job.new_pin is not None and job.session is not None and state.pins is not None:
        await write_pin(state.pins, job.pin_key, job.new_pin, job.session.ttl)


async def write_pin(pins: Pins, key: str, pin: Pin, ttl: int) -> None:
    """A session's new channel and key (api/relay/affinity.py); a pin lost to Redis costs one cache miss."""
    try:
        await pins.write(key, pin, ttl)
    except REDIS_DOWN as exc:
        log.info("affinity pin not written (%s)", exc)


SETTLE_RETRY_FOR = 600.0  # seconds; past that the reservation is left to the sweep


async def settle_later(job: Job, final: int, record: bytes | None, tokens: int) -> None:
    charge, facts, state = job.charge, job.facts, job.state
    assert charge is not None and facts is not None
    delay, deadline = 0.25, time.monotonic() + SETTLE_RETRY_FOR
    while time.monotonic() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 15.0)
        try:
            await state.quota.settle(charge, final, record, tokens)
        except REDIS_DOWN:
            continue
        state.keeper.release(facts.request_id)
        if record is not None:
            state.settlements.mark(charge.user_id)
        log.info("settlement of request %s done after Redis came back", facts.request_id)
        return
    log.error("settlement of request %s still failing after %.0f s: left to the sweep", facts.request_id,
              SETTLE_RETRY_FOR)
