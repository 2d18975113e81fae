# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Input audio transcription in a Realtime session, through the openai SDK's realtime client: each
`conversation.item.input_audio_transcription.completed` is billed as it arrives at the transcription model's
price (not the session model's), a consume log of its own, beside the responses; whisper-1's duration usage by
its transcript's tokens; a transcription model with no price at the session's."""
from __future__ import annotations

import asyncio
import base64
import contextlib

import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.tokenizer import count_text
from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.relay.realtime.fake_realtime import TRANSCRIPT
from tests.relay.realtime.realtime_kit import (  # noqa: F401
    MODEL,
    QUOTA_1,
    USAGE_1,
    USER_TEXT,
    open_reservations,
    realtime_fakes,
    sdk,
    sessions_over,
    until,
)

START = 10_000_000
AUDIO = base64.b64encode(b"\0\1" * 800).decode()
TRANSCRIBED = "conversation.item.input_audio_transcription.completed"


def transcribing(model: str) -> dict:
    return {"type": "realtime", "audio": {"input": {"transcription": {"model": model}}}}


async def speak(conn) -> None:
    await conn.input_audio_buffer.append(audio=AUDIO)
    await conn.input_audio_buffer.commit()
    assert (await until(conn, TRANSCRIBED))[-1].transcript == TRANSCRIPT


def whisper_quota(options) -> int:
    """whisper-1's duration usage: the transcript's tokens as output, as /v1/audio/transcriptions bills."""
    return pricing.settle_quota(pricing.resolve_configured(options, "whisper-1"), 0, count_text(TRANSCRIPT),
                                quota_per_unit=options.get_int("QuotaPerUnit"))


async def consume_logs(user_id: int) -> list[Log]:
    return list(await Log.filter(user_id=user_id, type=LogType.CONSUME).order_by("id"))


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_transcriptions_billed_at_their_model_beside_the_responses(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.session.update(session=transcribing("gpt-4o-transcribe"))
        await until(conn, "session.updated")
        await speak(conn)
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.done")
        await speak(conn)
    await sessions_over(gateway)
    await drain(gateway)
    # gpt-4o-transcribe (MR 1.25, CR 4, AudioRatio 2.4): 7 text + 50 audio in, 11 out:
    # (7 + 50 × 2.4 + 11 × 4) × 1.25 = 171 × 1.25 = 213.75 → 214 = 7×$2.5 + 50×$6 + 11×$10 per 1M tokens.
    first, response, second = await consume_logs(user.id)
    assert [(log.model_name, log.quota) for log in (first, response, second)] == [
        ("gpt-4o-transcribe", 214), (MODEL, QUOTA_1), ("gpt-4o-transcribe", 214)]
    assert (first.prompt_tokens, first.completion_tokens) == (57, 11)
    other = orjson.loads(first.other)
    assert other["model_ratio"] == 1.25 and other["completion_ratio"] == 4
    assert other["realtime"]["transcription"] == 1 and other["realtime"]["session_model"] == MODEL
    assert other["realtime"]["audio_input_tokens"] == 50 and other["realtime"]["audio_ratio"] == 2.4
    assert orjson.loads(second.other)["realtime"]["transcription"] == 2
    assert orjson.loads(response.other)["realtime"]["response"] == 1
    assert await live_balance(gateway, user.id) == START - 214 - QUOTA_1 - 214
    assert await open_reservations(gateway, user.id) == {}


async def test_whisper_by_its_transcript_and_an_unpriced_model_at_the_sessions_price(gateway, realtime_fakes) -> None:
    options = gateway.server.app[keys.OPTIONS]
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.session.update(session=transcribing("whisper-1"))
        await until(conn, "session.updated")
        await speak(conn)
        await conn.session.update(session=transcribing("gpt-realtime-whisper"))  # no price here
        await until(conn, "session.updated")
        await speak(conn)
        await conn.session.update(session={"type": "realtime", "audio": {"input": {"transcription": None}}})
        await until(conn, "session.updated")
        await conn.input_audio_buffer.append(audio=AUDIO)
        await conn.input_audio_buffer.commit()
        await until(conn, "conversation.item.added")  # transcription off: nothing to bill
    await sessions_over(gateway)
    await drain(gateway)
    words = count_text(TRANSCRIPT)
    whisper = whisper_quota(options)
    # 7 text + 50 audio in, 11 out at gpt-realtime-1.5 (MR 2, CR 4, AudioRatio 8): (7 + 400 + 44) × 2 = 902
    assert [(log.model_name, log.quota, log.completion_tokens) for log in await consume_logs(user.id)] == [
        ("whisper-1", whisper, words), (MODEL, 902, 11)]
    assert await live_balance(gateway, user.id) == START - whisper - 902
    assert await open_reservations(gateway, user.id) == {}


async def test_a_cancellation_lost_while_billing_does_not_hold_the_session(gateway, realtime_fakes,
                                                                         monkeypatch) -> None:
    """The client leaves while a transcription is being billed and the cancellation of the upstream direction is
    lost below the billing (as redis-py's client loses one: api/services/cancellation.py): the session still ends, the
    transcription is billed once and the reservation taken after it is refunded."""
    from api.relay.realtime import session as module

    real_admit, entered = module.admit, asyncio.Event()

    async def admit_losing_the_cancel(job):
        entered.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()  # until the session's ending cancels this direction
        return await real_admit(job)

    monkeypatch.setattr(module, "admit", admit_losing_the_cancel)
    options = gateway.server.app[keys.OPTIONS]
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.session.update(session=transcribing("whisper-1"))
        await until(conn, "session.updated")
        await conn.input_audio_buffer.append(audio=AUDIO)
        await conn.input_audio_buffer.commit()
        await asyncio.wait_for(entered.wait(), 20)
    await sessions_over(gateway)
    await drain(gateway)
    whisper = whisper_quota(options)
    assert [(log.model_name, log.quota) for log in await consume_logs(user.id)] == [("whisper-1", whisper)]
    assert await live_balance(gateway, user.id) == START - whisper
    assert await open_reservations(gateway, user.id) == {}
