"""Tokens (API keys): CRUD, the token-form rules, displayed statuses, ownership, roles, relay invalidation."""
from __future__ import annotations

import re
import time

import pytest

from api import keys
from api.services.billing.balances import token_quota_key
from api.services.passwords import sha256_hex
from models import Token
from models.enums import Role
from tests.helpers import ApiClient, both_databases, eventually

FUTURE = int(time.time()) + 86400
BASE = {"name": "main", "remain_quota": 500000, "expired_time": -1, "unlimited_quota": False}



async def create(api: ApiClient, **fields) -> dict:
    body = await api.post("/api/token/", {**BASE, **fields})
    assert body["success"], body
    return body["data"]


@both_databases
async def test_create_list_get_update_delete(login_as) -> None:
    alice, user = await login_as("alice")
    created = await create(alice, name="first", model_limits_enabled=True, model_limits="gpt-4o, gpt-4o-mini,,gpt-4o",
                           allow_ips="10.0.0.1\n\n192.168.0.0/24\n", expired_time=FUTURE)
    assert re.fullmatch(r"[0-9A-Za-z]{48}", created["key"])
    assert created["status"] == 1 and created["user_id"] == user.id
    assert created["model_limits"] == "gpt-4o,gpt-4o-mini"
    assert created["allow_ips"] == "10.0.0.1\n192.168.0.0/24"
    for i in range(3):
        await create(alice, name=f"extra-{i}")

    page = (await alice.get("/api/token/?p=0&size=2"))["data"]
    assert page["total"] == 4 and page["page"] == 0 and page["page_size"] == 2
    assert [t["name"] for t in page["items"]] == ["extra-2", "extra-1"]
    last = (await alice.get("/api/token/?p=1&size=3"))["data"]
    assert [t["name"] for t in last["items"]] == ["first"]

    got = (await alice.get(f"/api/token/{created['id']}"))["data"]
    assert got["key"] == created["key"]

    body = await alice.put("/api/token/", {"id": created["id"], "name": "renamed", "remain_quota": 7,
                                           "unlimited_quota": False, "expired_time": -1, "group": "vip"})
    assert body["success"], body
    assert body["data"]["name"] == "renamed" and body["data"]["remain_quota"] == 7
    row = await Token.get(id=created["id"])
    assert (row.name, row.remain_quota, row.expired_time, row.group) == ("renamed", 7, -1, "vip")
    assert row.model_limits == "gpt-4o,gpt-4o-mini"  # fields not sent stay as they were

    assert (await alice.delete(f"/api/token/{created['id']}/"))["success"]
    assert not await Token.filter(id=created["id"]).exists()
    assert (await alice.get(f"/api/token/{created['id']}"))["success"] is False


async def test_search_by_name_and_key(login_as) -> None:
    alice, _ = await login_as("alice")
    one = await create(alice, name="alpha-prod")
    await create(alice, name="beta")
    by_name = (await alice.get("/api/token/search?keyword=alpha"))["data"]
    assert [t["id"] for t in by_name["items"]] == [one["id"]] and by_name["total"] == 1
    by_key = (await alice.get(f"/api/token/search?token=sk-{one['key'][5:20]}"))["data"]
    assert [t["id"] for t in by_key["items"]] == [one["id"]]
    assert (await alice.get("/api/token/search?keyword=nothing"))["data"]["items"] == []


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": ""}, "Please enter a token name"),
    ({"name": "x" * 31}, "The token name is too long (at most 30 characters)"),
    ({"remain_quota": -1}, "The remaining quota must be an integer of at least 0 (or choose unlimited quota)"),
    ({"remain_quota": 1.5}, "Invalid parameter: remain_quota"),
    ({"remain_quota": "many"}, "Invalid parameter: remain_quota"),
    ({"expired_time": 1000}, "The expiry must be -1 (never expires) or a time in the future"),
    ({"expired_time": "tomorrow"}, "Invalid parameter: expired_time"),
    ({"allow_ips": "10.0.0.1\nnot-an-ip"}, "Invalid IP address or network in the allowed IPs: not-an-ip"),
    ({"allow_ips": "300.1.1.1"}, "Invalid IP address or network in the allowed IPs: 300.1.1.1"),
    ({"group": "svip"}, "The group svip is not selectable"),
    ({"model_limits": 5}, "Invalid parameter: model_limits"),
])
async def test_token_form_rules(login_as, fields: dict, message: str) -> None:
    alice, _ = await login_as("alice")
    body = await alice.post("/api/token/", {**BASE, **fields})
    assert body == {"success": False, "message": message, "data": None}
    assert await Token.all().count() == 0


