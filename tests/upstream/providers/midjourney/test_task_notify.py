"""Midjourney callbacks signed per task: a signature moves only the task it was made for, expires,
and the per-channel signatures of before are refused; the callback URL is never shown to anyone
(fetch, list-by-condition, the console's drawing lists, the submission's answer); a callback that
reaches the gateway before the submission's answer is applied once the task row exists; a
malformed channel is a clear 400."""
from __future__ import annotations

import hashlib
import hmac
import time
from urllib.parse import urlsplit

import orjson
import pytest
from aiohttp.test_utils import TestClient

from api import keys
from api.relay.tasks.billing import TaskCharge
from api.relay.tasks.notify import notify_url
from api.relay.tasks.poll import MIDJOURNEY, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Midjourney
from models.enums import Role
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import MJ_SECRET, FakeMidjourney

IMAGINE = pricing.per_call_quota(0.1)
SECRET = "test-session-secret"  # the settings fixture's SESSION_SECRET


@pytest.fixture
async def mj(gateway, proxy):
    """Callbacks on; the gateway's address is its test server's (the fake proxy calls it back)."""
    options = gateway.server.app[keys.OPTIONS]
    await options.update("MjNotifyEnabled", "true")
    await options.update("ServerAddress", f"http://{gateway.server.host}:{gateway.server.port}")
    channel = await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY_PLUS),
                                base_url=proxy.url, key=MJ_SECRET)
    return channel


async def imagine(gateway, key) -> dict:
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "a fox"},
                              headers={"mj-api-secret": f"sk-{key.key}"})
    body = await resp.json()
    assert resp.status == 200 and body["code"] == 1, body
    return body


def hook_of(proxy: FakeMidjourney, task_id: str) -> str:
    """The query of the callback URL the proxy was given for a task."""
    return urlsplit(proxy.tasks[task_id]["properties"]["notifyHook"]).query


async def test_a_signature_moves_only_the_task_it_was_made_for(gateway, proxy, mj) -> None:
    alice, bob = await rich_user("alice", quota=1_000_000), await rich_user("bob", quota=1_000_000)
    alice_key, bob_key = await make_key(alice), await make_key(bob)
    victim = (await imagine(gateway, alice_key))["result"]
    own = (await imagine(gateway, bob_key))["result"]
    # Bob learnt the callback URL of his own task; he posts the victim's task with it.
    forged = {**proxy.tasks[victim], "status": "FAILURE", "progress": "100%", "failReason": "forged"}
    resp = await gateway.post(f"/mj/notify?{hook_of(proxy, own)}", json=forged)
    assert resp.status == 403 and (await resp.json())["code"] == 4
    row = await Midjourney.get(mj_id=victim)
    assert (row.status, row.progress, row.fail_reason) == ("SUBMITTED", "0%", "")
    assert await live_balance(gateway, alice.id) == 1_000_000 - IMAGINE  # no refund of someone else's drawing
    success = {**proxy.tasks[victim], "status": "SUCCESS", "progress": "100%", "imageUrl": "http://evil.example/x.png"}
    resp = await gateway.post(f"/mj/notify?{hook_of(proxy, own)}", json=success)
    assert resp.status == 403
    assert (await Midjourney.get(mj_id=victim)).image_url == ""
    # The victim's own callback URL moves the victim's task.
    resp = await gateway.post(f"/mj/notify?{hook_of(proxy, victim)}", json={**success, "imageUrl": "https://cdn.x/1.png"})
    assert resp.status == 200
    row = await Midjourney.get(mj_id=victim)
    assert (row.status, row.image_url) == ("SUCCESS", "https://cdn.x/1.png")


async def test_expired_and_per_channel_signatures_are_refused(gateway, proxy, mj) -> None:
    alice = await rich_user("alice", quota=1_000_000)
    key = await make_key(alice)
    task_id = (await imagine(gateway, key))["result"]
    row = await Midjourney.get(mj_id=task_id)
    settlement_id = TaskCharge.loads(row.billing).settlement_id
    callback = {**proxy.tasks[task_id], "status": "FAILURE", "progress": "100%", "failReason": "late"}
    expired = urlsplit(notify_url("http://gw", SECRET, mj.id, settlement_id, int(time.time()) - 1)).query
    resp = await gateway.post(f"/mj/notify?{expired}", json=callback)
    assert resp.status == 403
    per_channel = hmac.new(SECRET.encode(), f"mj-notify:{mj.id}".encode(), hashlib.sha256).hexdigest()[:32]
    resp = await gateway.post(f"/mj/notify?channel={mj.id}&sig={per_channel}", json=callback)
    assert resp.status == 403
    other_channel = urlsplit(notify_url("http://gw", SECRET, mj.id + 1, settlement_id, int(time.time()) + 60)).query
    resp = await gateway.post(f"/mj/notify?{other_channel}", json=callback)
    assert resp.status == 200  # that channel has no such task (yet): kept for it, moves nothing here
    assert (await Midjourney.get(mj_id=task_id)).status == "SUBMITTED"
    assert await live_balance(gateway, alice.id) == 1_000_000 - IMAGINE


