# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""What an upstream reports about its tasks cannot break a poll: NUL characters, values of the wrong
type or past the columns' range are dropped or cut, each row is applied on its own (one that cannot be
written does not hold up the batch), and a failed fetch is logged with the channel's key masked."""
from __future__ import annotations

import logging

from api import keys
from api.relay.tasks.poll import MIDJOURNEY, SUNO, poll
from api.upstream.catalogue import ChannelType
from models import Midjourney, Task
from tests.helpers import both_databases
from tests.relay.fakes import add_channel, gateway, make_key, rich_user  # noqa: F401
from tests.upstream.providers.fake_tasks import MJ_SECRET, SUNO_KEY


async def submitted(gateway, path: str, n: int, body: dict, answer_key: str, name: str = "alice") -> list[str]:
    user = await rich_user(name, quota=10_000_000)
    key = await make_key(user)
    ids = []
    for _ in range(n):
        resp = await gateway.post(path, json=body, headers={"Authorization": f"Bearer sk-{key.key}"})
        ids.append((await resp.json())[answer_key])
    return ids


@both_databases
async def test_odd_upstream_values_do_not_break_a_poll(gateway, proxy, suno_api) -> None:
    await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY), base_url=proxy.url,
                      key=MJ_SECRET)
    await add_channel(gateway, None, models="suno_music", type=int(ChannelType.SUNO), base_url=suno_api.url,
                      key=SUNO_KEY, name="suno")
    odd, plain = await submitted(gateway, "/mj/submit/imagine", 2, {"prompt": "a fox"}, "result")
    proxy.finish(odd, "IN_PROGRESS\x00", progress="\x0050%", description="half\x00way", failReason={"a": [1]},
                 promptEn="fox\x00", imageUrl="http://cdn.example/\x00.png", startTime=2**70, finishTime="soon",
                 properties={"note": "n\x00ul", "deep": [[[[{"x": "\x00"}]]]]}, buttons="not a list")
    proxy.finish(plain, "SUCCESS", progress="100%", imageUrl="http://cdn.example/a.png")
    store, http = gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP]
    await poll(MIDJOURNEY, store, http)
    row = await Midjourney.get(mj_id=odd)
    assert (row.status, row.description, row.prompt_en, row.start_time) == ("IN_PROGRESS", "halfway", "fox", 0)
    assert "\x00" not in row.properties + row.image_url + row.fail_reason + row.progress
    assert (await Midjourney.get(mj_id=plain)).status == "SUCCESS"
    [song] = await submitted(gateway, "/suno/submit/music", 1, {"prompt": "a song"}, "data", name="bob")
    suno_api.tasks[song].update(status="failed\x00", fail_reason="bad\x00", progress=[1], start_time=2**64,
                                data=[{"id": "c\x00"}])
    await poll(SUNO, store, http)
    task = await Task.get(task_id=song)
    assert (task.status, task.fail_reason, task.start_time) == ("FAILURE", "bad", 0) and "\x00" not in task.data


async def test_a_failed_fetch_is_logged_without_the_key(gateway, proxy, caplog) -> None:
    await add_channel(gateway, None, models="mj_imagine", type=int(ChannelType.MIDJOURNEY), base_url=proxy.url,
                      key=MJ_SECRET)
    await submitted(gateway, "/mj/submit/imagine", 1, {"prompt": "a fox"}, "result")
    proxy.fetch_error = f"invalid mj-api-secret {MJ_SECRET}"
    with caplog.at_level(logging.WARNING, logger="api.relay.tasks.poll"):
        result = await poll(MIDJOURNEY, gateway.server.app[keys.STORE], gateway.server.app[keys.HTTP])
    assert result.claimed == 1 and result.updated == 0
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "invalid mj-api-secret" in logged and MJ_SECRET not in logged, logged
