# ruff: noqa: F811  (pytest fixtures imported from tests.relay are test parameters)
"""A Realtime response cut by the death of its API process (SIGKILL) after the client received part of it:
the output relayed so far was its reservation's checkpoint, so the sweep charges it — never nothing, never
more than the whole response would have cost — and the books balance (tests/faults/ledger.py)."""
from __future__ import annotations

import asyncio
import base64
import os
import signal

import aiohttp
import orjson

from api.relay.realtime.progress import AUDIO_CHARS_PER_TOKEN
from api.services import redis_keys
from api.services.billing import pricing
from api.services.billing.realtime_pricing import RealtimeUsage, audio_price_of, realtime_quota
from api.services.configuration.options import OptionsService
from api.services.store import Store
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_text
from models import Channel, Log
from models.enums import LogType
from tests.faults.ledger import accounts, check_books, report
from tests.helpers import eventually
from tests.relay.realtime.fake_realtime import REPLY_PIECES
from tests.relay.realtime.realtime_kit import MODEL, USER_TEXT, realtime_fakes  # noqa: F401

TTL = 60  # RESERVATION_TTL of the API process; the sweep runs with the clock moved past it
AUDIO = bytes(9600)  # 0.2 s of 24 kHz 16-bit PCM after each piece of the transcript: 4 tokens
PIECES = 3  # the upstream stops after this many pieces (and would go on to all of REPLY_PIECES)


async def test_a_realtime_response_cut_by_sigkill_is_billed_for_its_checkpoint(client, settings, api_process,
                                                                                realtime_fakes) -> None:
    fake = await realtime_fakes(audio_chunk=AUDIO, hold=True, hold_after=PIECES)
    await Channel.create(name="realtime", key=fake.key, base_url=fake.url, models=MODEL, type=int(ChannelType.OPENAI))
    books = await accounts(1)
    user, token = books.users[0], books.tokens[0]
    proc, url = await api_process(CHECKPOINT_INTERVAL="0.05", RESERVATION_TTL=str(TTL))
    store = Store.from_url(settings.redis_url, settings.redis_prefix)
    received: list[dict] = []
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(
                f"{url}/v1/realtime?model={MODEL}", headers={"Authorization": f"Bearer sk-{token.key}"}) as ws:
            await ws.send_str(orjson.dumps({"type": "conversation.item.create", "item": USER_TEXT}).decode())
            await ws.send_str(orjson.dumps({"type": "response.create"}).decode())
            while sum(e["type"] == "response.output_audio.delta" for e in received) < PIECES:
                msg = await asyncio.wait_for(ws.receive(), 20)
                assert msg.type == aiohttp.WSMsgType.TEXT, msg
                received.append(orjson.loads(msg.data))
            # what the client received, by the gateway's rule: the transcript's tokens, the audio's length
            text = "".join(e["delta"] for e in received if e["type"] == "response.output_audio_transcript.delta")
            audio = sum(len(e["delta"]) for e in received if e["type"] == "response.output_audio.delta")
            expected = count_text(text) + audio // AUDIO_CHARS_PER_TOKEN
            assert text == "".join(REPLY_PIECES[:PIECES]) and expected > 0
            resv = redis_keys.reservations(store, user.id)

            async def checkpointed() -> int | None:
                entries = await store.redis.hgetall(resv)
                marks = [int(v.split("|")[1]) for k, v in entries.items() if k.endswith("#")]
                return marks[0] if marks and marks[0] == expected else None

            checkpoint = await eventually(checkpointed, timeout=20)
            os.killpg(proc.proc.pid, signal.SIGKILL)  # the process dies mid-response
            await asyncio.to_thread(proc.proc.wait)
        summary = await check_books(store, books, sweep_after=TTL + 1)
        options = OptionsService(store)
        await options.load()
    finally:
        await store.close()
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    price = pricing.resolve_configured(options, MODEL)
    assert (log.prompt_tokens, log.completion_tokens) == (0, checkpoint) and '"incomplete"' in (log.other or "")
    assert log.quota == pricing.settle_quota(price, 0, checkpoint, quota_per_unit=options.get_int("QuotaPerUnit"))
    whole_text = count_text("".join(REPLY_PIECES))
    whole_audio = len(REPLY_PIECES) * (len(base64.b64encode(AUDIO)) // AUDIO_CHARS_PER_TOKEN)
    whole = realtime_quota(price, audio_price_of(options, MODEL),
                           RealtimeUsage(0, whole_text + whole_audio, audio_output_tokens=whole_audio),
                           quota_per_unit=options.get_int("QuotaPerUnit"))
    print(f"charged {log.quota} quota for {checkpoint} tokens checkpointed; the whole response's output: {whole}")
    assert 0 < log.quota <= whole
    assert (summary.logs, summary.orphans, summary.incomplete) == (1, 1, 1)
    report("API process killed (SIGKILL) mid-way through a Realtime response (audio and transcript relayed)",
           f"{PIECES} of {len(REPLY_PIECES)} pieces of transcript and audio, then the connection dropped",
           "the output relayed so far, from the response's checkpoint (audio priced as text output)", summary)
