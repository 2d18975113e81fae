# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A Realtime response in progress checkpoints its output in its reservation (api/relay/realtime/progress.py),
written by the process's reservation renewals: the transcript's tokens and the audio by its length as they are
relayed; the next response's reservation starts at zero; a settlement sent again while Redis is unreachable
keeps its own output as its checkpoint, not the output of the response that follows."""
from __future__ import annotations

import base64

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from websockets.exceptions import ConnectionClosed

from api.relay.realtime.progress import AUDIO_CHARS_PER_TOKEN
from api.upstream.tokenizer import count_text
from models import Log
from models.enums import LogType
from tests.helpers import eventually
from tests.relay.fakes import add_channel, drain, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.relay.realtime.fake_realtime import REPLY_PIECES
from tests.relay.realtime.realtime_kit import (  # noqa: F401
    MODEL,
    QUOTA_1,
    USAGE_1,
    USER_TEXT,
    open_reservations,
    price_of,
    realtime_fakes,
    sdk,
    sessions_over,
    until,
)

AUDIO = bytes(4800)  # 0.1 s of 24 kHz 16-bit PCM: 2 tokens
AUDIO_TOKENS = len(base64.b64encode(AUDIO)) // AUDIO_CHARS_PER_TOKEN


def estimate(pieces: int) -> int:
    return count_text("".join(REPLY_PIECES[:pieces])) + pieces * AUDIO_TOKENS


async def checkpoints(gateway, user_id: int) -> dict[str, int]:
    """Request id → output checkpointed, after one renewal round of the process's reservations."""
    await relay_of(gateway).keeper.renew()
    held = await open_reservations(gateway, user_id)
    return {k[:-1]: int(v.split("|")[1]) for k, v in held.items() if k.endswith("#")}


async def audio_deltas(conn, n: int) -> None:
    for _ in range(n):
        await until(conn, "response.output_audio.delta")


async def test_a_response_in_progress_is_its_reservation_checkpoint(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1], audio_chunk=AUDIO)
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await until(conn, "session.created")
        assert list((await checkpoints(gateway, user.id)).values()) == [0]  # nothing produced yet
        fake.hold, fake.hold_after = True, 3
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await audio_deltas(conn, 3)
        assert AUDIO_TOKENS == 2 and list((await checkpoints(gateway, user.id)).values()) == [estimate(3)]
        await conn.response.cancel()
        await until(conn, "response.done")  # billed from its usage; the next reservation starts at zero
        assert list((await checkpoints(gateway, user.id)).values()) == [0]
    await sessions_over(gateway)
    assert await open_reservations(gateway, user.id) == {}


async def test_a_settlement_sent_again_keeps_its_own_checkpoint(gateway, realtime_fakes, monkeypatch) -> None:
    fake = await realtime_fakes(usages=[USAGE_1], audio_chunk=AUDIO)
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    quota = relay_of(gateway).quota
    settle, down = quota.settle, True

    async def settle_while_up(*args, **kwargs) -> None:
        if down:
            raise RedisConnectionError("Redis unreachable (test)")
        await settle(*args, **kwargs)

    monkeypatch.setattr(quota, "settle", settle_while_up)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.done")  # its settlement failed: sent again in the background
        first = await checkpoints(gateway, user.id)
        [settling] = [rid for rid, output in first.items() if output]
        assert first == {settling: USAGE_1["output_tokens"], **{rid: 0 for rid in first if rid != settling}}
        fake.hold, fake.hold_after = True, 2
        await conn.response.create()
        await audio_deltas(conn, 2)
        both = await checkpoints(gateway, user.id)
        assert both[settling] == USAGE_1["output_tokens"]  # its own output, not the next response's
        assert sorted(both.values()) == sorted([USAGE_1["output_tokens"], estimate(2)])
        down = False
        await conn.response.cancel()
        await until(conn, "response.done")
    await sessions_over(gateway)

    async def all_closed() -> bool:
        return await open_reservations(gateway, user.id) == {}

    await eventually(all_closed, timeout=30)  # the settlement sent again once Redis answers
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert len(logs) == 2 and logs[0].quota == QUOTA_1


async def test_a_response_the_upstream_cuts_pays_the_output_relayed(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(audio_chunk=AUDIO, hold=True, hold_after=3, drop=True)
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await audio_deltas(conn, 3)
        with pytest.raises(ConnectionClosed):  # the upstream closed mid-response: no response.done
            await until(conn, "response.done")
    await sessions_over(gateway)
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    output = {**USAGE_1, "input_tokens": 0, "output_tokens": estimate(3),
              "input_token_details": {}, "output_token_details": {"audio_tokens": 3 * AUDIO_TOKENS}}
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (0, estimate(3), price_of(gateway, output))
    assert "the response ended before the upstream reported its usage" in (log.other or "")
    assert await open_reservations(gateway, user.id) == {}
