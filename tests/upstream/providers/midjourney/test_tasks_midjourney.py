"""Midjourney through the gateway against a fake midjourney-proxy: submissions charged at the
action's price (user and key, to the unit), follow-up actions on the origin task's channel, the
upstream's refusals uncharged, fetch / list-by-condition / image-seed / image proxy, the signed
notify callback, and the drawing options."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from api import keys
from api.relay.tasks.billing import TaskCharge
from api.relay.tasks.notify import notify_signature
from api.relay.tasks.poll import MIDJOURNEY, poll
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Channel, Log, Midjourney, User
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, live_balance, make_key, rich_user
from tests.upstream.providers.fake_tasks import MJ_SECRET, PNG, FakeMidjourney

IMAGINE = pricing.per_call_quota(0.1)  # mj_imagine's default price: 50,000
UPSCALE = pricing.per_call_quota(0.05)


async def mj_channel(gateway, fake: FakeMidjourney, plus: bool = True, **fields) -> Channel:
    return await add_channel(gateway, None, models=",".join(("mj_imagine", "mj_upscale", "mj_variation", "mj_reroll",
                                                             "mj_blend", "mj_describe", "mj_modal", "mj_upload",
                                                             "swap_face")),
                             type=int(ChannelType.MIDJOURNEY_PLUS if plus else ChannelType.MIDJOURNEY),
                             base_url=fake.url, key=MJ_SECRET, **fields)


@pytest.fixture
async def setup(gateway, proxy):
    user = await rich_user("alice", quota=1_000_000)
    key = await make_key(user, remain_quota=200_000, unlimited=False)
    channel = await mj_channel(gateway, proxy)
    return user, key, channel


def mj_headers(key) -> dict[str, str]:
    return {"mj-api-secret": f"sk-{key.key}"}


async def imagine(gateway, key, prompt: str = "a red fox --fast", path: str = "/mj/submit/imagine"):
    resp = await gateway.post(path, json={"prompt": prompt}, headers=mj_headers(key))
    return resp.status, await resp.json()


async def test_imagine_is_charged_its_price_and_recorded(gateway, proxy, setup) -> None:
    user, key, channel = setup
    status, body = await imagine(gateway, key)
    assert status == 200 and body["code"] == 1, body
    task_id = body["result"]
    path, sent = proxy.seen[0]
    assert path == "/mj/submit/imagine" and sent["prompt"] == "a red fox --fast"  # MjModeClearEnabled is off
    row = await Midjourney.get(mj_id=task_id)
    assert (row.user_id, row.token_id, row.channel_id, row.action) == (user.id, key.id, channel.id, "IMAGINE")
    assert (row.status, row.progress, row.quota, row.prompt) == ("SUBMITTED", "0%", IMAGINE, "a red fox --fast")
    assert await live_balance(gateway, user.id) == 1_000_000 - IMAGINE
    assert await live_balance(gateway, user.id, key.id) == 200_000 - IMAGINE
    await drain(gateway)
    [log] = await Log.filter(user_id=user.id, type=LogType.CONSUME)
    assert (log.model_name, log.quota, log.channel_id, log.token_id) == ("mj_imagine", IMAGINE, channel.id, key.id)
    assert orjson.loads(log.other)["task_id"] == task_id and orjson.loads(log.other)["model_price"] == 0.1
    fresh = await User.get(id=user.id)
    assert (fresh.quota, fresh.used_quota, fresh.request_count) == (1_000_000 - IMAGINE, IMAGINE, 1)


async def test_mode_prefix_and_mode_clearing(gateway, proxy, setup) -> None:
    _, key, _ = setup
    await gateway.server.app[keys.OPTIONS].update("MjModeClearEnabled", "true")
    status, body = await imagine(gateway, key, "a cat --relax --ar 3:2", path="/mj-relax/mj/submit/imagine")
    assert status == 200 and body["code"] == 1
    assert proxy.seen[-1] == ("/mj/submit/imagine", {"prompt": "a cat --ar 3:2"})


async def test_refusals_by_the_upstream_are_not_charged(gateway, proxy, setup) -> None:
    user, key, _ = setup
    for code in (23, 24):
        proxy.code = code
        status, body = await imagine(gateway, key)
        assert status == 200 and body["code"] == code and body["description"]  # midjourney-proxy's answer as is
    proxy.code, proxy.http_status = 1, 500
    status, body = await imagine(gateway, key)
    assert status == 502 and body["code"] == 5 and "did not take the task" in body["description"]
    assert await Midjourney.all().count() == 0
    assert await live_balance(gateway, user.id) == 1_000_000
    assert await live_balance(gateway, user.id, key.id) == 200_000
    assert await drain(gateway) == 0
    # Each refusal is an error row for the operator: the upstream's code or status, the channel, no charge.
    from tests.api.test_error_logs import written

    rows = await written(gateway)
    assert [(r.model_name, r.quota, r.channel_id) for r in rows] == [("mj_imagine", 0, setup[2].id)] * 3
    assert [orjson.loads(r.other)["status_code"] for r in rows] == [400, 400, 502]


async def test_queue_full_moves_to_another_channel(gateway, aiohttp_server, proxy, setup) -> None:
    user, key, first = setup
    other = FakeMidjourney()
    other.server = await aiohttp_server(other.app())
    second = await mj_channel(gateway, other, name="second")
    proxy.code = other.code = 1
    # Whichever channel is picked first answers "queue full"; the other takes the task.
    for fake in (proxy, other):
        fake.code = 23
        status, body = await imagine(gateway, key)
        assert status == 200 and body["code"] == 1, body
        row = await Midjourney.get(mj_id=body["result"])
        assert row.channel_id == (second.id if fake is proxy else first.id)
        fake.code = 1
    assert await live_balance(gateway, user.id) == 1_000_000 - 2 * IMAGINE


async def test_key_and_request_errors_in_midjourney_shape(gateway, proxy, setup) -> None:
    _, key, _ = setup
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "x"}, headers={"mj-api-secret": "sk-nope"})
    body = await resp.json()
    assert resp.status == 401 and body["code"] == 4 and "request id" in body["description"]
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "  "}, headers=mj_headers(key))
    assert resp.status == 400 and "prompt is required" in (await resp.json())["description"]
    resp = await gateway.post("/mj/submit/blend", json={"base64Array": ["a"]}, headers=mj_headers(key))
    assert resp.status == 400
    resp = await gateway.post("/mj/submit/change", json={"taskId": "1", "action": "ZOOM", "index": 1},
                              headers=mj_headers(key))
    assert resp.status == 400
    resp = await gateway.get("/mj/nothing-here", headers=mj_headers(key))
    assert resp.status == 404 and resp.content_type == "application/json"
    resp = await gateway.get("/mj-fast/mj/image/unknown")
    assert resp.status == 404 and resp.content_type == "application/json"
    assert proxy.seen == []


async def test_follow_up_goes_to_the_origin_channel_and_needs_a_finished_own_task(
        gateway, aiohttp_server, proxy, setup) -> None:
    user, key, first = setup
    _, body = await imagine(gateway, key)
    origin = body["result"]
    other = FakeMidjourney()
    other.server = await aiohttp_server(other.app())
    await mj_channel(gateway, other, name="second", priority=10)  # preferred for new tasks
    change = {"taskId": origin, "action": "UPSCALE", "index": 2}
    resp = await gateway.post("/mj/submit/change", json=change, headers=mj_headers(key))
    body = await resp.json()
    assert resp.status == 400 and body["error"] == "task_status_not_success", body  # MjActionCheckSuccessEnabled
    proxy.finish(origin, "SUCCESS", progress="100%", imageUrl=f"{proxy.url}/images/{origin}.png")
    await poll(MIDJOURNEY, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    resp = await gateway.post("/mj/submit/change", json=change, headers=mj_headers(key))
    body = await resp.json()
    assert body["code"] == 1, body
    row = await Midjourney.get(mj_id=body["result"])
    assert (row.channel_id, row.action, row.quota) == (first.id, "UPSCALE", UPSCALE)
    assert proxy.seen[-1] == ("/mj/submit/change", change) and other.seen == []
    resp = await gateway.post("/mj/submit/simple-change", json={"content": f"{origin} V1"}, headers=mj_headers(key))
    assert (await resp.json())["code"] == 1 and proxy.seen[-1][0] == "/mj/submit/simple-change"
    resp = await gateway.post("/mj/submit/action", headers=mj_headers(key),
                              json={"taskId": origin, "customId": f"MJ::JOB::reroll::0::{origin}::SOLO"})
    body = await resp.json()
    assert (await Midjourney.get(mj_id=body["result"])).action == "REROLL"
    # Someone else's task is not found; a channel gone makes follow-ups fail clearly.
    bob = await rich_user("bob")
    bob_key = await make_key(bob)
    resp = await gateway.post("/mj/submit/change", json=change, headers=mj_headers(bob_key))
    assert resp.status == 404 and (await resp.json())["error"] == "task_not_found"
    expected = 1_000_000 - IMAGINE - UPSCALE - pricing.per_call_quota(0.1) * 2
    assert await live_balance(gateway, user.id) == expected


async def test_fetch_list_seed_and_image_through_the_gateway(gateway, proxy, setup) -> None:
    _, key, _ = setup
    _, body = await imagine(gateway, key)
    task_id = body["result"]
    resp = await gateway.get(f"/mj/task/{task_id}/fetch", headers=mj_headers(key))
    task = await resp.json()
    assert (task["id"], task["status"], task["progress"], task["action"]) == (task_id, "SUBMITTED", "0%", "IMAGINE")
    proxy.finish(task_id, "SUCCESS", progress="100%", imageUrl=f"{proxy.url}/images/{task_id}.png",
                 buttons=[{"customId": f"MJ::JOB::upsample::1::{task_id}", "label": "U1"}])
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    assert (await poll(MIDJOURNEY, store, http)).updated == 1
    resp = await gateway.post("/mj/task/list-by-condition", json={"ids": [task_id, "other"]}, headers=mj_headers(key))
    [task] = await resp.json()
    assert task["status"] == "SUCCESS" and task["progress"] == "100%" and task["buttons"][0]["label"] == "U1"
    assert task["imageUrl"] == f"http://{gateway.server.host}:{gateway.server.port}/mj/image/{task_id}"
    image = await gateway.get(f"/mj/image/{task_id}")  # no key: image tags cannot send one
    assert image.status == 200 and image.content_type == "image/png" and await image.read() == PNG
    # An image URL elsewhere on a private network is not fetched (only the channel's own host is).
    await Midjourney.filter(mj_id=task_id).update(image_url="http://10.255.0.1/secret.png")
    refused = await gateway.get(f"/mj/image/{task_id}")
    assert refused.status == 400 and "non-public address" in (await refused.json())["description"]
    await Midjourney.filter(mj_id=task_id).update(image_url=f"{proxy.url}/images/{task_id}.png")
    seed = await gateway.get(f"/mj/task/{task_id}/image-seed", headers=mj_headers(key))
    assert (await seed.json())["result"] == "2911893021"
    await gateway.server.app[keys.OPTIONS].update("MjForwardUrlEnabled", "false")
    resp = await gateway.get(f"/mj/task/{task_id}/fetch", headers=mj_headers(key))
    assert (await resp.json())["imageUrl"] == f"{proxy.url}/images/{task_id}.png"


async def test_upload_is_done_at_once_and_plus_routes_need_a_plus_channel(gateway, proxy) -> None:
    user = await rich_user("carol")
    key = await make_key(user)
    await mj_channel(gateway, proxy, plus=False)
    resp = await gateway.post("/mj/submit/upload-discord-images", json={"base64Array": ["data:image/png;base64,AA=="]},
                              headers=mj_headers(key))
    assert resp.status == 503  # no Plus channel serves it
    plus = await mj_channel(gateway, proxy, name="plus")
    resp = await gateway.post("/mj/submit/upload-discord-images", json={"base64Array": ["data:image/png;base64,AA=="]},
                              headers=mj_headers(key))
    assert (await resp.json())["code"] == 1
    row = await Midjourney.get(user_id=user.id)
    assert (row.status, row.progress, row.channel_id, row.action) == ("SUCCESS", "100%", plus.id, "UPLOAD")
    assert row.image_url.endswith("/images/upload.png")


async def test_signed_notify_updates_and_refunds_once(gateway, proxy, setup) -> None:
    user, key, channel = setup
    options = gateway.server.app[keys.OPTIONS]
    await options.update("MjNotifyEnabled", "true")
    await options.update("ServerAddress", "https://gw.example")
    _, body = await imagine(gateway, key)
    task_id = body["result"]
    hook = urlsplit(proxy.seen[-1][1]["notifyHook"])
    query = {k: v[0] for k, v in parse_qs(hook.query).items()}
    row = await Midjourney.get(mj_id=task_id)
    settlement_id = TaskCharge.loads(row.billing).settlement_id
    assert (hook.scheme, hook.netloc, hook.path) == ("https", "gw.example", "/mj/notify")
    assert (query["channel"], query["task"]) == (str(channel.id), settlement_id)  # signed for this one task
    assert query["sig"] == notify_signature(gateway.server.app[keys.SETTINGS].session_secret, channel.id,
                                            settlement_id, int(query["expires"]))
    callback = {**proxy.tasks[task_id], "status": "FAILURE", "progress": "100%", "failReason": "banned by Discord"}
    unsigned = f"/mj/notify?channel={channel.id}&task={settlement_id}&expires={query['expires']}&sig={'0' * 64}"
    resp = await gateway.post(unsigned, json=callback)
    assert resp.status == 403  # unsigned: no one but the upstream may change a task
    resp = await gateway.post(f"/mj/notify?{hook.query}", json=callback, headers=mj_headers(key))
    assert resp.status == 200
    again = await gateway.post(f"/mj/notify?{hook.query}", json=callback)
    assert again.status == 200
    row = await Midjourney.get(mj_id=task_id)
    assert (row.status, row.progress, row.fail_reason) == ("FAILURE", "100%", "banned by Discord")
    assert await live_balance(gateway, user.id) == 1_000_000
    assert await live_balance(gateway, user.id, key.id) == 200_000
    await drain(gateway)
    refunds = await Log.filter(user_id=user.id, type=LogType.SYSTEM)
    assert [(r.quota, r.model_name) for r in refunds] == [(IMAGINE, "mj_imagine")]
    fresh = await User.get(id=user.id)
    assert (fresh.quota, fresh.used_quota, fresh.request_count) == (1_000_000, 0, 1)


async def test_a_failing_channel_moves_the_task_within_the_retries_and_is_not_disabled(
        gateway, aiohttp_server, proxy, setup) -> None:
    """Tasks go through the relay's one retry loop: a 5xx moves the submission to a channel not tried
    yet while RetryTimes allows (charged once, the log names both channels), none left → refused and
    refunded; a task channel's failures never disable it (they are counted for chat channels only)."""
    user, _, first = setup
    key = await make_key(user, unlimited=True)
    other = FakeMidjourney()
    other.server = await aiohttp_server(other.app())
    second = await mj_channel(gateway, other, name="second")
    options = gateway.server.app[keys.OPTIONS]
    await options.update("AutomaticDisableChannelEnabled", "true")
    await options.update("RetryTimes", "1")
    for broken, working in ((proxy, second), (other, first)):
        broken.http_status = 500
        for _ in range(3):  # whichever channel is picked first, the task lands on the working one
            status, body = await imagine(gateway, key)
            assert status == 200 and body["code"] == 1, body
            assert (await Midjourney.get(mj_id=body["result"])).channel_id == working.id
        broken.http_status = 200
    assert await live_balance(gateway, user.id) == 1_000_000 - 6 * IMAGINE
    await options.update("RetryTimes", "0")
    proxy.http_status = other.http_status = 500
    status, body = await imagine(gateway, key)
    assert status == 502 and body["code"] == 5, body
    assert await live_balance(gateway, user.id) == 1_000_000 - 6 * IMAGINE  # the refused one refunded
    assert await drain(gateway) == 6
    logs = await Log.filter(type=LogType.CONSUME).order_by("id")
    assert [log.quota for log in logs] == [IMAGINE] * 6
    assert all(orjson.loads(log.other).get("admin_info", {}).get("use_channel") in ([first.id], [second.id],
                                                                                   [first.id, second.id],
                                                                                   [second.id, first.id])
               for log in logs)
    assert {c.status for c in await Channel.filter(id__in=[first.id, second.id])} == {1}
    assert (await User.get(id=user.id)).quota == 1_000_000 - 6 * IMAGINE
