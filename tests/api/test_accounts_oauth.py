"""Third-party login and binding against local fakes of GitHub, LINUX DO, the WeChat server and
Telegram's login widget; e-mail binding with a code."""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import time

import pytest

from api import keys
from api.services.accounts import mail
from models import Log, User
from models.enums import LogType, UserStatus
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.providers import FakeProviders, pointed_at, start_providers
from tests.helpers import ApiClient, both_databases, make_user

BOT_TOKEN = "123456:telegram-bot-token"


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


@pytest.fixture
async def enabled(client, providers: FakeProviders) -> FakeProviders:
    await set_options(
        client,
        GitHubClientId=providers.github_client[0], GitHubClientSecret=providers.github_client[1],
        GitHubOAuthEnabled=True,
        LinuxDoClientId=providers.linuxdo_client[0], LinuxDoClientSecret=providers.linuxdo_client[1],
        LinuxDoOAuthEnabled=True,
        WeChatServerAddress=providers.url, WeChatServerToken=providers.wechat_token, WeChatAuthEnabled=True,
        TelegramBotToken=BOT_TOKEN, TelegramBotName="gateway_bot", TelegramOAuthEnabled=True,
        ServerAddress="https://gw.example.com")
    return providers


async def state_of(api: ApiClient, aff: str = "") -> str:
    body = await api.get("/api/oauth/state" + (f"?aff={aff}" if aff else ""))
    assert body["success"] and len(body["data"]) == 12
    return body["data"]


GITHUB_USER = {"login": "octocat", "id": 583231, "name": "The Octocat", "email": "octocat@github.example"}


# -- GitHub -------------------------------------------------------------------------------------------
@both_databases
async def test_github_login_registers_then_logs_in(client, browsers: Browsers, enabled: FakeProviders) -> None:
    await set_options(client, QuotaForNewUser=100, QuotaForInvitee=10, QuotaForInviter=20)
    inviter = await make_user("inviter", aff_code="AFF777")
    api = browsers.new()
    state = await state_of(api, aff="AFF777")
    enabled.github_codes["code-1"] = GITHUB_USER
    body = await api.get(f"/api/oauth/github?code=code-1&state={state}")
    assert body["success"], body
    user = await User.get(github_id="583231")
    assert body["data"]["id"] == user.id and body["data"]["username"] == user.username
    assert user.username.startswith("github_") and len(user.username) <= 20
    assert (user.display_name, user.email, user.quota, user.inviter_id) == (
        "The Octocat", "octocat@github.example", 110, inviter.id)
    assert user.password == ""
    assert await Log.filter(user_id=user.id, type=LogType.SYSTEM).count() == 2
    assert enabled.calls_to("github_token")[0] == {"client_id": "gh-client", "client_secret": "gh-secret",
                                                   "code": "code-1"}
    api.user_id = user.id
    assert (await api.get("/api/user/self"))["data"]["github_id"] == "583231"  # the session works

    again = browsers.new()
    enabled.github_codes["code-2"] = {**GITHUB_USER, "login": "renamed"}
    body = await again.get(f"/api/oauth/github?code=code-2&state={await state_of(again)}")
    assert body["data"]["id"] == user.id
    assert await User.filter(github_id="583231").count() == 1


async def test_github_refusals_change_nothing(client, browsers: Browsers, enabled: FakeProviders) -> None:
    api = browsers.new()
    enabled.github_codes["good"] = GITHUB_USER
    body = await api.get("/api/oauth/github?code=good&state=forged-state")
    assert body == {"success": False, "message": "The state parameter is wrong or has expired, start the login again",
                    "data": None}
    assert enabled.calls_to("github_token") == []  # refused before asking GitHub

    body = await api.get(f"/api/oauth/github?code=bad&state={await state_of(api)}")
    assert body["message"] == "Logging in with GitHub failed, try again"
    body = await api.get("/api/oauth/github?code=good&state=")
    assert body["message"].startswith("The state parameter is wrong")
    state = await state_of(api)
    assert (await api.get(f"/api/oauth/github?code=nope&state={state}"))["success"] is False
    body = await api.get(f"/api/oauth/github?code=good&state={state}")  # a state is used once
    assert body["message"].startswith("The state parameter is wrong")

    await set_options(client, RegisterEnabled=False)
    body = await api.get(f"/api/oauth/github?code=good&state={await state_of(api)}")
    assert body["message"] == "The administrator has turned off new registrations"
    await set_options(client, GitHubOAuthEnabled=False)
    body = await api.get(f"/api/oauth/github?code=good&state={await state_of(api)}")
    assert body["message"] == "The administrator has not enabled login and registration with GitHub"
    assert await User.all().count() == 1


