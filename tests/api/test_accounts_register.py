"""Registration, login, Turnstile and the per-IP limits of the account routes."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from api.app import create_app
from models import Log, User
from models.enums import LogType, Role, UserStatus
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.providers import FakeProviders, pointed_at, start_providers
from tests.helpers import ApiClient, both_databases, make_user


@pytest.fixture
async def providers(aiohttp_server) -> FakeProviders:
    return await start_providers(aiohttp_server)


@pytest.fixture
def settings(settings, providers: FakeProviders):
    return pointed_at(settings, providers)


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


def registration(username: str = "alice", password: str = "password123", **extra: object) -> dict:
    return {"username": username, "password": password, "password2": password, **extra}


@both_databases
async def test_register_then_log_in(anon: ApiClient) -> None:
    body = await anon.post("/api/user/register", registration(email="ignored@example.com"))
    assert body == {"success": True, "message": "", "data": None}
    user = await User.get(username="alice")
    assert user.role == Role.USER and user.status == UserStatus.ENABLED and user.group == "default"
    assert user.display_name == "alice" and user.quota == 0
    assert user.email == ""  # an unverified address is not taken
    assert user.password.startswith("$2") and "password123" not in user.password
    assert await Log.filter(user_id=user.id).count() == 0  # nothing credited, nothing logged

    data = await anon.login("alice", "password123")
    assert data == {"id": user.id, "username": "alice", "display_name": "alice", "role": 1, "status": 1,
                    "group": "default", "default_password": False}
    me = await anon.get("/api/user/self")
    assert me["data"]["username"] == "alice"


@both_databases
async def test_register_credits_and_invite(client, anon: ApiClient) -> None:
    await set_options(client, QuotaForNewUser=1000, QuotaForInvitee=300, QuotaForInviter=200)
    inviter = await make_user("inviter", aff_code="INV123", aff_quota=5, aff_history_quota=5)
    body = await anon.post("/api/user/register", registration("invitee", aff_code="INV123"))
    assert body["success"], body

    invitee = await User.get(username="invitee")
    assert invitee.quota == 1300 and invitee.inviter_id == inviter.id
    await inviter.refresh_from_db()
    assert (inviter.aff_count, inviter.aff_quota, inviter.aff_history_quota, inviter.quota) == (1, 205, 205, 0)

    logs = {(row.user_id, row.quota, row.type) for row in await Log.all()}
    assert logs == {(invitee.id, 1000, LogType.SYSTEM), (invitee.id, 300, LogType.SYSTEM),
                    (inviter.id, 200, LogType.SYSTEM)}
    contents = await Log.filter(user_id=inviter.id).values_list("content", flat=True)
    assert "invitee" in contents[0]


async def test_unknown_invite_code_is_ignored(client, anon: ApiClient) -> None:
    await set_options(client, QuotaForNewUser=10, QuotaForInvitee=300)
    assert (await anon.post("/api/user/register", registration(aff_code="nope")))["success"]
    user = await User.get(username="alice")
    assert user.quota == 10 and user.inviter_id == 0


@pytest.mark.parametrize(("body", "message"), [
    ({"username": "", "password": "password123"}, "Please enter username and password"),
    ({"username": "bob"}, "Please enter username and password"),
    (registration("a" * 21), "The username must be at most 20 characters"),
    (registration("two words"), "The username may not contain spaces or control characters"),
    (registration(password="short12"), "Password length must not be below 8"),
    (registration(password="x" * 65), "Password length must not exceed 64"),
    ({"username": "bob", "password": "password123", "password2": "password124"}, "The two passwords differ"),
])
async def test_register_refusals_change_nothing(anon: ApiClient, body: dict, message: str) -> None:
    answer = await anon.post("/api/user/register", body)
    assert answer == {"success": False, "message": message, "data": None}
    assert await User.all().count() == 1  # only root


async def test_register_message_in_chinese(anon: ApiClient) -> None:
    body = await anon.post("/api/user/register", registration(password="short"),
                           headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "密码长度不得小于 8 位"


async def test_register_switches(client, anon: ApiClient) -> None:
    await set_options(client, RegisterEnabled=False)
    body = await anon.post("/api/user/register", registration())
    assert body["message"] == "The administrator has turned off new registrations"
    await set_options(client, RegisterEnabled=True, PasswordRegisterEnabled=False)
    body = await anon.post("/api/user/register", registration())
    assert body["success"] is False and "registration with a password" in body["message"]
    assert not await User.filter(username="alice").exists()


async def test_username_taken_even_by_a_deleted_account(anon: ApiClient) -> None:
    await make_user("alice")
    await make_user("gone", deleted_at=1)
    for name in ("alice", "gone"):
        body = await anon.post("/api/user/register", registration(name))
        assert body == {"success": False, "message": "The username is already taken", "data": None}
    assert await User.all().count() == 3


@both_databases
async def test_parallel_registrations_of_one_username_create_one_user(client, browsers: Browsers) -> None:
    await set_options(client, QuotaForNewUser=100)
    answers = await asyncio.gather(*(browsers.new().post("/api/user/register", registration("racer"))
                                     for _ in range(6)))
    assert sum(a["success"] for a in answers) == 1
    assert {a["message"] for a in answers if not a["success"]} == {"The username is already taken"}
    assert await User.filter(username="racer").count() == 1
    assert await Log.filter(type=LogType.SYSTEM).count() == 1  # one credit, not six


# -- login -------------------------------------------------------------------------------------------
async def test_login_by_email_and_refusals(anon: ApiClient) -> None:
    await make_user("carol", email="carol@example.com")
    await make_user("banned", status=UserStatus.DISABLED)
    await make_user("deleted", deleted_at=1)
    data = await anon.login("Carol@Example.com", "password123")
    assert data["username"] == "carol"

    other = anon.fork()
    try:
        body = await other.post("/api/user/login", {"username": "banned", "password": "password123"})
        assert body == {"success": False, "message": "This user has been banned", "data": None}
        body = await other.post("/api/user/login", {"username": "deleted", "password": "password123"})
        assert body == {"success": False, "message": "This account has been deleted", "data": None}
        body = await other.post("/api/user/login", {"username": "banned", "password": "wrong-password"})
        assert body["message"] == "Wrong username or password, or the user has been banned"
        assert "session" not in {c.key for c in other.client.session.cookie_jar}
    finally:
        await other.client.session.close()


async def test_login_sets_a_fresh_session(anon: ApiClient) -> None:
    await make_user("dave")
    await anon.login("dave", "password123")
    first = {c.key: c.value for c in anon.client.session.cookie_jar}["session"]
    await anon.login("dave", "password123")
    second = {c.key: c.value for c in anon.client.session.cookie_jar}["session"]
    assert first != second  # no session fixation
    assert (await anon.get("/api/user/self"))["success"]


# -- Turnstile ----------------------------------------------------------------------------------------
async def enable_turnstile(client, providers: FakeProviders) -> None:
    await set_options(client, TurnstileSiteKey="site-key", TurnstileSecretKey=providers.turnstile_secret,
                      TurnstileCheckEnabled=True)


async def test_turnstile_guards_register_and_login(client, anon: ApiClient, providers: FakeProviders) -> None:
    await enable_turnstile(client, providers)
    body = await anon.post("/api/user/register", registration())
    assert body["message"] == "Please retry in a few seconds, Turnstile is checking"
    body = await anon.post("/api/user/register?turnstile=forged", registration())
    assert body["message"] == "Turnstile verification failed, refresh and try again"
    assert not await User.filter(username="alice").exists()

    providers.turnstile_tokens.add("good-token")
    body = await anon.post("/api/user/register?turnstile=good-token", registration())
    assert body["success"], body
    call = providers.calls_to("siteverify")[-1]
    assert call == {"secret": "ts-secret", "response": "good-token", "remoteip": "127.0.0.1"}

    # The session passed once: it is not asked again (the token was single use anyway).
    calls = len(providers.calls)
    await anon.login("alice", "password123")
    assert len(providers.calls) == calls

    fresh = anon.fork()
    try:
        body = await fresh.post("/api/user/login", {"username": "alice", "password": "password123"})
        assert body["message"] == "Please retry in a few seconds, Turnstile is checking"
    finally:
        await fresh.client.session.close()


async def test_turnstile_guards_the_mail_routes(client, anon: ApiClient, providers: FakeProviders) -> None:
    await set_options(client, SMTPServer="127.0.0.1", ServerAddress="https://gw.example.com")
    await enable_turnstile(client, providers)
    for path in ("/api/verification?email=a@example.com", "/api/reset_password?email=a@example.com"):
        body = await anon.get(path)
        assert body == {"success": False, "message": "Please retry in a few seconds, Turnstile is checking",
                        "data": None}
    providers.turnstile_tokens.add("mail-token")
    assert (await anon.get("/api/verification?email=a@example.com&turnstile=mail-token"))["success"]
    assert (await anon.get("/api/reset_password?email=a@example.com"))["success"]  # same session: passed


async def test_turnstile_unreachable(aiohttp_client, settings, providers: FakeProviders) -> None:
    closed = dataclasses.replace(settings, turnstile_verify_url="http://127.0.0.1:9/siteverify")
    client = await aiohttp_client(create_app(closed))
    await enable_turnstile(client, providers)
    body = await ApiClient(client).post("/api/user/login?turnstile=t", {"username": "root", "password": "123456"})
    assert body == {"success": False, "message": "Turnstile verification is unreachable, try again later",
                    "data": None}


# -- rate limits ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/api/user/login", {"username": "root", "password": "wrong-password"}),
    ("POST", "/api/user/register", registration("x" * 30)),
    ("GET", "/api/verification?email=someone@example.com", None),
    ("GET", "/api/reset_password?email=someone@example.com", None),
    ("POST", "/api/user/reset", {"email": "someone@example.com", "token": "x"}),
    ("GET", "/api/oauth/state", None),
    ("GET", "/api/oauth/github?code=c&state=s", None),
    ("GET", "/api/oauth/telegram/login?id=1", None),
])
async def test_critical_routes_are_limited_per_ip(aiohttp_client, settings, method: str, path: str,
                                                   body: dict | None) -> None:
    limited = dataclasses.replace(settings, rate_limit_critical=3)
    api = ApiClient(await aiohttp_client(create_app(limited)))
    for _ in range(3):
        await api.request(method, path, json=body)
    answer = await api.request(method, path, json=body, expect_status=429)
    assert answer == {"success": False, "message": "Too many requests, try again later", "data": None}
    assert await User.all().count() == 1
