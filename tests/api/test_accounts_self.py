"""Self-service: profile, password, deletion, access token, invite code and earnings, models, groups."""
from __future__ import annotations

import asyncio

import pytest

from api import keys
from api.services.billing.balances import user_quota_key
from api.services.passwords import sha256_hex
from models import Ability, Channel, Log, User
from models.enums import ChannelStatus, LogType, Role
from tests.fakes.browsers import Browsers, set_options
from tests.helpers import ApiClient, both_databases, eventually, make_user

UNIT = 500000


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


async def test_self_is_the_public_dict(browsers: Browsers) -> None:
    user, api = await browsers.user("alice", email="alice@example.com", quota=42,
                                    access_token=sha256_hex("secret-token"))
    data = (await api.get("/api/user/self"))["data"]
    assert data == user.public_dict()
    assert data["quota"] == 42 and data["email"] == "alice@example.com" and data["DeletedAt"] is None
    assert "password" not in data and "access_token" not in data


async def test_update_profile(browsers: Browsers) -> None:
    user, api = await browsers.user("alice")
    await make_user("taken")
    body = await api.put("/api/user/self", {"display_name": "Alice A."})
    assert body["success"], body
    body = await api.put("/api/user/self", {"username": "taken"})
    assert body == {"success": False, "message": "The username is already taken", "data": None}
    body = await api.put("/api/user/self", {"display_name": "x" * 21})
    assert body["message"] == "The display name must be at most 20 characters"
    body = await api.put("/api/user/self", {"username": "alice2"})
    assert body["success"]
    await user.refresh_from_db()
    assert (user.username, user.display_name) == ("alice2", "Alice A.")


async def test_password_change_needs_the_old_password_and_ends_other_sessions(browsers: Browsers) -> None:
    user, api = await browsers.user("alice")
    other = await browsers.login("alice")
    before = user.password
    assert (await api.post("/api/verify", {"method": "password", "password": "password123"}))["success"]
    for body, message in [
        ({"password": "new-password-1"}, "Please enter your current password"),
        ({"password": "new-password-1", "original_password": "wrong-pass"}, "The current password is wrong"),
        ({"password": "short", "original_password": "password123"}, "Password length must not be below 8"),
        ({"password": "new-password-1", "password2": "new-password-2", "original_password": "password123"},
         "The two passwords differ"),
    ]:
        answer = await api.put("/api/user/self", body)
        assert answer == {"success": False, "message": message, "data": None}
        await user.refresh_from_db()
        assert user.password == before
    assert (await other.get("/api/user/self"))["success"]

    body = await api.put("/api/user/self", {"password": "new-password-1", "original_password": "password123"})
    assert body["success"], body
    assert (await api.get("/api/user/self"))["success"]  # this browser carries on
    await other.get("/api/user/self", expect_status=401)  # every other session ended
    failed = await browsers.new().post("/api/user/login", {"username": "alice", "password": "password123"})
    assert failed["success"] is False
    await browsers.login("alice", "new-password-1")


async def test_account_without_password_sets_one_without_the_old(client, browsers: Browsers) -> None:
    user = await User.create(username="oauthy", password="", github_id="7")
    api = browsers.new()
    api.headers["Authorization"] = "tok-oauthy"
    await User.filter(id=user.id).update(access_token=sha256_hex("tok-oauthy"))
    api.user_id = user.id
    assert (await api.put("/api/user/self", {"password": "first-password"}))["success"]
    await browsers.login("oauthy", "first-password")


async def test_self_deletion(client, browsers: Browsers, root: ApiClient) -> None:
    user, api = await browsers.user("alice", access_token=sha256_hex("alice-token"))
    body = await api.delete("/api/user/self")
    assert body == {"success": False, "message": "The administrator does not allow deleting your own account",
                    "data": None}
    await user.refresh_from_db()
    assert user.deleted_at is None

    await set_options(client, UserSelfDeletionEnabled=True)
    seen: list[int] = []
    client.server.app[keys.EVENTS].subscribe("user", lambda message: seen.append(message["id"]))
    other = await browsers.login("alice")
    assert (await api.delete("/api/user/self"))["success"]
    await user.refresh_from_db()
    assert user.deleted_at is not None and user.access_token is None
    await api.get("/api/user/self", expect_status=401)
    await other.get("/api/user/self", expect_status=401)
    token_client = browsers.new()
    await token_client.get("/api/user/self", headers={"Authorization": "alice-token", "New-Api-User": str(user.id)},
                           expect_status=401)
    body = await browsers.new().post("/api/user/login", {"username": "alice", "password": "password123"})
    assert body["message"] == "This account has been deleted"
    await eventually(lambda: _async(user.id in seen))

    body = await root.delete("/api/user/self")
    assert body["message"] == "The super admin account cannot be deleted"


async def _async(value):
    return value


async def test_access_token_is_new_each_time(browsers: Browsers) -> None:
    user, api = await browsers.user("alice")
    first = (await api.get("/api/user/token"))["data"]
    second = (await api.get("/api/user/token"))["data"]
    assert isinstance(first, str) and len(first) >= 32 and first != second
    await user.refresh_from_db()
    assert user.access_token == sha256_hex(second)  # only the hash is stored

    script = browsers.new()
    headers = {"New-Api-User": str(user.id)}
    body = await script.get("/api/user/self", headers={**headers, "Authorization": f"Bearer {second}"})
    assert body["data"]["username"] == "alice"
    await script.get("/api/user/self", headers={**headers, "Authorization": first}, expect_status=401)


