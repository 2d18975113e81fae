"""User management (admin routes) and the role matrix of every account route."""
from __future__ import annotations

import itertools

import orjson
import pytest

from api import keys
from api.services.billing.balances import user_quota_key
from api.services.passwords import sha256_hex
from models import Log, User
from models.enums import LogType, Role, UserStatus
from tests.fakes.browsers import Browsers, set_options
from tests.helpers import ApiClient, both_databases, eventually, make_user


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


@pytest.fixture
def user_events(client) -> list[int]:
    seen: list[int] = []
    client.server.app[keys.EVENTS].subscribe("user", lambda message: seen.append(message["id"]))
    return seen


async def published(seen: list[int], user_id: int) -> None:
    async def check() -> bool:
        return user_id in seen

    await eventually(check)


# -- list, search, get -------------------------------------------------------------------------------
@both_databases
async def test_list_is_paged_newest_first(root: ApiClient) -> None:
    for i in range(14):
        await make_user(f"user{i:02d}")
    first = (await root.get("/api/user/?p=0"))["data"]
    assert (first["total"], first["page"], first["page_size"], len(first["items"])) == (15, 0, 10, 10)
    assert first["items"][0]["username"] == "user13"
    assert all("password" not in item and "access_token" not in item for item in first["items"])
    second = (await root.get("/api/user/?p=1"))["data"]
    assert [u["username"] for u in second["items"]][-1] == "root" and len(second["items"]) == 5
    big = (await root.get("/api/user/?p=0&page_size=20"))["data"]
    assert len(big["items"]) == 15 and big["page_size"] == 20
    assert (await root.get("/api/user/?p=0&page_size=1000"))["data"]["page_size"] == 100
    body = await root.get("/api/user/?p=x")
    assert body == {"success": False, "message": "Invalid parameter: p", "data": None}


@both_databases
async def test_search_by_keyword_and_group(root: ApiClient) -> None:
    alice = await make_user("alice", display_name="Wonder", email="alice@example.com")
    await make_user("bob", group="vip", email="bob@corp.example")
    await make_user("carol", group="vip", display_name="Alice's friend")

    async def names(query: str) -> list[str]:
        data = (await root.get(f"/api/user/search?{query}"))["data"]
        assert data["total"] == len(data["items"])
        return sorted(u["username"] for u in data["items"])

    assert await names("keyword=ALICE") == ["alice", "carol"]
    assert await names("keyword=wonder") == ["alice"]
    assert await names("keyword=corp.example") == ["bob"]
    assert await names(f"keyword={alice.id}") == ["alice"]
    assert await names("group=vip") == ["bob", "carol"]
    assert await names("keyword=alice&group=vip") == ["carol"]
    data = (await root.get("/api/user/search?group=vip&p=1&page_size=1"))["data"]
    assert (data["total"], len(data["items"]), data["page"]) == (2, 1, 1)


async def test_get_user_respects_roles(browsers: Browsers, root: ApiClient) -> None:
    plain = await make_user("plain")
    other_admin = await make_user("other", role=Role.ADMIN)
    _, admin = await browsers.user("admin1", role=Role.ADMIN)
    assert (await admin.get(f"/api/user/{plain.id}"))["data"]["username"] == "plain"
    body = await admin.get(f"/api/user/{other_admin.id}")
    assert body["message"] == "You cannot manage a user of the same or a higher role"
    assert (await root.get(f"/api/user/{other_admin.id}"))["data"]["role"] == 10
    assert (await root.get("/api/user/99999"))["message"] == "User not found"


# -- create, update -----------------------------------------------------------------------------------
async def test_create_user(client, root: ApiClient) -> None:
    await set_options(client, QuotaForNewUser=77)
    for body, message in [({"username": "", "password": "password123"}, "Please enter username and password"),
                          ({"username": "new1", "password": "short"}, "Password length must not be below 8"),
                          ({"username": "root", "password": "password123"}, "The username is already taken")]:
        answer = await root.post("/api/user/", body)
        assert answer == {"success": False, "message": message, "data": None}
    assert await User.all().count() == 1

    body = await root.post("/api/user/", {"username": "new1", "display_name": "New One", "password": "password123",
                                          "role": 100})
    assert body["success"], body
    user = await User.get(username="new1")
    assert (user.display_name, user.role, user.quota) == ("New One", Role.USER, 77)
    assert await Log.filter(user_id=user.id, type=LogType.SYSTEM, quota=77).exists()