async def test_name_is_required_on_create_only(login_as) -> None:
    alice, _ = await login_as("alice")
    body = await alice.post("/api/token/", {"remain_quota": 1, "expired_time": -1})
    assert body["message"] == "Please enter a token name"
    created = await create(alice)
    body = await alice.put("/api/token/", {"id": created["id"], "remain_quota": 9})
    assert body["success"] and body["data"]["name"] == "main"


async def test_unlimited_quota_and_own_group(login_as) -> None:
    alice, _ = await login_as("alice", group="svip")
    created = await create(alice, unlimited_quota=True, remain_quota=0, group="svip")
    assert created["unlimited_quota"] is True and created["status"] == 1 and created["group"] == "svip"
    chinese = await alice.post("/api/token/", {**BASE, "name": ""}, headers={"Accept-Language": "zh-CN"})
    assert chinese["message"] == "请输入令牌名称"


async def test_a_group_no_longer_selectable_may_be_kept(login_as, root: ApiClient) -> None:
    alice, _ = await login_as("alice")
    created = await create(alice, group="vip")
    await root.put("/api/option/", {"key": "UserUsableGroups", "value": '{"default": "默认分组"}'})

    async def vip_gone() -> bool:
        body = await alice.post("/api/token/", {**BASE, "group": "vip"})
        return body["message"] == "The group vip is not selectable"

    await eventually(vip_gone)
    body = await alice.put("/api/token/", {"id": created["id"], "name": "kept", "group": "vip"})
    assert body["success"] and body["data"]["group"] == "vip"


async def test_displayed_status_expired_and_exhausted(login_as) -> None:
    alice, user = await login_as("alice")
    expired = await Token.create(user_id=user.id, key="e" * 48, name="old", expired_time=int(time.time()) - 5,
                                 remain_quota=10)
    spent = await Token.create(user_id=user.id, key="s" * 48, name="spent", remain_quota=0)
    unlimited = await Token.create(user_id=user.id, key="u" * 48, name="free", remain_quota=0, unlimited_quota=True)
    items = {t["id"]: t["status"] for t in (await alice.get("/api/token/"))["data"]["items"]}
    assert items == {expired.id: 3, spent.id: 4, unlimited.id: 1}

    # Neither can be enabled until the reason is gone.
    body = await alice.put("/api/token/?status_only=true", {"id": expired.id, "status": 1})
    assert body["success"] is False and "expired" in body["message"]
    body = await alice.put("/api/token/?status_only=true", {"id": spent.id, "status": 1})
    assert body["success"] is False and "used up" in body["message"]
    # An edit of an expired token may keep its (past) expiry, e.g. a rename.
    body = await alice.put("/api/token/", {"id": expired.id, "name": "renamed", "expired_time": expired.expired_time})
    assert body["success"] and body["data"]["status"] == 3
    body = await alice.put("/api/token/", {"id": spent.id, "remain_quota": 100})
    assert body["data"]["status"] == 1


async def test_relay_marked_status_recovers_after_edit(login_as) -> None:
    alice, user = await login_as("alice")
    token = await Token.create(user_id=user.id, key="x" * 48, name="t", status=4, remain_quota=0)
    body = await alice.put("/api/token/", {"id": token.id, "remain_quota": 50})
    assert body["data"]["status"] == 1
    assert (await Token.get(id=token.id)).status == 1


