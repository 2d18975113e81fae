# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Suno through the gateway, and the task pollers: leased batches, success and failure, the hour's
timeout, exact refunds to user and key once per task under two pollers at the same time, a
poller whose lease is still held, and a real worker killed with SIGKILL in the middle of a batch."""
from __future__ import annotations

import asyncio
import os
import signal
import time

import orjson

from api import keys
from api.relay.tasks.poll import MIDJOURNEY, SUNO, claim, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Log, Midjourney, Task, Token, User
from models.enums import LogType
from tests.helpers import both_databases
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.upstream.providers.fake_tasks import MJ_SECRET, SUNO_KEY

MUSIC = pricing.per_call_quota(0.1)
LYRICS = pricing.per_call_quota(0.01)
IMAGINE = pricing.per_call_quota(0.1)


def auth(key) -> dict[str, str]:
    return {"Authorization": f"Bearer sk-{key.key}"}


async def users_and_keys(n: int = 1):
    out = []
    for i in range(n):
        user = await rich_user(f"user{i}", quota=1_000_000)
        out.append((user, await make_key(user, remain_quota=300_000, unlimited=False)))
    return out


async def books_are_back(gateway, user, key, quota: int = 1_000_000, remain: int = 300_000) -> None:
    """Live balances and, once the records are applied, the database: as before the task."""
    assert await live_balance(gateway, user.id) == quota
    assert await live_balance(gateway, user.id, key.id) == remain
    await drain(gateway)
    fresh, token = await User.get(id=user.id), await Token.get(id=key.id)
    assert (fresh.quota, fresh.used_quota) == (quota, 1_000_000 - quota)
    assert (token.remain_quota, token.used_quota) == (remain, 300_000 - remain)


async def test_suno_music_and_lyrics_charged_fetched_polled(gateway, suno_api) -> None:
    [(user, key)] = await users_and_keys()
    channel = await add_channel(gateway, None, models="suno_music,suno_lyrics", type=int(ChannelType.SUNO),
                                base_url=suno_api.url, key=SUNO_KEY)
    resp = await gateway.post("/suno/submit/music", json={"gpt_description_prompt": "a song about foxes"},
                              headers=auth(key))
    body = await resp.json()
    assert body["code"] == "success", body
    music = body["data"]
    assert suno_api.seen[-1] == ("/suno/submit/music", {"gpt_description_prompt": "a song about foxes",
                                                        "mv": "chirp-v3-0"})
    resp = await gateway.post("/suno/submit/lyrics", json={}, headers=auth(key))
    assert resp.status == 400 and (await resp.json())["code"] == "invalid_request"
    resp = await gateway.post("/suno/submit/lyrics", json={"prompt": "foxes"}, headers=auth(key))
    lyrics = (await resp.json())["data"]
    assert await live_balance(gateway, user.id) == 1_000_000 - MUSIC - LYRICS
    row = await Task.get(task_id=music)
    assert (row.platform, row.action, row.status, row.quota, row.channel_id) == ("suno", "MUSIC", "SUBMITTED",
                                                                                  MUSIC, channel.id)
    suno_api.tasks[music].update(status="SUCCESS", finish_time=1700000100,
                                 data=[{"id": "clip1", "audio_url": "https://cdn.example/1.mp3"}])
    suno_api.tasks[lyrics].update(status="processing")
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    result = await poll(SUNO, store, http)
    assert (result.claimed, result.updated, result.refunded) == (2, 1, [])
    resp = await gateway.get(f"/suno/fetch/{music}", headers=auth(key))
    task = (await resp.json())["data"]
    assert (task["status"], task["progress"], task["finish_time"]) == ("SUCCESS", "100%", 1700000100)
    assert task["data"] == [{"id": "clip1", "audio_url": "https://cdn.example/1.mp3"}]
    resp = await gateway.post("/suno/fetch", json={"ids": [music, lyrics, "nope"]}, headers=auth(key))
    assert [t["status"] for t in (await resp.json())["data"]] == ["SUCCESS", "IN_PROGRESS"]
    suno_api.tasks[lyrics].update(status="failed", fail_reason="lyrics rejected")
    result = await poll(SUNO, store, http)
    assert result.refunded == [(await Task.get(task_id=lyrics)).id]
    assert await live_balance(gateway, user.id) == 1_000_000 - MUSIC
    await drain(gateway)
    [refund] = await Log.filter(user_id=user.id, type=LogType.SYSTEM)
    assert (refund.quota, refund.model_name) == (LYRICS, "suno_lyrics")
    assert orjson.loads(refund.other)["reason"] == "lyrics rejected"
    fresh = await User.get(id=user.id)
    assert (fresh.quota, fresh.used_quota, fresh.request_count) == (1_000_000 - MUSIC, MUSIC, 2)
    suno_api.fail_submit = True
    resp = await gateway.post("/suno/submit/music", json={"prompt": "x"}, headers=auth(key))
    body = await resp.json()
    assert resp.status == 400 and "no suno account available" in body["message"]
    assert await live_balance(gateway, user.id) == 1_000_000 - MUSIC


async def _submit_tasks(gateway, proxy, n: int) -> list:
    pairs = await users_and_keys(n)
    await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY), base_url=proxy.url,
                      key=MJ_SECRET)
    for _, key in pairs:
        resp = await gateway.post("/mj/submit/imagine", json={"prompt": "fox"}, headers={"mj-api-secret": key.key})
        assert (await resp.json())["code"] == 1
    return pairs


@both_databases
async def test_two_pollers_at_once_refund_each_failed_task_once(gateway, proxy) -> None:
    pairs = await _submit_tasks(gateway, proxy, 6)
    for task_id in proxy.tasks:
        proxy.finish(task_id, "FAILURE", progress="100%", failReason="Discord said no")
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    first, second = await asyncio.gather(poll(MIDJOURNEY, store, http, limit=4), poll(MIDJOURNEY, store, http, limit=4))
    assert first.claimed + second.claimed == 6  # disjoint batches: nobody polls a task twice
    assert sorted(first.refunded + second.refunded) == [r.id for r in await Midjourney.all().order_by("id")]
    again = await poll(MIDJOURNEY, store, http)
    assert (again.claimed, again.refunded) == (0, [])
    for user, key in pairs:
        await books_are_back(gateway, user, key)
    assert await Log.filter(type=LogType.SYSTEM).count() == 6


async def test_timeout_and_a_lease_still_held(gateway, proxy) -> None:
    [(user, key)] = await _submit_tasks(gateway, proxy, 1)
    row = await Midjourney.get(user_id=user.id)
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    now = int(time.time())
    assert len(await claim(MIDJOURNEY, "a-poller-that-died", now)) == 1
    late = now + 3601  # past the task's hour
    assert (await poll(MIDJOURNEY, store, http, now=now + 1)).claimed == 0  # its lease still holds
    result = await poll(MIDJOURNEY, store, http, now=late)  # the dead poller's lease has expired
    assert result.refunded == [row.id]
    row = await Midjourney.get(id=row.id)
    assert (row.status, row.progress, row.fail_reason) == ("FAILURE", "100%",
                                                           "the upstream task timed out (over 1 hour)")
    await books_are_back(gateway, user, key)


async def test_a_worker_killed_mid_batch_leaves_a_lease_that_expires(gateway, proxy, worker, settings) -> None:
    [(user, key)] = await _submit_tasks(gateway, proxy, 1)
    [task_id] = proxy.tasks
    proxy.finish(task_id, "FAILURE", progress="100%", failReason="no GPU")
    proxy.fetch_gate = asyncio.Event()  # the worker's fetch is held until it has been killed
    from workers.broker import send

    await asyncio.to_thread(send, "tasks.poll_midjourney", time.time(), "test")
    await asyncio.wait_for(proxy.fetch_started.wait(), 30)
    os.killpg(worker.proc.pid, signal.SIGKILL)  # the whole worker: parent and the process running the actor
    worker.proc.wait()
    proxy.fetch_gate.set()
    row = await Midjourney.get(mj_id=task_id)
    assert row.lease_owner and row.progress == "0%"  # claimed, never released
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    assert (await poll(MIDJOURNEY, store, http)).claimed == 0
    result = await poll(MIDJOURNEY, store, http, now=row.lease_until + 1)
    assert result.refunded == [row.id]
    assert (await poll(MIDJOURNEY, store, http, now=row.lease_until + 2)).claimed == 0
    await books_are_back(gateway, user, key)


async def test_a_refund_repeated_after_a_crash_changes_nothing(gateway, proxy) -> None:
    """A poller that refunded and died before marking the row: the next one refunds nothing more."""
    from api.relay.tasks.billing import Refund, TaskCharge, refund

    [(user, key)] = await _submit_tasks(gateway, proxy, 1)
    row = await Midjourney.get(user_id=user.id)
    store = gateway.server.app[keys.STORE]
    item = Refund("mj", row.id, row.mj_id, row.action, user.id, key.id, row.channel_id, row.quota,
                  row.submit_time // 1000, "crashed")
    assert await refund(store, item, TaskCharge.loads(row.billing)) is True
    await drain(gateway)  # applied and gone from the pending records
    assert await refund(store, item, TaskCharge.loads(row.billing)) is False
    [task_id] = proxy.tasks
    proxy.finish(task_id, "FAILURE", progress="100%", failReason="no GPU")
    http = gateway.server.app[keys.HTTP]
    result = await poll(MIDJOURNEY, store, http)
    assert result.failed == 1 and result.refunded == []
    await books_are_back(gateway, user, key)
