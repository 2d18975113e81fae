"""Channel tags: the list and search filter, POST /api/channel/batch/tag, POST /api/channel/tag/disabled
and /enabled, PUT /api/channel/tag (new-api's shapes); abilities follow, every touched channel's
`channel` event is published, refusals change nothing."""
from __future__ import annotations

import asyncio

import orjson

from api import keys as app_keys
from models import Ability, Channel
from models.enums import ChannelStatus, Role
from tests.helpers import ApiClient, both_databases, eventually, make_user

SECRET = "sk-tagged-upstream-key-0001"
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


async def create(root: ApiClient, name: str, **overrides) -> int:
    body = {"name": name, "type": 1, "key": SECRET, "models": "gpt-4o", "group": "default", **overrides}
    answer = await root.post("/api/channel/", body)
    assert answer["success"], answer
    return answer["data"][0]["id"]


async def statuses(*ids: int) -> list[int]:
    return [(await Channel.get(id=i)).status for i in ids]


async def abilities_enabled(channel_id: int) -> set[bool]:
    return {a.enabled for a in await Ability.filter(channel_id=channel_id)}


@both_databases
async def test_tag_filter_and_batch_tag(client, root: ApiClient) -> None:
    seen: list[int] = []
    client.app[app_keys.EVENTS].subscribe("channel", lambda m: seen.append(m["id"]))
    a, b, c = [await create(root, n) for n in ("alpha", "beta", "gamma")]
    d = await create(root, "delta", tag="team-b")
    body = await root.post("/api/channel/batch/tag", {"ids": [a, c, 999999], "tag": " team-a "})
    assert body == {"success": True, "message": "Set the tag of 2 channels", "data": 2}
    assert [(await Channel.get(id=i)).tag for i in (a, b, c, d)] == ["team-a", "", "team-a", "team-b"]
    await eventually(lambda: asyncio.sleep(0, {a, c} <= set(seen[4:])))

    async def listed(path: str) -> list[int]:
        answer = await root.get(path)
        assert SECRET not in await root.last_response.text()
        return sorted(i["id"] for i in answer["data"]["items"])

    assert await listed("/api/channel/?tag=team-a") == [a, c]
    assert await listed("/api/channel/?tag=team-a&page_size=1&p=1") == [c]  # priority desc, then id
    assert (await root.get("/api/channel/?tag=team-a"))["data"]["total"] == 2
    assert await listed("/api/channel/?tag=nobody") == []
    assert await listed("/api/channel/") == [a, b, c, d]
    assert await listed("/api/channel/search?tag=team-a&keyword=gam") == [c]
    assert await listed("/api/channel/search?tag=team-b") == [d]
    # null (or "") removes the tag.
    assert (await root.post("/api/channel/batch/tag", {"ids": [a], "tag": None}))["data"] == 1
    assert (await Channel.get(id=a)).tag == ""
    for body, message in [({"ids": [], "tag": "x"}, "Please select the channels first"),
                          ({"tag": "x"}, "Please select the channels first"),
                          ({"ids": ["1"], "tag": "x"}, "Invalid parameter: ids"),
                          ({"ids": [a], "tag": 5}, "Invalid parameter: tag"),
                          ({"ids": [a], "tag": "t" * 65}, "A tag is at most 64 characters long")]:
        assert await root.post("/api/channel/batch/tag", body) == {"success": False, "message": message,
                                                                   "data": None}, body
    assert (await Channel.get(id=a)).tag == ""


@both_databases
async def test_disable_and_enable_by_tag(client, root: ApiClient) -> None:
    seen: list[int] = []
    client.app[app_keys.EVENTS].subscribe("channel", lambda m: seen.append(m["id"]))
    on, auto, manual = [await create(root, n, tag="pool") for n in ("on", "auto", "manual")]
    other = await create(root, "other", tag="elsewhere")
    await root.put("/api/channel/", {"id": manual, "status": 2})
    await Channel.filter(id=auto).update(status=ChannelStatus.AUTO_DISABLED)
    await Ability.filter(channel_id=auto).update(enabled=False)
    # A multi-key channel of the tag whose every key is disabled: enabling the tag leaves it disabled.
    pool = (await root.post("/api/channel/", {"name": "keys", "type": 1, "key": "sk-k1\nsk-k2", "models": "gpt-4o",
                                              "multi_key": True, "tag": "pool"}))["data"][0]["id"]
    await root.post("/api/channel/multi_key/manage", {"channel_id": pool, "action": "disable_all_keys"})
    assert await statuses(pool) == [ChannelStatus.AUTO_DISABLED]
    seen.clear()

    body = await root.post("/api/channel/tag/disabled", {"tag": "pool"})
    assert body == {"success": True, "message": "Disabled 3 channels of tag pool", "data": 3}
    assert await statuses(on, auto, manual, pool, other) == [2, 2, 2, 2, 1]  # the automatic ones by hand now
    assert await abilities_enabled(on) == {False} and await abilities_enabled(other) == {True}
    await eventually(lambda: asyncio.sleep(0, set(seen) == {on, auto, pool}))

    body = await root.post("/api/channel/tag/enabled", {"tag": "pool"}, headers=ZH)
    assert body == {"success": True, "message": "已启用标签 pool 下的 3 个渠道", "data": 3}
    assert await statuses(on, auto, manual, pool) == [1, 1, 1, 2]
    assert await abilities_enabled(manual) == {True} and await abilities_enabled(pool) == {False}
    # Once one of its keys is back, the multi-key channel can be enabled with the tag.
    await root.post("/api/channel/multi_key/manage", {"channel_id": pool, "action": "enable_key", "key_index": 0})
    assert (await root.post("/api/channel/tag/enabled", {"tag": "pool"}))["data"] == 1
    assert await statuses(pool) == [1]
    for path in ("/api/channel/tag/disabled", "/api/channel/tag/enabled"):
        for body in ({}, {"tag": ""}, {"tag": ["pool"]}):
            assert await root.post(path, body) == {"success": False, "message": "Please give the tag", "data": None}
    assert (await root.post("/api/channel/tag/disabled", {"tag": "nobody"}))["data"] == 0