@both_databases
async def test_update_user_sets_quota_and_moves_the_live_balance(client, root: ApiClient,
                                                                user_events: list[int]) -> None:
    user = await make_user("alice", quota=1000)
    store = client.server.app[keys.STORE]
    await store.redis.set(user_quota_key(store, user.id), 900)  # live: 100 spent, not yet settled
    body = await root.put("/api/user/", {**user.public_dict(), "quota": 5000, "group": "vip",
                                         "display_name": "Alice", "password": ""})
    assert body["success"], body
    assert body["data"]["quota"] == 5000 and body["data"]["group"] == "vip"
    await user.refresh_from_db()
    assert (user.quota, user.group, user.display_name) == (5000, "vip", "Alice")
    assert int(await store.redis.get(user_quota_key(store, user.id))) == 4900
    log = await Log.get(user_id=user.id)
    assert log.type == LogType.MANAGE and log.quota == 4000 and "root" in log.content
    assert orjson.loads(log.other) == {"event": "admin_quota", "params": {"admin": "root", "old": 1000, "new": 5000}}
    await published(user_events, user.id)
    assert await browsers_login_ok("alice", "password123", client)


async def browsers_login_ok(username: str, password: str, client) -> bool:
    api = Browsers(client)
    try:
        return (await api.new().post("/api/user/login", {"username": username, "password": password}))["success"]
    finally:
        await api.close()


async def test_update_user_refusals_change_nothing(client, root: ApiClient, browsers: Browsers) -> None:
    user = await make_user("alice", quota=10, group="default")
    await make_user("bob")
    peer = await make_user("peer", role=Role.ADMIN)
    _, admin = await browsers.user("admin1", role=Role.ADMIN)
    before = await User.get(id=user.id).values()
    for api, body, message in [
        (root, {"id": user.id, "group": "no-such-group"}, "Unknown group: no-such-group"),
        (root, {"id": user.id, "password": "short"}, "Password length must not be below 8"),
        (root, {"id": user.id, "username": "bob"}, "The username is already taken"),
        (root, {"id": user.id, "quota": "lots"}, "The quota must be an integer"),
        (root, {"id": user.id, "quota": 1.5}, "The quota must be an integer"),
        (root, {"id": user.id, "username": "a" * 21}, "The username must be at most 20 characters"),
        (root, {"id": 424242, "quota": 1}, "User not found"),
        (admin, {"id": peer.id, "quota": 1}, "You cannot manage a user of the same or a higher role"),
    ]:
        answer = await api.put("/api/user/", body)
        assert answer == {"success": False, "message": message, "data": None}
    assert await User.get(id=user.id).values() == before
    assert await Log.all().count() == 0


async def test_admin_password_change_ends_the_users_sessions(root: ApiClient, browsers: Browsers) -> None:
    user, api = await browsers.user("alice")
    assert (await root.put("/api/user/", {"id": user.id, "password": "brand-new-pass"}))["success"]
    await api.get("/api/user/self", expect_status=401)
    await browsers.login("alice", "brand-new-pass")


