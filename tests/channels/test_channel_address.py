"""A keyed channel's address and who may move its stored keys there: an administrator (role 10) who
may not read the keys cannot point the channel at an address of theirs and test it to receive them;
root can, and an administrator who gives the key again in the same edit can (the stored one is then
replaced). Refused edits change nothing and say why in the console's languages."""
from __future__ import annotations

import pytest

from api.upstream.catalogue import ChannelType
from models import Channel
from models.enums import Role
from tests.fakes.upstreams import REQUESTS, upstream_app
from tests.helpers import ApiClient

SECRET, OTHER_SECRET = "sk-stored-secret-0001", "sk-stored-secret-0002"
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
REFUSED = ("Only root may send this channel's stored keys to a new address: fill in the key again with the new "
           "base URL (for a multi-key channel, every key, replacing the list rather than appending)")
REFUSED_ZH = ("只有超级管理员可以把渠道已保存的密钥发往新的地址：修改 Base URL 时请重新填写密钥"
              "（多密钥渠道需填写全部密钥并覆盖原列表，而不是追加）")


@pytest.fixture
async def provider(aiohttp_server):
    """The provider the channel was made for (/legit) and an address the administrator runs (/mine)."""
    return await aiohttp_server(upstream_app())


def url(provider, kind: str) -> str:
    return str(provider.make_url(f"/{kind}"))


def keys_seen(provider, kind: str) -> list[str]:
    return [r[2].get("Authorization", "") for r in provider.app[REQUESTS] if r[0] == kind]


@pytest.fixture
async def admin(login_as) -> ApiClient:
    api, _ = await login_as("boss", Role.ADMIN)
    return api


async def keyed_channel(root: ApiClient, provider, multi: bool = False) -> dict:
    body = {"name": "main", "type": int(ChannelType.OPENAI), "key": f"{SECRET}\n{OTHER_SECRET}" if multi else SECRET,
            "models": "gpt-4o-mini", "group": "default", "base_url": url(provider, "legit"), "other": ""}
    created = await root.post("/api/channel/", {**body, "multi_key": True} if multi else body)
    assert created["success"], created
    return created["data"][0]


async def test_an_admin_cannot_send_the_stored_key_elsewhere(root: ApiClient, admin: ApiClient, provider) -> None:
    channel = await keyed_channel(root, provider)
    before = await Channel.get(id=channel["id"])
    moved = {**channel, "key": "", "base_url": url(provider, "mine")}  # the whole form, as the console sends it
    assert await admin.put("/api/channel/", moved) == {"success": False, "message": REFUSED, "data": None}
    assert (await admin.put("/api/channel/", moved, headers=ZH))["message"] == REFUSED_ZH
    assert (await admin.put("/api/channel/", {"id": channel["id"], "base_url": url(provider, "mine") + "/"}))[
        "message"] == REFUSED
    after = await Channel.get(id=channel["id"])
    assert (after.base_url, after.key, after.channel_info) == (before.base_url, SECRET, before.channel_info)
    # Its tests still go where it was made for; the administrator's address never hears of the key.
    assert (await admin.get(f"/api/channel/test/{channel['id']}"))["success"]
    assert keys_seen(provider, "legit") == [f"Bearer {SECRET}"] and keys_seen(provider, "mine") == []
    # An edit that keeps the address (the whole form saved again) is the administrator's to make.
    renamed = await admin.put("/api/channel/", {**channel, "key": "", "name": "renamed", "base_url": channel[
        "base_url"] + "/"})
    assert renamed["success"], renamed
    assert (await Channel.get(id=channel["id"])).key == SECRET


async def test_an_admin_who_gives_the_key_again_may_move_it(root: ApiClient, admin: ApiClient, provider) -> None:
    channel = await keyed_channel(root, provider)
    moved = await admin.put("/api/channel/", {**channel, "key": "sk-the-admins-own", "base_url": url(provider, "mine")})
    assert moved["success"], moved
    assert (await admin.get(f"/api/channel/test/{channel['id']}"))["success"]
    assert keys_seen(provider, "mine") == ["Bearer sk-the-admins-own"]
    assert (await Channel.get(id=channel["id"])).key == "sk-the-admins-own"