@both_databases
async def test_edit_by_tag(client, root: ApiClient) -> None:
    seen: list[int] = []
    client.app[app_keys.EVENTS].subscribe("channel", lambda m: seen.append(m["id"]))
    a = await create(root, "a", tag="pool", model_mapping='{"gpt-4o":"gpt-4o-2024-08-06"}')
    b = await create(root, "b", tag="pool", models="gpt-4o-mini", priority=3)
    other = await create(root, "other", tag="elsewhere")
    seen.clear()
    body = await root.put("/api/channel/tag", {"tag": "pool", "priority": 7, "weight": 2, "models": "m1,m2",
                                               "groups": "default,vip", "model_mapping": ""})
    assert body == {"success": True, "message": "Updated 2 channels", "data": 2}
    for channel_id in (a, b):
        channel = await Channel.get(id=channel_id)
        assert (channel.priority, channel.weight, channel.models, channel.group) == (7, 2, "m1,m2", "default,vip")
        rows = await Ability.filter(channel_id=channel_id).order_by("group", "model")
        assert [(r.group, r.model, r.priority, r.weight) for r in rows] == [
            ("default", "m1", 7, 2), ("default", "m2", 7, 2), ("vip", "m1", 7, 2), ("vip", "m2", 7, 2)]
    # An empty model mapping (the tag form sends every field) leaves each channel's own.
    assert orjson.loads((await Channel.get(id=a)).model_mapping) == {"gpt-4o": "gpt-4o-2024-08-06"}
    assert (await Channel.get(id=other)).models == "gpt-4o"
    await eventually(lambda: asyncio.sleep(0, set(seen) == {a, b}))
    # Lists as arrays, a mapping, a new name for the tag.
    body = await root.put("/api/channel/tag", {"tag": "pool", "new_tag": "team", "models": ["x"], "groups": ["vip"],
                                               "model_mapping": '{"x":"y"}'})
    assert body["data"] == 2
    assert [(c.tag, c.models, c.group, c.model_mapping) for c in await Channel.filter(id__in=[a, b])] == \
        [("team", "x", "vip", '{"x":"y"}')] * 2
    assert await Channel.filter(tag="pool").count() == 0
    # Refusals change nothing.
    for edit, message in [({"priority": 1}, "Please give the tag"),
                          ({"tag": "team", "model_mapping": "{nope"}, "Model mapping must be a valid JSON object"),
                          ({"tag": "team", "priority": "high"}, "Invalid parameter: priority"),
                          ({"tag": "team", "models": " , "}, "Please select at least one model"),
                          ({"tag": "team", "models": 5}, "Invalid parameter: models"),
                          ({"tag": "team", "new_tag": "t" * 65}, "A tag is at most 64 characters long"),
                          ({"tag": "team", "new_tag": 3}, "Invalid parameter: new_tag")]:
        assert await root.put("/api/channel/tag", edit) == {"success": False, "message": message, "data": None}, edit
    assert [(c.tag, c.models, c.priority) for c in await Channel.filter(id__in=[a, b])] == [("team", "x", 7)] * 2
    # "" as the new name removes the tag.
    assert (await root.put("/api/channel/tag", {"tag": "team", "new_tag": ""}))["data"] == 2
    assert {c.tag for c in await Channel.filter(id__in=[a, b])} == {""}


async def test_tag_routes_are_for_admins(root: ApiClient, anon: ApiClient) -> None:
    await make_user("plain")
    await make_user("boss", role=Role.ADMIN)
    channel_id = await create(root, "c", tag="pool")
    user, admin = root.fork(), root.fork()
    routes = [("POST", "/api/channel/tag/disabled", {"tag": "pool"}),
              ("POST", "/api/channel/tag/enabled", {"tag": "pool"}),
              ("PUT", "/api/channel/tag", {"tag": "pool", "priority": 5}),
              ("POST", "/api/channel/batch/tag", {"ids": [channel_id], "tag": "x"}),
              ("GET", "/api/channel/?tag=pool", None)]
    try:
        await user.login("plain", "password123")
        await admin.login("boss", "password123")
        for method, path, body in routes:
            assert (await anon.request(method, path, json=body, expect_status=401))["success"] is False, path
            assert await user.request(method, path, json=body) == {
                "success": False, "message": "You are not allowed to do this", "data": None}, path
        channel = await Channel.get(id=channel_id)
        assert (channel.status, channel.priority, channel.tag) == (1, 0, "pool")
        for method, path, body in routes:
            assert (await admin.request(method, path, json=body))["success"], path
    finally:
        await user.client.session.close()
        await admin.client.session.close()