async def test_aff_code_created_once(browsers: Browsers) -> None:
    user, api = await browsers.user("alice")
    codes = await asyncio.gather(*(api.get("/api/user/aff") for _ in range(4)))
    values = {c["data"] for c in codes}
    assert len(values) == 1
    code = values.pop()
    assert len(code) == 6
    await user.refresh_from_db()
    assert user.aff_code == code
    assert (await api.get("/api/user/aff"))["data"] == code


@both_databases
async def test_aff_transfer(client, browsers: Browsers) -> None:
    user, api = await browsers.user("alice", aff_quota=3 * UNIT, quota=10)
    store = client.server.app[keys.STORE]
    await store.redis.set(user_quota_key(store, user.id), 10)  # a live balance the relay loaded

    for amount, message in [(UNIT - 1, "Transfer amount minimum is $1.000000"),
                            (4 * UNIT, "Not enough invite quota"),
                            ("many", "The quota must be an integer"),
                            (None, "The quota must be an integer")]:
        body = await api.post("/api/user/aff_transfer", {"quota": amount})
        assert body == {"success": False, "message": message, "data": None}
    await user.refresh_from_db()
    assert (user.aff_quota, user.quota) == (3 * UNIT, 10)

    assert (await api.post("/api/user/aff_transfer", {"quota": 2 * UNIT}))["success"]
    await user.refresh_from_db()
    assert (user.aff_quota, user.quota, user.aff_history_quota) == (UNIT, 2 * UNIT + 10, 0)
    assert int(await store.redis.get(user_quota_key(store, user.id))) == 2 * UNIT + 10
    log = await Log.get(user_id=user.id)
    assert log.type == LogType.SYSTEM and log.quota == 2 * UNIT


@both_databases
async def test_parallel_aff_transfers_cannot_overdraw(client, browsers: Browsers) -> None:
    user, api = await browsers.user("alice", aff_quota=3 * UNIT)
    others = [await browsers.login("alice") for _ in range(3)]
    callers = [api, *others]
    answers = await asyncio.gather(*(callers[i % 4].post("/api/user/aff_transfer", {"quota": UNIT})
                                     for i in range(10)))
    assert sum(a["success"] for a in answers) == 3
    assert {a["message"] for a in answers if not a["success"]} == {"Not enough invite quota"}
    await user.refresh_from_db()
    assert (user.aff_quota, user.quota) == (0, 3 * UNIT)
    assert await Log.filter(user_id=user.id).count() == 3


@both_databases
async def test_models_of_my_group_from_enabled_channels(browsers: Browsers) -> None:
    _, api = await browsers.user("alice")
    _, vip = await browsers.user("victor", group="vip")
    on = await Channel.create(name="on", key="k1", models="gpt-4o,gpt-4o-mini", group="default,vip")
    off = await Channel.create(name="off", key="k2", models="claude-3", group="default",
                               status=int(ChannelStatus.MANUALLY_DISABLED))
    await Ability.bulk_create([
        Ability(group="default", model="gpt-4o-mini", channel_id=on.id),
        Ability(group="default", model="gpt-4o", channel_id=on.id),
        Ability(group="vip", model="gpt-4o", channel_id=on.id),
        Ability(group="default", model="claude-3", channel_id=off.id),
        Ability(group="default", model="o1", channel_id=on.id, enabled=False),
        Ability(group="default", model="house-model-without-price", channel_id=on.id),  # the relay would refuse it
    ])
    assert (await api.get("/api/user/models"))["data"] == ["gpt-4o", "gpt-4o-mini"]
    assert (await vip.get("/api/user/models"))["data"] == ["gpt-4o"]


async def test_self_groups_and_group_list(client, browsers: Browsers, root: ApiClient) -> None:
    await set_options(client, GroupRatio='{"default": 1, "vip": 0.5, "svip": 2}',
                      UserUsableGroups='{"default": "Default group", "vip": "VIP group"}')
    _, api = await browsers.user("alice", group="svip")
    data = (await api.get("/api/user/self/groups"))["data"]
    assert data == {"default": {"ratio": 1, "desc": "Default group"}, "vip": {"ratio": 0.5, "desc": "VIP group"},
                    "svip": {"ratio": 2, "desc": "svip"}}
    assert (await root.get("/api/group/"))["data"] == ["default", "vip", "svip"]
    body = await api.get("/api/group/")
    assert body == {"success": False, "message": "You are not allowed to do this", "data": None}
    # new-api's public list: groups both usable and priced, name → description (no login needed).
    public = await ApiClient(client).get("/api/user/groups")
    assert public["data"] == {"default": "Default group", "vip": "VIP group"}


async def test_disabled_user_is_cut_off_at_once(client, browsers: Browsers, root: ApiClient) -> None:
    user, api = await browsers.user("alice", role=Role.USER)
    assert (await root.post("/api/user/manage", {"id": user.id, "action": "disable"}))["success"]
    body = await api.get("/api/user/self", expect_status=401)
    assert body["success"] is False