async def test_a_type_change_that_moves_the_key(root: ApiClient, admin: ApiClient, provider) -> None:
    """With no base URL a channel's key goes to its type's own address: another type moves it too."""
    created = await root.post("/api/channel/", {"name": "official", "type": int(ChannelType.OPENAI), "key": SECRET,
                                                "models": "gpt-4o-mini", "base_url": ""})
    channel = created["data"][0]
    switched = {"id": channel["id"], "type": int(ChannelType.DEEPSEEK)}
    assert (await admin.put("/api/channel/", switched))["message"] == REFUSED
    assert (await Channel.get(id=channel["id"])).type == int(ChannelType.OPENAI)
    assert (await root.put("/api/channel/", switched))["success"]


async def test_every_key_of_a_multi_key_channel(root: ApiClient, admin: ApiClient, provider) -> None:
    channel = await keyed_channel(root, provider, multi=True)
    mine = url(provider, "mine")
    for edit in ({"base_url": mine}, {"base_url": mine, "key": "sk-added", "key_mode": "append"}):
        assert (await admin.put("/api/channel/", {"id": channel["id"], **edit}))["message"] == REFUSED, edit
    stored = await Channel.get(id=channel["id"])
    assert stored.base_url == url(provider, "legit") and stored.key.splitlines() == [SECRET, OTHER_SECRET]
    for index in (0, 1):  # each key in turn: the test uses the first one enabled
        assert (await admin.post("/api/channel/multi_key/manage", {"channel_id": channel["id"], "action":
                                 "disable_key", "key_index": index}))["success"]
        assert (await admin.get(f"/api/channel/test/{channel['id']}"))["success"]
        await admin.post("/api/channel/multi_key/manage", {"channel_id": channel["id"], "action": "enable_all_keys"})
    assert keys_seen(provider, "mine") == [] and keys_seen(provider, "legit") == [f"Bearer {OTHER_SECRET}",
                                                                                  f"Bearer {SECRET}"]
    # Every key given again (the list replaced): the administrator's keys go there, never the stored ones.
    replaced = await admin.put("/api/channel/", {"id": channel["id"], "base_url": mine, "key": "sk-a1\nsk-a2",
                                                 "key_mode": "replace"})
    assert replaced["success"], replaced
    assert (await admin.get(f"/api/channel/test/{channel['id']}"))["success"]
    assert keys_seen(provider, "mine") == ["Bearer sk-a1"]
    assert (await Channel.get(id=channel["id"])).key.splitlines() == ["sk-a1", "sk-a2"]


async def test_root_moves_the_stored_keys(root: ApiClient, provider) -> None:
    single, multi = await keyed_channel(root, provider), await keyed_channel(root, provider, multi=True)
    for channel in (single, multi):
        moved = await root.put("/api/channel/", {"id": channel["id"], "base_url": url(provider, "mine")})
        assert moved["success"], moved
        assert (await root.get(f"/api/channel/test/{channel['id']}"))["success"]
    assert (await Channel.get(id=single["id"])).key == SECRET
    assert (await Channel.get(id=multi["id"])).key.splitlines() == [SECRET, OTHER_SECRET]
    assert keys_seen(provider, "mine")[0] == f"Bearer {SECRET}"


async def test_tag_edits_and_copies_keep_the_address(root: ApiClient, admin: ApiClient, provider) -> None:
    """The other paths that write a channel: a tag's batch edit takes no address, a copy keeps the source's."""
    channel = await keyed_channel(root, provider)
    await Channel.filter(id=channel["id"]).update(tag="team")
    edited = await admin.put("/api/channel/tag", {"tag": "team", "base_url": url(provider, "mine"), "priority": 3})
    assert edited["success"] and edited["data"] == 1
    copied = await admin.post(f"/api/channel/copy/{channel['id']}", {})
    for row in (await Channel.get(id=channel["id"]), await Channel.get(id=copied["data"]["id"])):
        assert (row.base_url, row.key) == (url(provider, "legit"), SECRET)
    assert (await admin.put("/api/channel/", {"id": copied["data"]["id"], "base_url": url(provider, "mine")}))[
        "message"] == REFUSED