async def test_the_callback_url_is_never_shown(gateway, proxy, mj) -> None:
    alice = await rich_user("alice", quota=1_000_000)
    key = await make_key(alice)
    headers = {"mj-api-secret": f"sk-{key.key}"}
    task_id = (await imagine(gateway, key))["result"]
    assert "sig=" in proxy.tasks[task_id]["properties"]["notifyHook"]  # the proxy echoes it, as the real one
    proxy.finish(task_id, "IN_PROGRESS", progress="40%")
    await poll(MIDJOURNEY, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    row = await Midjourney.get(mj_id=task_id)
    assert row.progress == "40%" and "sig=" not in row.properties and "notifyHook" not in row.properties
    # The proxy answers an existing task (code 21) with its properties, hook included.
    proxy.code = 21
    answer = await imagine(gateway, key)
    proxy.code = 1
    assert "sig=" not in orjson.dumps(answer).decode()
    # A callback echoing the hook keeps nothing of it either.
    callback = {**proxy.tasks[task_id], "status": "SUCCESS", "progress": "100%",
                "imageUrl": f"{proxy.url}/images/a.png"}
    resp = await gateway.post(f"/mj/notify?{hook_of(proxy, task_id)}", json=callback)
    assert resp.status == 200
    shown = [await (await gateway.get(f"/mj/task/{task_id}/fetch", headers=headers)).read(),
             await (await gateway.post("/mj/task/list-by-condition", json={"ids": [task_id]}, headers=headers)).read()]
    admin = await rich_user("boss", role=Role.ADMIN)
    for user in (alice, admin):
        console = ApiClient(TestClient(gateway.server))
        await console.login(user.username, "password123")
        for path in ("/api/mj/",) if user is admin else ("/api/mj/self",):
            body = await console.get(path)
            assert body["success"] and body["data"]["items"], body
            shown.append(orjson.dumps(body))
        await console.client.session.close()  # its cookie jar only: the server is the gateway's
    for raw in shown:
        assert b"sig=" not in raw and b"notifyHook" not in raw, raw
    assert task_id.encode() in shown[0] and task_id.encode() in shown[1]


async def test_a_callback_before_the_submission_answer_is_applied(gateway, proxy, mj) -> None:
    alice = await rich_user("alice", quota=1_000_000)
    key = await make_key(alice)
    proxy.callback_first = {"status": "IN_PROGRESS", "progress": "15%", "startTime": 1234}
    task_id = (await imagine(gateway, key))["result"]
    assert proxy.callbacks == [200]  # taken, though its task row did not exist yet
    row = await Midjourney.get(mj_id=task_id)
    assert (row.status, row.progress, row.start_time) == ("IN_PROGRESS", "15%", 1234)
    # A failure that comes first is refunded, once, after the charge.
    proxy.callback_first = {"status": "FAILURE", "progress": "100%", "failReason": "banned prompt"}
    task_id = (await imagine(gateway, key))["result"]
    row = await Midjourney.get(mj_id=task_id)
    assert (row.status, row.fail_reason) == ("FAILURE", "banned prompt")
    assert await live_balance(gateway, alice.id) == 1_000_000 - IMAGINE


@pytest.mark.parametrize("channel", ["²", "١", "9" * 5000, "99999999999", "2147483648", "0", "-1", "", "1e3", "+5"])
async def test_a_malformed_channel_is_a_clear_400(gateway, proxy, mj, channel) -> None:
    resp = await gateway.post(f"/mj/notify?channel={channel}&sig=00", json={"id": "1", "status": "SUCCESS"})
    body = await resp.json()
    assert resp.status == 400 and body["code"] == 4 and "channel" in body["description"], body