async def test_github_bind_and_conflicts(browsers: Browsers, enabled: FakeProviders) -> None:
    alice, api = await browsers.user("alice")
    enabled.github_codes["c1"] = GITHUB_USER
    body = await api.get(f"/api/oauth/github?code=c1&state={await state_of(api)}")
    assert body == {"success": True, "message": "bind", "data": None}
    await alice.refresh_from_db()
    assert alice.github_id == "583231"

    bob, bob_api = await browsers.user("bob")
    enabled.github_codes["c2"] = GITHUB_USER
    body = await bob_api.get(f"/api/oauth/github?code=c2&state={await state_of(bob_api)}")
    assert body == {"success": False, "message": "This GitHub account is already bound to another user",
                    "data": None}
    await bob.refresh_from_db()
    assert bob.github_id == ""


async def test_oauth_login_of_banned_or_deleted_accounts(browsers: Browsers, enabled: FakeProviders) -> None:
    await make_user("banned", github_id="1", status=UserStatus.DISABLED)
    await make_user("deleted", github_id="2", deleted_at=5)
    api = browsers.new()
    for gh_id, message in [(1, "This user has been banned"), (2, "This account has been deleted")]:
        enabled.github_codes[f"c{gh_id}"] = {**GITHUB_USER, "id": gh_id}
        body = await api.get(f"/api/oauth/github?code=c{gh_id}&state={await state_of(api)}")
        assert body == {"success": False, "message": message, "data": None}
    assert await User.all().count() == 3


async def test_parallel_first_logins_create_one_account(browsers: Browsers, enabled: FakeProviders) -> None:
    apis = [browsers.new() for _ in range(4)]
    states = [await state_of(api) for api in apis]
    for i in range(4):
        enabled.github_codes[f"p{i}"] = GITHUB_USER
    answers = await asyncio.gather(*(api.get(f"/api/oauth/github?code=p{i}&state={states[i]}")
                                     for i, api in enumerate(apis)))
    assert any(a["success"] for a in answers)
    assert {a["message"] for a in answers if not a["success"]} <= {
        "This account is being processed by another request, try again"}
    assert await User.filter(github_id="583231").count() == 1


# -- LINUX DO ----------------------------------------------------------------------------------------
@both_databases
async def test_linuxdo_login_and_min_level(client, browsers: Browsers, enabled: FakeProviders) -> None:
    await set_options(client, LinuxDoMinLevel=2)
    api = browsers.new()
    enabled.linuxdo_codes["low"] = {"id": 9001, "username": "newbie", "name": "New Bee", "active": True,
                                    "trust_level": 1, "silenced": False}
    body = await api.get(f"/api/oauth/linuxdo?code=low&state={await state_of(api)}")
    assert body == {"success": False, "message": "Your LINUX DO trust level 1 is below the required 2", "data": None}
    assert await User.all().count() == 1

    enabled.linuxdo_codes["ok"] = {"id": 9002, "username": "veteran", "name": "", "active": True,
                                   "trust_level": 3, "silenced": False}
    body = await api.get(f"/api/oauth/linuxdo?code=ok&state={await state_of(api)}")
    assert body["success"], body
    user = await User.get(linuxdo_id="9002")
    assert (user.linuxdo_level, user.display_name) == (3, "veteran")
    call = enabled.calls_to("linuxdo_token")[-1]
    assert call["client"] == ("ld-client", "ld-secret") and call["grant_type"] == "authorization_code"
    assert call["redirect_uri"] == "https://gw.example.com/oauth/linuxdo"


# -- WeChat ------------------------------------------------------------------------------------------
async def test_wechat_login_and_bind(browsers: Browsers, enabled: FakeProviders) -> None:
    api = browsers.new()
    enabled.wechat_codes["123456"] = "wx-open-id-1"
    body = await api.get("/api/oauth/wechat?code=123456")
    assert body["success"], body
    assert enabled.calls_to("wechat_user")[0] == {"code": "123456", "authorization": "wechat-server-token"}
    user = await User.get(wechat_id="wx-open-id-1")
    assert user.username.startswith("wechat_")
    body = await api.get("/api/oauth/wechat?code=000000")
    assert body["message"] == "The verification code is wrong or has expired"

    alice, alice_api = await browsers.user("alice")
    enabled.wechat_codes["222222"] = "wx-open-id-2"
    assert (await alice_api.get("/api/oauth/wechat/bind?code=222222"))["success"]
    await alice.refresh_from_db()
    assert alice.wechat_id == "wx-open-id-2"
    enabled.wechat_codes["333333"] = "wx-open-id-1"
    body = await alice_api.get("/api/oauth/wechat/bind?code=333333")
    assert body["message"] == "This WeChat account is already bound to another user"
    await alice.refresh_from_db()
    assert alice.wechat_id == "wx-open-id-2"


