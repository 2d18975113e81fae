# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A channel's key and address never reach users through tasks: fake upstreams quote them in
Midjourney refusals, image-seed answers, task failReason / description / properties (by poll and
by callback), Suno refusals and Suno fail reasons and clip data; what the gateway answers and
stores has them masked."""
from __future__ import annotations

from urllib.parse import urlsplit

import orjson

from api import keys
from api.relay.tasks.poll import MIDJOURNEY, SUNO, poll
from api.upstream.catalogue import ChannelType
from models import Midjourney, Task
from tests.relay.fakes import add_channel, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.upstream.providers.fake_tasks import MJ_SECRET, SUNO_KEY


def leaks(raw: bytes | str, *secrets: str) -> list[str]:
    text = raw.decode() if isinstance(raw, bytes) else raw
    return [s for s in secrets if s in text]


def row_text(row) -> str:
    return orjson.dumps({k: str(v) for k, v in row.__dict__.items() if not k.startswith("_")}).decode()


async def test_midjourney_never_passes_the_channel_key_on(gateway, proxy) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("MjNotifyEnabled", "true")
    await options.update("ServerAddress", "https://gw.example")
    await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY_PLUS), base_url=proxy.url,
                      key=MJ_SECRET)
    user = await rich_user("alice", quota=1_000_000)
    key = await make_key(user)
    headers = {"mj-api-secret": f"sk-{key.key}"}
    said = f"account {MJ_SECRET} at {proxy.url}/mj"
    # A refusal quoting the key (answered as midjourney-proxy's own answer, code 24).
    proxy.code, proxy.refusal = 24, f"banned prompt ({said})"
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "a fox"}, headers=headers)
    raw = await resp.read()
    answer = orjson.loads(raw)
    assert resp.status == 200 and answer["code"] == 24 and "banned prompt" in answer["description"]
    assert leaks(raw, MJ_SECRET, proxy.url) == []
    proxy.code = 1
    resp = await gateway.post("/mj/submit/imagine", json={"prompt": "a fox"}, headers=headers)
    task_id = (await resp.json())["result"]
    # The image seed's answer.
    proxy.seed_answer = {"code": 1, "description": f"seed by {said}", "result": "42", "properties": {"k": MJ_SECRET}}
    resp = await gateway.get(f"/mj/task/{task_id}/image-seed", headers=headers)
    raw = await resp.read()
    assert resp.status == 200 and orjson.loads(raw)["result"] == "42" and leaks(raw, MJ_SECRET, proxy.url) == []
    # A poll that reports the key in failReason, description and properties.
    proxy.finish(task_id, "IN_PROGRESS", progress="50%", description=f"working ({said})",
                 properties={"note": said, "nested": [{"token": MJ_SECRET}]})
    await poll(MIDJOURNEY, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    row = await Midjourney.get(mj_id=task_id)
    assert row.progress == "50%" and "working" in row.description and leaks(row_text(row), MJ_SECRET, proxy.url) == []
    # A callback that does.
    hook = urlsplit(proxy.seen[-1][1]["notifyHook"]).query
    callback = {**proxy.tasks[task_id], "status": "FAILURE", "progress": "100%", "failReason": f"failed: {said}",
                "properties": {"why": said}}
    assert (await gateway.post(f"/mj/notify?{hook}", json=callback)).status == 200
    row = await Midjourney.get(mj_id=task_id)
    assert row.status == "FAILURE" and row.fail_reason.startswith("failed:")
    assert leaks(row_text(row), MJ_SECRET, proxy.url) == []
    for resp in (await gateway.get(f"/mj/task/{task_id}/fetch", headers=headers),
                 await gateway.post("/mj/task/list-by-condition", json={"ids": [task_id]}, headers=headers)):
        raw = await resp.read()
        assert resp.status == 200 and task_id in raw.decode() and leaks(raw, MJ_SECRET, proxy.url) == []


async def test_suno_never_passes_the_channel_key_on(gateway, suno_api) -> None:
    await add_channel(gateway, None, models="suno_music", type=int(ChannelType.SUNO), base_url=suno_api.url,
                      key=SUNO_KEY)
    user = await rich_user("alice", quota=1_000_000)
    key = await make_key(user)
    headers = {"Authorization": f"Bearer sk-{key.key}"}
    said = f"key {SUNO_KEY} of {suno_api.url}"
    suno_api.fail_submit, suno_api.refusal = True, f"no account ({said})"
    resp = await gateway.post("/suno/submit/music", json={"prompt": "a song"}, headers=headers)
    raw = await resp.read()
    assert resp.status == 400 and "no account" in orjson.loads(raw)["message"] and leaks(raw, SUNO_KEY) == []
    assert await live_balance(gateway, user.id) == 1_000_000
    suno_api.fail_submit = False
    resp = await gateway.post("/suno/submit/music", json={"prompt": "a song"}, headers=headers)
    task_id = (await resp.json())["data"]
    suno_api.tasks[task_id].update(status="failed", fail_reason=f"upstream error: {said}",
                                   data=[{"id": "clip-1", "error": said, "meta": {"auth": f"Bearer {SUNO_KEY}"}}])
    await poll(SUNO, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    row = await Task.get(task_id=task_id)
    assert row.status == "FAILURE" and row.fail_reason.startswith("upstream error")
    assert leaks(row_text(row), SUNO_KEY, suno_api.url) == []
    resp = await gateway.get(f"/suno/fetch/{task_id}", headers=headers)
    raw = await resp.read()
    assert orjson.loads(raw)["data"]["data"][0]["id"] == "clip-1" and leaks(raw, SUNO_KEY, suno_api.url) == []
