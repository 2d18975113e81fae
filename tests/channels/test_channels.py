"""Channel management routes: roles, the channel form's rules, paging, search, abilities, deletes."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from api import keys
from api.upstream.catalogue import ChannelType
from models import Ability, Channel
from models.enums import ChannelStatus, Role
from tests.helpers import ApiClient, both_databases, eventually, make_user

SECRET = "sk-secret-upstream-key-0001"
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


SERVICE_ACCOUNT = orjson.dumps({
    "type": "service_account", "project_id": "p", "private_key_id": "k1",
    "client_email": "sa@p.iam.gserviceaccount.com",
    "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
}, option=orjson.OPT_INDENT_2).decode()


VERTEX_REGION = ("The Vertex AI region field is empty (us-central1) or a JSON object of model to region, with "
                 "\"default\" for the other models; a region is global or like us-central1")
VERTEX_REGION_ZH = ("Vertex AI 部署地区为空（即 us-central1），或为“模型 → 地区”的 JSON 对象"
                    "（\"default\" 表示其他模型）；地区为 global 或形如 us-central1")


def form(**overrides) -> dict:
    body = {"name": "main", "type": 1, "key": SECRET, "models": "gpt-4o,gpt-4o-mini", "group": "default",
            "base_url": "", "other": "", "model_mapping": "", "priority": 0, "weight": 0}
    body.update(overrides)
    return body


async def create(root: ApiClient, **overrides) -> list[dict]:
    body = await root.post("/api/channel/", form(**overrides))
    assert body["success"], body
    return body["data"]


def assert_no_key(payload) -> None:
    text = orjson.dumps(payload).decode()
    assert SECRET not in text and '"key"' not in text


# -- roles -----------------------------------------------------------------------------------------

ADMIN_ROUTES = [
    ("GET", "/api/channel/"), ("GET", "/api/channel/search?keyword=a"), ("GET", "/api/channel/1"),
    ("POST", "/api/channel/"), ("PUT", "/api/channel/"), ("DELETE", "/api/channel/1/"),
    ("DELETE", "/api/channel/disabled"), ("POST", "/api/channel/batch"), ("POST", "/api/channel/fix"),
    ("GET", "/api/channel/models"), ("GET", "/api/channel/fetch_models/1"), ("POST", "/api/channel/fetch_models"),
    ("GET", "/api/channel/test"),
    ("GET", "/api/channel/test/1"), ("GET", "/api/channel/update_balance"),
    ("GET", "/api/channel/update_balance/1/"), ("POST", "/api/channel/copy/1"),
]


async def test_channel_routes_are_admin_only(root: ApiClient, anon: ApiClient) -> None:
    await make_user("plain")
    await make_user("boss", role=Role.ADMIN)
    user, admin = root.fork(), root.fork()
    try:
        await user.login("plain", "password123")
        await admin.login("boss", "password123")
        await _check_roles(anon, user, admin)
    finally:
        await user.client.session.close()
        await admin.client.session.close()


async def _check_roles(anon: ApiClient, user: ApiClient, admin: ApiClient) -> None:
    for method, path in ADMIN_ROUTES:
        body = await anon.request(method, path, json={}, expect_status=401)
        assert body["success"] is False, path
        body = await user.request(method, path, json={})
        assert body == {"success": False, "message": "You are not allowed to do this", "data": None}, path
    # An admin (role 10) may, not only root.
    assert (await admin.get("/api/channel/"))["success"]
    assert (await user.get("/api/models"))["success"]  # the type → models map is for every user
    await anon.get("/api/models", expect_status=401)


# -- create ----------------------------------------------------------------------------------------

@both_databases
async def test_create_one_channel_per_key_line(root: ApiClient) -> None:
    key = f"{SECRET}\n  sk-second  \n\n{SECRET[:-1]}3\n"
    body = await root.post("/api/channel/", form(key=key, group="default,vip", base_url="https://up.example/v1//"))
    assert body["success"] and body["message"] == "Channel created"
    assert_no_key(body)
    created = body["data"]
    assert len(created) == 3 and {c["name"] for c in created} == {"main"}
    stored = await Channel.filter(id__in=[c["id"] for c in created]).order_by("id")
    assert [c.key for c in stored] == [SECRET, "sk-second", SECRET[:-1] + "3"]
    assert all(c.base_url == "https://up.example/v1" for c in stored)
    # One ability per group × model of each channel, enabled like the channel.
    rows = await Ability.filter(channel_id=stored[0].id).order_by("group", "model")
    assert [(a.group, a.model, a.enabled) for a in rows] == [
        ("default", "gpt-4o", True), ("default", "gpt-4o-mini", True),
        ("vip", "gpt-4o", True), ("vip", "gpt-4o-mini", True)]
    assert await Ability.all().count() == 12


@pytest.mark.parametrize(("overrides", "message", "zh"), [
    ({"name": ""}, "Please fill in the channel name and key", "请填写渠道名称和渠道密钥！"),
    ({"key": "  \n "}, "Please fill in the channel name and key", "请填写渠道名称和渠道密钥！"),
    ({"models": []}, "Please select at least one model", "请至少选择一个模型！"),
    ({"models": " , "}, "Please select at least one model", "请至少选择一个模型！"),
    ({"model_mapping": "{not json"}, "Model mapping must be a valid JSON object", "模型映射必须是合法的 JSON 格式！"),
    ({"model_mapping": "[1]"}, "Model mapping must be a valid JSON object", "模型映射必须是合法的 JSON 格式！"),
    ({"status_code_mapping": "{\"400\":"}, "Status code mapping must be a valid JSON object",
     "状态码复写必须是合法的 JSON 格式！"),
    ({"type": 41, "key": SERVICE_ACCOUNT, "other": "us-central1"}, VERTEX_REGION, VERTEX_REGION_ZH),
    ({"type": 41, "key": SERVICE_ACCOUNT, "other": "{\"claude-sonnet-4-6\":\"moon\"}"}, VERTEX_REGION,
     VERTEX_REGION_ZH),
    ({"type": 3, "base_url": "https://az.example", "other": "June 2024"},
     "The API version of an Azure OpenAI channel is left empty for the v1 API, or is v1, preview or a dated "
     "version such as 2024-10-21 or 2025-04-01-preview", None),
    ({"type": 16}, "Channel type Zhipu ChatGLM v3 (16) is retired: Zhipu took the ChatGLM v3 models offline in "
     "2023: use a Zhipu GLM v4 channel (type 26)",
     "渠道类型 Zhipu ChatGLM v3 (16) 已停用：智谱已于 2023 年下线 ChatGLM v3 模型：请改用智谱 GLM v4 渠道（类型 26）"),
    ({"type": 999}, "Unknown channel type: 999", "未知的渠道类型：999"),
    ({"priority": "high"}, "Invalid parameter: priority", "无效的参数：priority"),
])
async def test_create_validation_messages(root: ApiClient, overrides: dict, message: str, zh: str) -> None:
    body = await root.post("/api/channel/", form(**overrides))
    assert body == {"success": False, "message": message, "data": None}
    body = await root.post("/api/channel/", form(**overrides), headers=ZH)
    assert zh is None or body["message"] == zh
    assert await Channel.all().count() == 0


async def test_create_defaults_per_type_and_clamps(root: ApiClient) -> None:
    azure = (await create(root, type=3, name="az", base_url="https://az.example/"))[0]
    assert azure["other"] == "" and azure["base_url"] == "https://az.example"  # the v1 API
    spark = await root.post("/api/channel/", form(type=18, name="spark", key="app|secret"))  # neither key form
    assert spark["success"] is False and "APPID|APISecret|APIKey" in spark["message"]
    spark = (await create(root, type=18, name="spark", key="app|secret|key"))[0]
    assert spark["other"] == ""  # the version comes from the model's name
    vertex = (await create(root, type=41, name="vx", other='{"default":"us-central1"}', key=SERVICE_ACCOUNT))
    assert len(vertex) == 1  # a Vertex key is one JSON document, even over several lines
    clamped = (await create(root, name="clamp", weight=-5, priority=-5000, models=["a", "b", "a"],
                            groups=["vip", "default"], auto_ban=0))[0]
    assert clamped["weight"] == 0 and clamped["priority"] == -999
    assert clamped["models"] == "a,b" and clamped["group"] == "vip,default" and clamped["auto_ban"] == 0
    mapped = (await create(root, name="mapped", model_mapping='{"gpt-4o":"gpt-4o-2024-08-06"}',
                           status_code_mapping='{"429":"500"}'))[0]
    assert orjson.loads(mapped["model_mapping"]) == {"gpt-4o": "gpt-4o-2024-08-06"}


# -- reads -----------------------------------------------------------------------------------------

@both_databases
async def test_list_pages_orders_and_hides_keys(root: ApiClient) -> None:
    ids = []
    for i, priority in enumerate([0, 5, 0, 10, 5]):
        ids.append((await create(root, name=f"c{i}", priority=priority))[0]["id"])
    body = await root.get("/api/channel/?p=0&page_size=3")
    data = body["data"]
    assert data["total"] == 5 and data["page"] == 0 and data["page_size"] == 3
    # priority desc, then id
    assert [c["id"] for c in data["items"]] == [ids[3], ids[1], ids[4]]
    assert [c["id"] for c in (await root.get("/api/channel/?p=1&page_size=3"))["data"]["items"]] == [ids[0], ids[2]]
    by_id = (await root.get("/api/channel/?p=0&page_size=10&id_sort=true"))["data"]["items"]
    assert [c["id"] for c in by_id] == sorted(ids, reverse=True)
    assert (await root.get("/api/channel/"))["data"]["page_size"] == 10
    assert (await root.get("/api/channel/?page_size=1000"))["data"]["page_size"] == 100
    assert_no_key(await root.get("/api/channel/?page_size=100"))
    one = await root.get(f"/api/channel/{ids[0]}")
    assert one["data"]["name"] == "c0" and one["data"]["priority"] == 0
    assert_no_key(one)
    missing = await root.get("/api/channel/999999")
    assert missing == {"success": False, "message": "Channel not found, refresh the page", "data": None}


@both_databases
async def test_search_by_keyword_group_and_model(root: ApiClient) -> None:
    a = (await create(root, name="Alpha OpenAI", group="default,vip", models="gpt-4o"))[0]["id"]
    b = (await create(root, name="beta", key="sk-findme", group="vipx", models="claude-3-haiku-20240307"))[0]["id"]
    c = (await create(root, name="gamma", group="svip,vip", models="gpt-4o-mini,o1"))[0]["id"]

    async def found(query: str) -> list[int]:
        body = await root.get(f"/api/channel/search?{query}")
        assert set(body["data"]) == {"items", "total", "page", "page_size"}
        assert_no_key(body)
        return sorted(i["id"] for i in body["data"]["items"])

    assert await found("keyword=alpha") == [a]  # name, case-insensitive
    assert await found(f"keyword={b}") == [b]  # id
    assert await found("keyword=sk-findme") == [b]  # the whole key (never a part of it)
    assert await found("keyword=sk-find") == []
    assert await found("group=vip") == [a, c]  # a whole group of the list, not "vipx"
    assert await found("model=gpt-4o") == [a, c]
    assert await found("group=vip&model=o1") == [c]
    assert await found("keyword=a&page_size=1&p=2&id_sort=true") == [a]  # c, b, a


# -- update ----------------------------------------------------------------------------------------

@both_databases
async def test_update_keeps_key_rebuilds_abilities_and_clamps(root: ApiClient) -> None:
    channel = (await create(root))[0]
    body = await root.put("/api/channel/", {**channel, "key": "", "name": "renamed", "models": "m1",
                                            "group": "vip", "base_url": "https://x.example/"})
    assert body["success"] and body["message"] == "Channel updated"
    assert_no_key(body)
    stored = await Channel.get(id=channel["id"])
    assert stored.key == SECRET and stored.name == "renamed" and stored.base_url == "https://x.example"
    assert [(a.group, a.model) for a in await Ability.filter(channel_id=stored.id)] == [("vip", "m1")]
    # Row actions send only the field they change.
    await root.put("/api/channel/", {"id": stored.id, "priority": -2000})
    await root.put("/api/channel/", {"id": stored.id, "weight": -3})
    stored = await Channel.get(id=channel["id"])
    assert stored.priority == -999 and stored.weight == 0 and stored.name == "renamed"
    ability = await Ability.get(channel_id=stored.id)
    assert ability.priority == -999 and ability.weight == 0
    await root.put("/api/channel/", {"id": stored.id, "key": "sk-new"})
    assert (await Channel.get(id=stored.id)).key == "sk-new"
    # Disable and enable: the abilities follow.
    await root.put("/api/channel/", {"id": stored.id, "status": 2})
    assert not (await Ability.get(channel_id=stored.id)).enabled
    await root.put("/api/channel/", {"id": stored.id, "status": 1})
    assert (await Ability.get(channel_id=stored.id)).enabled


async def test_update_validation(root: ApiClient) -> None:
    channel = (await create(root))[0]
    cases = [
        ({"id": 999999, "name": "x"}, "Channel not found, refresh the page"),
        ({"name": "x"}, "Channel not found, refresh the page"),
        ({"id": channel["id"], "name": ""}, "Please fill in the channel name and key"),
        ({"id": channel["id"], "models": ""}, "Please select at least one model"),
        ({"id": channel["id"], "model_mapping": "nope"}, "Model mapping must be a valid JSON object"),
        ({"id": channel["id"], "status": 7},
         "Channel status must be 1 (enabled), 2 (disabled) or 3 (automatically disabled)"),
        ({"id": channel["id"], "type": 41, "other": "moon"}, VERTEX_REGION),
    ]
    for body, message in cases:
        assert (await root.put("/api/channel/", body))["message"] == message, body
    # Switching to Azure: it needs its endpoint; no api-version is filled in (the v1 API).
    assert (await root.put("/api/channel/", {"id": channel["id"], "type": 3}))["message"] == \
        "Channel type Azure OpenAI (3) has no default API address: fill in the base URL"
    switched = await root.put("/api/channel/", {"id": channel["id"], "type": 3, "base_url": "https://az.example"})
    assert switched["success"] and switched["data"]["other"] == ""


# -- deletes and repairs ---------------------------------------------------------------------------

@both_databases
async def test_delete_one_disabled_and_batch(root: ApiClient) -> None:
    ids = [(await create(root, name=f"c{i}"))[0]["id"] for i in range(6)]
    assert (await root.delete(f"/api/channel/{ids[0]}/"))["success"]
    assert not await Channel.filter(id=ids[0]).exists()
    assert not await Ability.filter(channel_id=ids[0]).exists()
    assert (await root.delete(f"/api/channel/{ids[0]}/"))["message"] == "Channel not found, refresh the page"
    await Channel.filter(id=ids[1]).update(status=ChannelStatus.MANUALLY_DISABLED)
    await Channel.filter(id=ids[2]).update(status=ChannelStatus.AUTO_DISABLED)
    body = await root.delete("/api/channel/disabled")
    assert body == {"success": True, "message": "Deleted all disabled channels (2 in total)", "data": 2}
    body = await root.post("/api/channel/batch", {"ids": [ids[3], ids[4], 999999]})
    assert body["data"] == 2 and body["message"] == "Deleted 2 channels"
    assert [c.id for c in await Channel.all()] == [ids[5]]
    assert (await root.post("/api/channel/batch", {"ids": []}))["message"] == \
        "Please select the channels to delete first"
    assert (await root.post("/api/channel/batch", {"ids": []}, headers=ZH))["message"] == "请先选择要删除的通道！"
    assert (await root.post("/api/channel/batch", {"ids": ["1"]}))["message"] == "Invalid parameter: ids"


@both_databases
async def test_fix_rebuilds_abilities(root: ApiClient) -> None:
    a = (await create(root, name="a", models="m1,m2"))[0]["id"]
    b = (await create(root, name="b", models="m3"))[0]["id"]
    await Ability.filter(channel_id=a).delete()
    await Ability.create(group="default", model="ghost", channel_id=424242)
    await Channel.filter(id=b).update(status=ChannelStatus.MANUALLY_DISABLED)  # abilities now disagree
    body = await root.post("/api/channel/fix")
    assert body == {"success": True, "message": "Fixed 2 channels", "data": 2}
    assert sorted((a_.channel_id, a_.model, a_.enabled) for a_ in await Ability.all()) == [
        (a, "m1", True), (a, "m2", True), (b, "m3", False)]


async def test_copy_keeps_the_key_and_resets_counters(root: ApiClient) -> None:
    source = (await create(root, name="src", models="m1"))[0]
    await Channel.filter(id=source["id"]).update(used_quota=500, balance=3.5)
    body = await root.post(f"/api/channel/copy/{source['id']}")
    assert body["success"] and body["message"] == "Channel copied"
    assert_no_key(body)
    copy = await Channel.get(id=body["data"]["id"])
    assert copy.id != source["id"] and copy.name == "src_copy" and copy.key == SECRET
    assert copy.used_quota == 0 and copy.balance == 0
    assert await Ability.filter(channel_id=copy.id, model="m1").exists()
    assert (await root.post("/api/channel/copy/999999"))["message"] == "Channel not found, refresh the page"


# -- model lists -----------------------------------------------------------------------------------

async def test_model_lists(root: ApiClient) -> None:
    await create(root, models="my-own-model")
    by_type = (await root.get("/api/models"))["data"]
    assert "gpt-4o" in by_type[str(int(ChannelType.OPENAI))]
    assert "claude-3-haiku-20240307" in by_type[str(int(ChannelType.ANTHROPIC))]
    assert by_type[str(int(ChannelType.SUNO))] == ["suno_music", "suno_lyrics"]
    assert {str(int(t)) for t in ChannelType} <= set(by_type)
    ids = [m["id"] for m in (await root.get("/api/channel/models"))["data"]]
    assert "gpt-4o" in ids and "my-own-model" in ids and ids == sorted(set(ids))


# -- invalidation ----------------------------------------------------------------------------------

async def test_every_mutation_publishes_a_channel_event(client, root: ApiClient) -> None:
    seen: list[int] = []
    client.app[keys.EVENTS].subscribe("channel", lambda m: seen.append(m["id"]))
    created = await create(root, key="sk-a\nsk-b")
    ids = [c["id"] for c in created]
    await eventually(lambda: asyncio.sleep(0, len(seen) >= 2))
    await root.put("/api/channel/", {"id": ids[0], "status": 2})
    await root.delete(f"/api/channel/{ids[1]}/")
    await root.post("/api/channel/fix")
    await eventually(lambda: asyncio.sleep(0, len(seen) >= 5))
    assert seen == [ids[0], ids[1], ids[0], ids[1], ids[0]]