# -- manage -----------------------------------------------------------------------------------------
@both_databases
async def test_manage_actions(client, root: ApiClient, browsers: Browsers, user_events: list[int]) -> None:
    user, api = await browsers.user("alice", access_token=sha256_hex("alice-token"))
    script = {"Authorization": "alice-token", "New-Api-User": str(user.id)}

    assert (await root.post("/api/verify", {"method": "password", "password": "123456"}))["success"]
    body = await root.post("/api/user/manage", {"id": user.id, "action": "promote"})
    assert body["data"] == {"role": 10, "status": 1, "DeletedAt": None}
    body = await root.post("/api/user/manage", {"id": user.id, "action": "promote"})
    assert body["message"] == "The user is already an admin"
    body = await root.post("/api/user/manage", {"id": user.id, "action": "demote"})
    assert body["data"]["role"] == 1
    body = await root.post("/api/user/manage", {"id": user.id, "action": "demote"})
    assert body["message"] == "The user is already an ordinary user"

    body = await root.post("/api/user/manage", {"id": user.id, "action": "disable"})
    assert body["data"] == {"role": 1, "status": 2, "DeletedAt": None}
    await api.get("/api/user/self", expect_status=401)  # the session ended at once
    await browsers.new().get("/api/user/self", headers=script, expect_status=401)  # and the access token
    await published(user_events, user.id)
    refused = await browsers.new().post("/api/user/login", {"username": "alice", "password": "password123"})
    assert refused["message"] == "This user has been banned"

    body = await root.post("/api/user/manage", {"id": user.id, "action": "enable"})
    assert body["data"]["status"] == 1
    assert (await browsers.new().get("/api/user/self", headers=script))["success"]

    body = await root.post("/api/user/manage", {"id": str(user.id), "action": "delete"})
    assert body["data"]["DeletedAt"] > 0
    await user.refresh_from_db()
    assert user.deleted_at is not None and user.access_token is None
    body = await root.post("/api/user/manage", {"id": user.id, "action": "enable"})
    assert body["message"] == "This account has been deleted"
    listed = (await root.get("/api/user/search?keyword=alice"))["data"]["items"]
    assert listed[0]["DeletedAt"] == user.deleted_at  # shown as deregistered


async def test_manage_rules(root: ApiClient, browsers: Browsers) -> None:
    root_user = await User.get(username="root")
    assert (await root.post("/api/verify", {"method": "password", "password": "123456"}))["success"]
    plain = await make_user("plain")
    peer = await make_user("peer", role=Role.ADMIN)
    admin_user, admin = await browsers.user("admin1", role=Role.ADMIN)
    cases = [
        (admin, plain.id, "promote", "Only the super admin can promote a user to admin"),
        (admin, peer.id, "disable", "You cannot manage a user of the same or a higher role"),
        (admin, admin_user.id, "demote", "You cannot manage a user of the same or a higher role"),
        (admin, root_user.id, "delete", "You cannot manage a user of the same or a higher role"),
        (root, root_user.id, "demote", "The super admin cannot be demoted"),
        (root, root_user.id, "disable", "The super admin cannot be disabled"),
        (root, root_user.id, "delete", "The super admin cannot be deleted"),
        (root, plain.id, "explode", "Unknown action: explode"),
        (root, 777777, "disable", "User not found"),
        (root, "abc", "disable", "Invalid parameter: id"),
    ]
    before = await User.all().order_by("id").values("id", "role", "status", "deleted_at")
    for api, target, action, message in cases:
        body = await api.post("/api/user/manage", {"id": target, "action": action})
        assert body == {"success": False, "message": message, "data": None}, (target, action)
    assert await User.all().order_by("id").values("id", "role", "status", "deleted_at") == before

    # An admin manages ordinary users (everything but promote).
    for action, expected in [("disable", (1, 2)), ("enable", (1, 1))]:
        body = await admin.post("/api/user/manage", {"id": plain.id, "action": action})
        assert (body["data"]["role"], body["data"]["status"]) == expected
    assert (await admin.delete(f"/api/user/{plain.id}"))["data"]["DeletedAt"] > 0


# -- the role matrix --------------------------------------------------------------------------------
ROLES = {"anonymous": None, "user": Role.USER, "admin": Role.ADMIN, "root": Role.ROOT}
counter = itertools.count()