async def test_status_only_toggles_enabled_and_disabled(login_as) -> None:
    alice, _ = await login_as("alice")
    created = await create(alice)
    body = await alice.put("/api/token/?status_only=true", {"id": created["id"], "status": 2})
    assert body["success"] and body["data"]["status"] == 2
    assert (await Token.get(id=created["id"])).status == 2
    body = await alice.put("/api/token/?status_only=true", {"id": created["id"], "status": 1, "name": "ignored"})
    assert body["data"]["status"] == 1 and body["data"]["name"] == "main"
    for status in (3, 4, 0, True, "1"):
        body = await alice.put("/api/token/?status_only=true", {"id": created["id"], "status": status})
        assert body["message"] == "A token can only be enabled (1) or disabled (2)", status


@both_databases
async def test_a_user_never_reads_or_changes_another_users_token(login_as) -> None:
    alice, _ = await login_as("alice")
    admin, _ = await login_as("boss", role=Role.ADMIN)
    bob, _ = await login_as("bob")
    secret = await create(alice, name="alice-key")
    token_id = secret["id"]
    for intruder in (bob, admin):
        assert (await intruder.get(f"/api/token/{token_id}"))["message"] == "Token not found"
        listing = (await intruder.get("/api/token/"))["data"]
        assert listing["items"] == [] and listing["total"] == 0
        found = (await intruder.get(f"/api/token/search?keyword=alice&token={secret['key']}"))["data"]
        assert found["items"] == []
        body = await intruder.put("/api/token/", {"id": token_id, "name": "stolen", "remain_quota": 10**9})
        assert body["message"] == "Token not found"
        body = await intruder.put("/api/token/?status_only=true", {"id": token_id, "status": 2})
        assert body["message"] == "Token not found"
        assert (await intruder.delete(f"/api/token/{token_id}/"))["message"] == "Token not found"
    row = await Token.get(id=token_id)
    assert (row.name, row.remain_quota, row.status) == ("alice-key", 500000, 1)
    # The admin's own tokens are theirs alone as well.
    mine = await create(admin, name="admin-key")
    assert [t["id"] for t in (await admin.get("/api/token/"))["data"]["items"]] == [mine["id"]]
    assert [t["id"] for t in (await alice.get("/api/token/"))["data"]["items"]] == [token_id]


async def test_token_routes_need_a_login(anon: ApiClient) -> None:
    for method, path in [("GET", "/api/token/"), ("GET", "/api/token/search?keyword=a"), ("GET", "/api/token/1"),
                         ("POST", "/api/token/"), ("PUT", "/api/token/"), ("DELETE", "/api/token/1/")]:
        body = await anon.request(method, path, json=BASE, expect_status=401)
        assert body["success"] is False


async def test_every_change_reaches_the_relay(client, login_as) -> None:
    alice, user = await login_as("alice")
    seen: list[dict] = []
    client.app[keys.EVENTS].subscribe("token", seen.append)
    redis = client.app[keys.STORE].redis
    created = await create(alice)
    key_hash = sha256_hex(created["key"])
    balance = token_quota_key(client.app[keys.STORE], user.id, created["id"])

    async def announced(count: int) -> bool:
        return len([m for m in seen if m == {"kind": "token", "id": created["id"], "key_hash": key_hash}]) >= count

    await eventually(lambda: announced(1))
    changes = [
        ("PUT", "/api/token/", {"id": created["id"], "remain_quota": 3}),
        ("PUT", "/api/token/?status_only=true", {"id": created["id"], "status": 2}),
        ("DELETE", f"/api/token/{created['id']}/", None),
    ]
    for n, (method, path, payload) in enumerate(changes, start=2):
        await redis.set(balance, 499000)  # the relay's live counter
        assert (await alice.request(method, path, json=payload))["success"]
        assert await redis.exists(balance) == 0  # dropped: reloaded from the database on next use
        await eventually(lambda n=n: announced(n))
    assert all(created["key"] not in str(m) for m in seen)  # the key itself never goes over pub/sub