# -- Telegram ----------------------------------------------------------------------------------------
def telegram_fields(user_id: int = 4242, auth_date: int | None = None, bot_token: str = BOT_TOKEN) -> dict:
    fields = {"id": str(user_id), "first_name": "Tele", "last_name": "Gram", "username": "telegram_user",
              "photo_url": "https://t.me/i/userpic/320/x.jpg", "auth_date": str(auth_date or int(time.time()))}
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hashlib.sha256(bot_token.encode()).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return fields


async def test_telegram_login(browsers: Browsers, enabled: FakeProviders) -> None:
    api = browsers.new()
    for fields, message in [
        ({**telegram_fields(), "first_name": "Mallory"}, "The Telegram login data is invalid"),
        (telegram_fields(bot_token="other:bot"), "The Telegram login data is invalid"),
        ({k: v for k, v in telegram_fields().items() if k != "hash"}, "The Telegram login data is invalid"),
        (telegram_fields(auth_date=int(time.time()) - 86400 - 60), "The Telegram login has expired, log in again"),
    ]:
        body = await api.get("/api/oauth/telegram/login", params=fields)
        assert body == {"success": False, "message": message, "data": None}
    assert await User.all().count() == 1

    body = await api.get("/api/oauth/telegram/login", params={**telegram_fields(), "lang": "en"})
    assert body["success"], body
    user = await User.get(telegram_id="4242")
    assert user.display_name == "Tele Gram" and body["data"]["id"] == user.id
    body = await browsers.new().get("/api/oauth/telegram/login", params=telegram_fields())
    assert body["data"]["id"] == user.id


async def test_telegram_bind_by_widget_redirect_and_by_the_console(browsers: Browsers,
                                                                   enabled: FakeProviders) -> None:
    alice, api = await browsers.user("alice")
    # The widget sends the browser here: a navigation, cookie only, then back to the settings page.
    resp = await api.client.get("/api/oauth/telegram/bind", params=telegram_fields(77), allow_redirects=False)
    assert resp.status == 302 and resp.headers["Location"] == "/setting"
    await alice.refresh_from_db()
    assert alice.telegram_id == "77"

    bob, bob_api = await browsers.user("bob")
    body = await bob_api.get("/api/oauth/telegram/bind", params=telegram_fields(77))
    assert body["message"] == "This Telegram account is already bound to another user"
    assert (await bob_api.get("/api/oauth/telegram/bind", params=telegram_fields(78)))["success"]
    await bob.refresh_from_db()
    assert bob.telegram_id == "78"
    anonymous = browsers.new()
    await anonymous.get("/api/oauth/telegram/bind", params=telegram_fields(79), expect_status=401)


# -- e-mail binding ------------------------------------------------------------------------------------
async def test_email_bind(client, browsers: Browsers) -> None:
    alice, api = await browsers.user("alice")
    assert (await api.post("/api/verify", {"method": "password", "password": "password123"}))["success"]
    await make_user("owner", email="taken@example.com")
    store = client.server.app[keys.STORE]
    code = await mail.issue_code(store, mail.VERIFY, "alice@example.com", mail.VERIFY_CODE_LENGTH)
    # A code for an address taken since it was sent (the code is checked first: only its owner learns it).
    raced = await mail.issue_code(store, mail.VERIFY, "taken@example.com", mail.VERIFY_CODE_LENGTH)
    for query, message in [
        ("email=alice@example.com", "Please enter the verification code"),
        ("email=alice@example.com&code=WRONG1", "The verification code is wrong or has expired"),
        (f"email=taken@example.com&code={code}", "The verification code is wrong or has expired"),
        (f"email=taken@example.com&code={raced}", "The e-mail address is already in use"),
        (f"email=other@example.com&code={code}", "The verification code is wrong or has expired"),
        (f"code={code}", "Please enter the e-mail address"),
    ]:
        body = await api.get(f"/api/oauth/email/bind?{query}")
        assert body == {"success": False, "message": message, "data": None}, query
    await alice.refresh_from_db()
    assert alice.email == ""
    assert (await api.get(f"/api/oauth/email/bind?email=Alice@Example.com&code={code}"))["success"]
    await alice.refresh_from_db()
    assert alice.email == "alice@example.com"
    body = await api.get(f"/api/oauth/email/bind?email=alice@example.com&code={code}")
    assert body["message"] == "The verification code is wrong or has expired"  # single use
