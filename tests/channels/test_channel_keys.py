"""Multi-key channels in the channel admin API: one channel holding many keys (created, edited, turned
on and off), POST /api/channel/multi_key/manage (new-api's actions and answer), the channel following
its keys, and no key in any answer."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from api import keys as app_keys
from api.channels import keys as channel_keys
from models import Ability, Channel, keyring
from models.enums import ChannelStatus, Role
from tests.helpers import ApiClient, both_databases, eventually, make_user

KEYS = [f"sk-multikey-{n}-{'abcdefghijkl' * 2}" for n in range(5)]  # long enough to be masked
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
MANAGE = "/api/channel/multi_key/manage"


def form(**overrides) -> dict:
    body = {"name": "pool", "type": 1, "key": "\n".join(KEYS[:3]), "models": "gpt-4o", "group": "default",
            "multi_key": True}
    body.update(overrides)
    return body


class Answers:
    """Every raw answer of a test, to check that no key ever appears in one."""

    def __init__(self, api: ApiClient) -> None:
        self.api, self.texts = api, []

    async def call(self, method: str, path: str, body=None, **kw) -> dict:
        answer = await self.api.request(method, path, json=body, **kw)
        self.texts.append(await self.api.last_response.text())
        return answer

    async def manage(self, channel_id: int, action: str, **fields) -> dict:
        return await self.call("POST", MANAGE, {"channel_id": channel_id, "action": action, **fields})

    def assert_no_key(self, *secrets: str) -> None:
        for text in self.texts:
            for secret in secrets or KEYS:
                assert secret not in text, (secret, text)


async def stored(channel_id: int) -> tuple[Channel, keyring.Keyring]:
    channel = await Channel.get(id=channel_id)
    return channel, keyring.load(channel.key, channel.channel_info)


def states(ring: keyring.Keyring) -> dict[str, int]:
    return {key: ring.status(i) for i, key in enumerate(ring.keys)}


# -- create ----------------------------------------------------------------------------------------

@both_databases
async def test_create_one_channel_holding_every_key(root: ApiClient) -> None:
    api = Answers(root)
    text = f"{KEYS[0]}\n\n  {KEYS[1]}  \n{KEYS[0]}\n{KEYS[2]}\n"
    body = await api.call("POST", "/api/channel/", form(key=text))
    assert body["success"] and body["message"] == "Channel created" and len(body["data"]) == 1
    created = body["data"][0]
    assert created["channel_info"] == {"is_multi_key": True, "multi_key_size": 3, "multi_key_mode": "affinity",
                                       "multi_key_status_list": {}, "multi_key_disabled_reason": {},
                                       "multi_key_disabled_time": {}}
    channel, ring = await stored(created["id"])
    assert ring.multi and ring.mode == "affinity" and ring.keys == KEYS[:3]
    assert channel.key == "\n".join(KEYS[:3])  # one per line, as new-api stores them
    assert await Channel.all().count() == 1
    assert [(a.group, a.model) for a in await Ability.filter(channel_id=channel.id)] == [("default", "gpt-4o")]
    # The mode, and new-api's own create shape {mode: multi_to_single, multi_key_mode, channel}.
    polling = (await api.call("POST", "/api/channel/", form(name="p", multi_key_mode="polling")))["data"][0]
    assert (await stored(polling["id"]))[1].mode == "polling"
    wrapped = {"mode": "multi_to_single", "multi_key_mode": "random",
               "channel": {k: v for k, v in form(name="w").items() if k != "multi_key"}}
    random_one = (await api.call("POST", "/api/channel/", wrapped))["data"]
    assert len(random_one) == 1 and (await stored(random_one[0]["id"]))[1].mode == "random"
    batch = await api.call("POST", "/api/channel/", {"mode": "batch", "channel": {**form(name="b"), "multi_key": None}})
    assert len(batch["data"]) == 3  # one per key, as without multi_key
    api.assert_no_key()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"key": f"{KEYS[0]}\n\n{KEYS[1]} second-word\n"}, "The key must be one line per channel (line 3)"),
    ({"key": orjson.dumps([KEYS[0], "two words"]).decode()}, "The key must be one line per channel (line 2)"),
    ({"multi_key_mode": "sticky"},
     "The key mode of a multi-key channel is random, polling (round-robin) or affinity, not sticky"),
    ({"multi_key": "yes"}, "Invalid parameter: multi_key"),
    ({"tag": "t" * 65}, "A tag is at most 64 characters long"),
    ({"cache_per_key": 2}, "cache_per_key is 1 (the upstream caches prompts per key) or 0 (per channel)"),
    ({"max_inflight": -1}, "max_inflight is a whole number of requests at once, 0 for no limit"),
    ({"max_inflight": "many"}, "Invalid parameter: max_inflight"),
    ({"key": "\n".join(f"sk-{n:05d}" for n in range(keyring.MAX_KEYS + 1))},
     f"A channel holds at most {keyring.MAX_KEYS} keys"),
], ids=["line", "array-element", "mode", "flag", "tag", "cache-scope", "inflight-negative", "inflight-text",
        "too-many-keys"])
async def test_create_refusals_name_the_problem(root: ApiClient, overrides: dict, message: str) -> None:
    body = await root.post("/api/channel/", form(**overrides))
    assert body == {"success": False, "message": message, "data": None}
    assert await Channel.all().count() == 0


async def test_refusals_in_chinese(root: ApiClient) -> None:
    body = await root.post("/api/channel/", form(key=f"{KEYS[0]}\nbad key"), headers=ZH)
    assert body["message"] == "密钥必须每行一个（第 2 行）"
    body = await root.post("/api/channel/", form(multi_key_mode="x"), headers=ZH)
    assert body["message"] == "多密钥模式只能是 random（随机）、polling（轮询）或 affinity（会话粘性），而不是 x"


async def test_service_account_documents_as_one_json_array(root: ApiClient) -> None:
    def account(n: int) -> dict:
        return {"type": "service_account", "project_id": f"p{n}", "private_key_id": f"k{n}",
                "client_email": f"sa{n}@p{n}.iam.gserviceaccount.com",
                "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"}

    docs = orjson.dumps([account(1), account(2)]).decode()
    body = await root.post("/api/channel/", form(type=41, key=docs, other='{"default":"us-central1"}',
                                                 models="gemini-2.5-pro"))
    assert body["success"], body
    channel, ring = await stored(body["data"][0]["id"])
    assert [orjson.loads(k)["project_id"] for k in ring.keys] == ["p1", "p2"]
    assert [d["project_id"] for d in orjson.loads(channel.key)] == ["p1", "p2"]  # stored as a JSON array
    assert "PRIVATE KEY" not in await root.last_response.text()
    # One document pasted whole (over several lines) is one key; a document beside a one-line key is refused.
    one = await root.post("/api/channel/", form(type=41, key=orjson.dumps(account(3), option=orjson.OPT_INDENT_2)
                                                .decode(), other="", models="gemini-2.5-pro", name="one"))
    assert one["success"] and one["data"][0]["channel_info"]["multi_key_size"] == 1
    mixed = orjson.dumps([account(4), "AIzaSyA-one-line-api-key-00000000000000"]).decode()
    refused = await root.post("/api/channel/", form(type=41, key=mixed, other="", models="gemini-2.5-pro"))
    assert refused["message"].startswith("The keys of a multi-key channel are either all JSON documents")
    bad = orjson.dumps([account(5), {"type": "service_account"}]).decode()
    refused = await root.post("/api/channel/", form(type=41, key=bad, other="", models="gemini-2.5-pro"))
    assert refused["success"] is False and "(line 2)" in refused["message"]


# -- update ----------------------------------------------------------------------------------------

@both_databases
async def test_replacing_the_keys_carries_each_kept_keys_state(client, root: ApiClient) -> None:
    api = Answers(root)
    channel_id = (await api.call("POST", "/api/channel/", form(key="\n".join(KEYS[:4]))))["data"][0]["id"]
    assert (await api.manage(channel_id, "disable_key", key_index=1))["success"]
    await channel_keys.set_key_status(channel_id, 2, keyring.AUTO, reason="401 from upstream",
                                      events=client.app[app_keys.EVENTS])
    # New list: key 2 (auto-disabled) first, key 1 (disabled by hand) last, key 0 and 3 gone, key 4 new.
    body = await api.call("PUT", "/api/channel/", {"id": channel_id, "key": f"{KEYS[2]}\n{KEYS[4]}\n{KEYS[1]}"})
    assert body["success"] and body["data"]["channel_info"]["multi_key_size"] == 3
    _, ring = await stored(channel_id)
    assert states(ring) == {KEYS[2]: keyring.AUTO, KEYS[4]: keyring.ENABLED, KEYS[1]: keyring.MANUAL}
    assert ring.states[0].reason == "401 from upstream"
    # key_mode "append" (new-api's) adds, skipping keys already there; the mode follows multi_key_mode.
    body = await api.call("PUT", "/api/channel/", {"id": channel_id, "key": f"{KEYS[4]}\n{KEYS[0]}",
                                                   "key_mode": "append", "multi_key_mode": "random"})
    _, ring = await stored(channel_id)
    assert ring.keys == [KEYS[2], KEYS[4], KEYS[1], KEYS[0]] and ring.mode == "random"
    assert states(ring)[KEYS[1]] == keyring.MANUAL
    # key_mode naming a mode changes the mode; an empty key keeps the keys.
    await api.call("PUT", "/api/channel/", {"id": channel_id, "key": "", "key_mode": "polling", "name": "renamed"})
    channel, ring = await stored(channel_id)
    assert ring.mode == "polling" and len(ring.keys) == 4 and channel.name == "renamed"
    # Refused edits change nothing.
    for edit, message in [
        ({"key": f"{KEYS[0]}\nbad key"}, "The key must be one line per channel (line 2)"),
        ({"multi_key_mode": "sticky", "name": "x"}, "The key mode of a multi-key channel is random, polling "
                                                    "(round-robin) or affinity, not sticky"),
        ({"key_mode": "merge", "key": KEYS[3]}, "key_mode is append (add the keys) or replace (replace the key "
                                                "list), not merge"),
        ({"tag": "t" * 65}, "A tag is at most 64 characters long"),
        ({"cache_per_key": -1}, "cache_per_key is 1 (the upstream caches prompts per key) or 0 (per channel)"),
        ({"max_inflight": -5, "name": "x"}, "max_inflight is a whole number of requests at once, 0 for no limit"),
        ({"multi_key": False}, "This channel holds 4 keys: delete all but one before turning multi-key off"),
    ]:
        assert (await api.call("PUT", "/api/channel/", {"id": channel_id, **edit}))["message"] == message, edit
    after, ring_after = await stored(channel_id)
    assert (after.key, after.channel_info, after.name) == (channel.key, channel.channel_info, "renamed")
    body = await api.call("PUT", "/api/channel/", {"id": channel_id, "tag": " team-a ", "cache_per_key": 0,
                                                   "max_inflight": 8})
    assert (body["data"]["tag"], body["data"]["cache_per_key"], body["data"]["max_inflight"]) == ("team-a", 0, 8)
    api.assert_no_key()


async def test_turning_multi_key_on_and_off(root: ApiClient) -> None:
    single = (await root.post("/api/channel/", form(key=KEYS[0], multi_key=False)))["data"][0]
    assert single["channel_info"]["is_multi_key"] is False
    body = await root.put("/api/channel/", {"id": single["id"], "multi_key": True, "multi_key_mode": "polling"})
    assert body["success"] and body["data"]["channel_info"]["multi_key_size"] == 1
    _, ring = await stored(single["id"])
    assert ring.multi and ring.keys == [KEYS[0]] and ring.mode == "polling"  # its key is key 0
    await root.post(MANAGE, {"channel_id": single["id"], "action": "add_keys", "keys": KEYS[1]})
    refused = await root.put("/api/channel/", {"id": single["id"], "multi_key": False}, headers=ZH)
    assert refused["message"] == "该渠道有 2 个密钥，请先删除到只剩一个再关闭多密钥模式"
    await root.post(MANAGE, {"channel_id": single["id"], "action": "delete_key", "key_index": 0})
    body = await root.put("/api/channel/", {"id": single["id"], "multi_key": False})
    assert body["success"] and body["data"]["channel_info"]["is_multi_key"] is False
    channel, ring = await stored(single["id"])
    assert channel.key == KEYS[1] and channel.channel_info == "" and not ring.multi
    # Turning it on with new keys: they replace the one key.
    await root.put("/api/channel/", {"id": single["id"], "multi_key": True, "key": "\n".join(KEYS[2:4])})
    assert (await stored(single["id"]))[1].keys == KEYS[2:4]


async def test_a_copy_keeps_the_keys_and_their_states(root: ApiClient) -> None:
    channel_id = (await root.post("/api/channel/", form()))["data"][0]["id"]
    await root.post(MANAGE, {"channel_id": channel_id, "action": "disable_key", "key_index": 2})
    copy = await root.post(f"/api/channel/copy/{channel_id}")
    assert copy["success"] and copy["data"]["channel_info"]["multi_key_status_list"] == {"2": 2}
    _, ring = await stored(copy["data"]["id"])
    assert ring.keys == KEYS[:3] and ring.status(2) == keyring.MANUAL


# -- manage ----------------------------------------------------------------------------------------

@both_databases
async def test_manage_actions(client, root: ApiClient) -> None:
    events = client.app[app_keys.EVENTS]
    seen: list[int] = []
    events.subscribe("channel", lambda m: seen.append(m["id"]))
    api = Answers(root)
    channel_id = (await api.call("POST", "/api/channel/", form(key="\n".join(KEYS[:4]))))["data"][0]["id"]
    await channel_keys.record_key_failure(client.app[app_keys.STORE], channel_id, KEYS[3], "HTTP 429")

    status = await api.manage(channel_id, "get_key_status")
    assert status["success"]
    data = status["data"]
    assert {k: data[k] for k in ("total", "page", "page_size", "total_pages", "enabled_count",
                                 "manual_disabled_count", "auto_disabled_count")} == {
        "total": 4, "page": 1, "page_size": 50, "total_pages": 1, "enabled_count": 4,
        "manual_disabled_count": 0, "auto_disabled_count": 0}
    rows = data["keys"]
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    assert set(rows[0]) == {"index", "fingerprint", "key_preview", "status", "reason", "disabled_time", "used",
                            "failed", "last_error", "last_error_time"}
    assert rows[0]["fingerprint"] == channel_keys.fingerprint(KEYS[0])
    assert rows[0]["key_preview"] == keyring.mask(KEYS[0]) and rows[0]["status"] == 1
    assert (rows[3]["failed"], rows[3]["last_error"]) == (1, "HTTP 429") and rows[3]["last_error_time"] > 0

    # Disable by position, enable by fingerprint.
    body = await api.manage(channel_id, "disable_key", key_index=1)
    assert body == {"success": True, "message": "Key disabled", "data": None}
    await channel_keys.set_key_status(channel_id, channel_keys.fingerprint(KEYS[2]), keyring.AUTO,
                                      reason="quota exhausted", events=events)
    data = (await api.manage(channel_id, "get_key_status", status=2))["data"]
    assert [r["index"] for r in data["keys"]] == [1] and data["total"] == 1
    assert (data["enabled_count"], data["manual_disabled_count"], data["auto_disabled_count"]) == (2, 1, 1)
    paged = (await api.manage(channel_id, "get_key_status", page=2, page_size=3))["data"]
    assert ([r["index"] for r in paged["keys"]], paged["total_pages"], paged["page"]) == ([3], 2, 2)
    assert (await api.manage(channel_id, "get_key_status", page=9, page_size=3))["data"]["page"] == 2
    auto = (await api.manage(channel_id, "get_key_status", status=3))["data"]["keys"][0]
    assert (auto["index"], auto["reason"]) == (2, "quota exhausted") and auto["disabled_time"] > 0
    body = await api.manage(channel_id, "enable_key", fingerprint=channel_keys.fingerprint(KEYS[1]))
    assert body["message"] == "Key enabled"
    assert (await stored(channel_id))[1].status(1) == keyring.ENABLED

    # The fingerprint names the key even after the list moved under it.
    await api.manage(channel_id, "delete_key", key_index=0)
    _, ring = await stored(channel_id)
    assert ring.keys == KEYS[1:4] and ring.status(1) == keyring.AUTO  # key 2's state moved with it
    body = await api.manage(channel_id, "disable_key", fingerprint=channel_keys.fingerprint(KEYS[3]))
    assert body["success"] and (await stored(channel_id))[1].status(2) == keyring.MANUAL

    # Deleting the automatically disabled keys keeps those disabled by hand.
    body = await api.manage(channel_id, "delete_disabled_keys")
    assert body == {"success": True, "message": "Deleted 1 automatically disabled keys", "data": 1}
    _, ring = await stored(channel_id)
    assert ring.keys == [KEYS[1], KEYS[3]] and states(ring) == {KEYS[1]: 1, KEYS[3]: 2}
    body = await api.manage(channel_id, "delete_disabled_keys")
    assert body["message"] == "No automatically disabled key to delete" and body["success"] is False

    # Adding keys: checked line by line, those already there skipped.
    body = await api.manage(channel_id, "add_keys", keys=f"{KEYS[3]}\n\n{KEYS[0]}\n{KEYS[4]}")
    assert body == {"success": True, "message": "Added 2 keys (1 already in the channel)",
                    "data": {"added": 2, "skipped": 1}}
    assert (await stored(channel_id))[1].keys == [KEYS[1], KEYS[3], KEYS[0], KEYS[4]]
    body = await api.manage(channel_id, "add_keys", keys="sk-fine\n\nnot fine")
    assert body["message"] == "The key must be one line per channel (line 3)"
    assert len((await stored(channel_id))[1].keys) == 4

    # Every change reached every process (the `channel` event).
    await eventually(lambda: asyncio.sleep(0, seen.count(channel_id) >= 7))
    api.assert_no_key()


async def test_all_keys_off_disables_the_channel_and_back(client, root: ApiClient) -> None:
    """set_all_keys: disabling every key by hand leaves the channel with no key to use, so it is
    disabled automatically (reason "all keys disabled"); enabling the keys brings it back. A channel
    disabled by hand stays disabled."""
    api = Answers(root)
    channel_id = (await api.call("POST", "/api/channel/", form()))["data"][0]["id"]
    body = await api.manage(channel_id, "disable_all_keys")
    assert body == {"success": True, "message": "Disabled 3 keys", "data": 3}
    channel = await Channel.get(id=channel_id)
    assert channel.status == ChannelStatus.AUTO_DISABLED
    assert orjson.loads(channel.other_info)["status_reason"] == channel_keys.ALL_KEYS_DISABLED
    assert not (await Ability.get(channel_id=channel_id)).enabled
    assert (await api.manage(channel_id, "disable_all_keys"))["message"] == "No key to disable"
    body = await api.manage(channel_id, "enable_all_keys")
    assert body == {"success": True, "message": "Enabled 3 keys", "data": 3}
    assert (await Channel.get(id=channel_id)).status == ChannelStatus.ENABLED
    assert (await Ability.get(channel_id=channel_id)).enabled
    # One key at a time: the last one going disables the channel, the first one back enables it.
    for index in range(3):
        await api.manage(channel_id, "disable_key", key_index=index)
    assert (await Channel.get(id=channel_id)).status == ChannelStatus.AUTO_DISABLED
    await api.manage(channel_id, "enable_key", key_index=1)
    assert (await Channel.get(id=channel_id)).status == ChannelStatus.ENABLED
    # Replacing the list with keys that are all disabled is the same.
    await api.call("PUT", "/api/channel/", {"id": channel_id, "key": f"{KEYS[0]}\n{KEYS[2]}"})
    assert (await Channel.get(id=channel_id)).status == ChannelStatus.AUTO_DISABLED
    # Disabled by hand: no key coming back undoes that.
    await api.call("PUT", "/api/channel/", {"id": channel_id, "status": 2})
    await api.manage(channel_id, "enable_all_keys")
    assert (await Channel.get(id=channel_id)).status == ChannelStatus.MANUALLY_DISABLED
    api.assert_no_key()


async def test_manage_refusals(root: ApiClient) -> None:
    channel_id = (await root.post("/api/channel/", form(key=KEYS[0])))["data"][0]["id"]
    single_id = (await root.post("/api/channel/", form(key=KEYS[1], multi_key=False, name="one")))["data"][0]["id"]

    async def message(body: dict, **kw) -> str:
        answer = await root.post(MANAGE, body, **kw)
        assert answer["success"] is False and answer["data"] is None, answer
        return answer["message"]

    assert await message({"channel_id": channel_id, "action": "delete_key", "key_index": 0}) == \
        "A channel keeps at least one key: the last one cannot be deleted"
    assert await message({"channel_id": channel_id, "action": "delete_key", "key_index": 0}, headers=ZH) == \
        "不能删除最后一个密钥"
    assert await message({"channel_id": channel_id, "action": "disable_key", "key_index": 5}) == \
        "This channel has no such key (its key list may have changed: refresh)"
    assert await message({"channel_id": channel_id, "action": "enable_key", "fingerprint": "0" * 16}) == \
        "This channel has no such key (its key list may have changed: refresh)"
    assert await message({"channel_id": channel_id, "action": "enable_key"}) == \
        "Name the key: its fingerprint or its key_index"
    assert await message({"channel_id": channel_id, "action": "enable_key", "key_index": "0"}) == \
        "Invalid parameter: key_index"
    assert await message({"channel_id": channel_id, "action": "shuffle"}) == "Unsupported action: shuffle"
    assert await message({"channel_id": channel_id, "action": "add_keys", "keys": " "}) == \
        "Please fill in the keys to add"
    assert await message({"channel_id": channel_id, "action": "get_key_status", "status": 7}) == \
        "Invalid parameter: status"
    assert await message({"channel_id": single_id, "action": "get_key_status"}) == \
        "This channel is not a multi-key channel"
    assert await message({"channel_id": single_id, "action": "get_key_status"}, headers=ZH) == "该渠道不是多密钥模式"
    assert await message({"channel_id": 999999, "action": "get_key_status"}) == "Channel not found, refresh the page"
    # Whatever the body holds, the answer is the envelope (never a server error).
    for body in ({}, {"channel_id": None}, {"channel_id": True, "action": "get_key_status"},
                 {"channel_id": channel_id, "action": ["x"]}, {"channel_id": channel_id, "action": "add_keys",
                                                               "keys": ["x"]},
                 {"channel_id": channel_id, "action": "get_key_status", "page": -1, "page_size": "x"},
                 {"channel_id": channel_id, "action": "disable_key", "key_index": 2**70},
                 {"channel_id": channel_id, "action": "disable_key", "fingerprint": 12}):
        await message(body)
    assert len((await stored(channel_id))[1].keys) == 1


async def test_manage_is_for_admins(root: ApiClient, anon: ApiClient) -> None:
    await make_user("plain")
    await make_user("boss", role=Role.ADMIN)
    channel_id = (await root.post("/api/channel/", form()))["data"][0]["id"]
    user, admin = root.fork(), root.fork()
    try:
        await user.login("plain", "password123")
        await admin.login("boss", "password123")
        body = {"channel_id": channel_id, "action": "get_key_status"}
        assert (await anon.post(MANAGE, body, expect_status=401))["success"] is False
        refused = await user.post(MANAGE, {**body, "action": "disable_all_keys"})
        assert refused == {"success": False, "message": "You are not allowed to do this", "data": None}
        assert (await stored(channel_id))[1].enabled() == [0, 1, 2]
        assert (await admin.post(MANAGE, body))["data"]["total"] == 3
    finally:
        await user.client.session.close()
        await admin.client.session.close()


async def test_no_key_in_channel_reads(root: ApiClient) -> None:
    api = Answers(root)
    channel_id = (await api.call("POST", "/api/channel/", form(tag="pool")))["data"][0]["id"]
    await api.manage(channel_id, "disable_key", key_index=0)
    for path in ("/api/channel/", f"/api/channel/{channel_id}", "/api/channel/search?keyword=pool",
                 "/api/channel/?tag=pool", "/api/channel/search?tag=pool"):
        body = await api.call("GET", path)
        assert body["success"], path
    await api.manage(channel_id, "get_key_status")
    await api.call("POST", f"/api/channel/copy/{channel_id}")
    api.assert_no_key()