async def route_calls(client) -> list[tuple[str, str, str, dict | None]]:
    """(required role, method, path, body) for every account route, each aimed at a fresh target so a
    permitted call succeeds."""
    target = await make_user(f"target{next(counter)}")
    deletable = await make_user(f"del{next(counter)}")
    managed = await make_user(f"mgd{next(counter)}")
    n = next(counter)
    return [
        ("user", "GET", "/api/user/self", None),
        ("user", "PUT", "/api/user/self", {"display_name": "Me"}),
        ("user", "GET", "/api/user/token", None),
        ("user", "GET", "/api/user/aff", None),
        ("user", "POST", "/api/user/aff_transfer", {"quota": 0}),
        ("user", "GET", "/api/user/models", None),
        ("user", "GET", "/api/user/self/groups", None),
        ("user", "GET", "/api/oauth/wechat/bind?code=x", None),
        ("user", "GET", "/api/oauth/email/bind?email=a@b.example&code=x", None),
        ("admin", "GET", "/api/user/?p=0", None),
        ("admin", "GET", "/api/user/search?keyword=target", None),
        ("admin", "GET", f"/api/user/{target.id}", None),
        ("admin", "POST", "/api/user/", {"username": f"made{n}", "password": "password123"}),
        ("admin", "PUT", "/api/user/", {"id": target.id, "display_name": "Edited"}),
        ("admin", "POST", "/api/user/manage", {"id": managed.id, "action": "disable"}),
        ("admin", "DELETE", f"/api/user/{deletable.id}", None),
        ("admin", "GET", "/api/group/", None),
        ("anonymous", "GET", "/api/oauth/state", None),
        ("anonymous", "POST", "/api/user/register", {"username": f"reg{n}", "password": "password123"}),
        ("anonymous", "GET", "/api/user/logout", None),
    ]


# Routes that answer a business refusal even for a permitted caller (the argument is deliberately
# not valid: the matrix checks who gets past the gate).
REFUSED_WHEN_PERMITTED = {"/api/user/aff_transfer", "/api/oauth/wechat/bind?code=x",
                          "/api/oauth/email/bind?email=a@b.example&code=x"}


@pytest.mark.parametrize("who", list(ROLES))
async def test_role_matrix(client, browsers: Browsers, who: str) -> None:
    role = ROLES[who]
    if role is None:
        api = browsers.new()
    elif role == Role.ROOT:
        api = await browsers.login("root", "123456")
    else:
        _, api = await browsers.user(f"caller{next(counter)}", role=role)
    rank = {"anonymous": 0, "user": 1, "admin": 10, "root": 100}
    for needed, method, path, body in await route_calls(client):
        allowed = rank[who] >= rank[needed]
        if needed != "anonymous" and who == "anonymous":
            answer = await api.request(method, path, json=body, expect_status=401)
            assert answer["message"] == "Not logged in or login expired, please log in again", path
        elif not allowed:
            answer = await api.request(method, path, json=body)
            assert answer == {"success": False, "message": "You are not allowed to do this", "data": None}, path
        else:
            # A refused route may ask a fresh verification first (403: the e-mail binding).
            answer = await api.request(method, path, json=body, expect_status=None)
            if path in REFUSED_WHEN_PERMITTED:
                assert answer["success"] is False and answer["message"] != "You are not allowed to do this", path
            else:
                assert answer["success"] is True, (path, answer)


async def test_anonymous_list_changes_nothing(client, browsers: Browsers) -> None:
    target = await make_user("target")
    anon = browsers.new()
    await anon.request("POST", "/api/user/manage", json={"id": target.id, "action": "disable"}, expect_status=401)
    await anon.request("PUT", "/api/user/", json={"id": target.id, "quota": 99}, expect_status=401)
    await target.refresh_from_db()
    assert (target.status, target.quota) == (UserStatus.ENABLED, 0)


async def test_api_keys_stop_at_once_when_the_owner_is_disabled_or_deleted(client, root: ApiClient) -> None:
    from models import Token

    user = await make_user("keyholder", quota=10**9)
    await Token.create(user_id=user.id, key="k" * 48, name="main", unlimited_quota=True)
    headers = {"Authorization": "Bearer sk-" + "k" * 48}

    async def status() -> int:
        resp = await client.get("/v1/models", headers=headers)
        await resp.read()
        return resp.status

    assert await status() == 200  # now cached in the relay (process and Redis)
    assert (await root.post("/api/user/manage", {"id": user.id, "action": "disable"}))["success"]

    async def refused() -> bool:
        return await status() != 200

    await eventually(refused, timeout=5)
    assert (await root.post("/api/user/manage", {"id": user.id, "action": "enable"}))["success"]

    async def accepted() -> bool:
        return await status() == 200

    await eventually(accepted, timeout=5)
    assert (await root.post("/api/user/manage", {"id": user.id, "action": "delete"}))["success"]
    await eventually(refused, timeout=5)
