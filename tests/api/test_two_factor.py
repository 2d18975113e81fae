"""Two-factor login through the real routes: setup → enable → the password login waits for a code →
wrong, replayed and out-of-window codes refused → backup codes once each → disable; the throttling
of /login/2fa; the admin reset and its role rules; the option that requires it of admins.

Time is the codes' clock (api.services.accounts.two_factor.clock), frozen and moved by the tests;
codes are made with pyotp for the moved time."""
from __future__ import annotations

import dataclasses
import time

import pyotp
import pytest

from api.services.accounts import two_factor
from api.web import fresh_auth, login_guard
from models import TwoFactor, TwoFactorBackupCode
from models.enums import Role
from tests.api.test_accounts_oauth import BOT_TOKEN, telegram_fields
from tests.fakes.browsers import Browsers, set_options
from tests.helpers import ApiClient, make_user

T0 = 1_800_000_000.0  # a step boundary (divisible by 30)


@pytest.fixture
def settings(settings):
    return dataclasses.replace(settings, trusted_proxies=("127.0.0.1/32", "::1/128"))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [T0]
    monkeypatch.setattr(two_factor, "clock", lambda: now[0])
    monkeypatch.setattr(login_guard, "clock", lambda: now[0])
    return now


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


def code_at(secret: str, at: float) -> str:
    return pyotp.TOTP(secret).at(at)


async def verify(api: ApiClient, password: str = "password123") -> None:
    body = await api.post("/api/verify", {"method": "password", "password": password})
    assert body["success"], body


async def enroll(api: ApiClient, clock: list[float]) -> tuple[str, list[str]]:
    """Set up and enable 2FA in this browser; (the secret, the backup codes)."""
    setup = await api.post("/api/user/2fa/setup")
    assert setup["success"], setup
    secret = setup["data"]["secret"]
    body = await api.post("/api/user/2fa/enable", {"code": code_at(secret, clock[0])})
    assert body["success"], body
    return secret, setup["data"]["backup_codes"]


async def password_login(api: ApiClient, username: str, password: str = "password123",
                         address: str = "198.51.100.1") -> dict:
    return await api.post("/api/user/login", {"username": username, "password": password},
                          headers={"X-Forwarded-For": address})


async def second_step(api: ApiClient, code: str, address: str = "198.51.100.1", **kw) -> dict:
    body = await api.post("/api/user/login/2fa", {"code": code}, headers={"X-Forwarded-For": address}, **kw)
    if body["success"]:
        api.user_id = body["data"]["id"]
    return body


async def test_setup_enable_login_codes_backup_codes_and_disable(browsers: Browsers, clock: list[float]) -> None:
    user, api = await browsers.user("alice")
    assert (await api.get("/api/user/2fa/status"))["data"] == {"enabled": False, "locked": False, "required": False}
    setup = await api.post("/api/user/2fa/setup")
    data = setup["data"]
    assert data["qr_code_data"].startswith("otpauth://totp/AI%20Gateway:alice?secret=")
    assert "issuer=AI%20Gateway" in data["qr_code_data"]
    assert len(data["backup_codes"]) == 10 and len(set(data["backup_codes"])) == 10
    # At rest: the secret is sealed, the codes hashed.
    row = await TwoFactor.get(user_id=user.id)
    assert data["secret"] not in row.secret and not row.is_enabled
    stored = await TwoFactorBackupCode.filter(user_id=user.id).values_list("code_hash", flat=True)
    assert not set(data["backup_codes"]) & set(stored)
    # Enabling needs a valid code of the new secret.
    assert (await api.post("/api/user/2fa/enable", {"code": "000000"}))["success"] is False
    assert (await api.post("/api/user/2fa/enable", {"code": "12ab56"}))["message"] == \
        "The code is the 6 digits your authenticator app shows"
    secret = data["secret"]
    assert (await api.post("/api/user/2fa/enable", {"code": code_at(secret, T0)}))["success"]
    assert (await api.get("/api/user/2fa/status"))["data"] == {
        "enabled": True, "locked": False, "backup_codes_remaining": 10, "required": False}
    # Enabling ended the sessions opened without it, and kept this one.
    assert (await api.get("/api/user/self"))["success"]

    # The password alone opens no session.
    browser = browsers.new()
    body = await password_login(browser, "alice")
    assert body["success"] and body["data"] == {"require_2fa": True}
    browser.user_id = user.id
    assert (await browser.get("/api/user/self", expect_status=401))["success"] is False
    # Another browser cannot finish it.
    assert (await second_step(browsers.new(), code_at(secret, T0 + 30)))["message"].startswith("The login has expired")
    # A wrong code, the code already used at enable, a code two steps away: refused.
    clock[0] = T0 + 30
    assert (await second_step(browser, "123456"))["message"] == "Wrong or already used code, or backup code: try again"
    assert (await second_step(browser, code_at(secret, T0)))["success"] is False  # step T0 was spent at enable
    assert (await second_step(browser, code_at(secret, T0 + 30 + 60)))["success"] is False
    assert (await second_step(browser, code_at(secret, T0 + 30 - 60)))["success"] is False
    # One step of drift is accepted (the next step's code), then refused as replayed.
    body = await second_step(browser, code_at(secret, T0 + 60))
    assert body["success"] and body["data"]["id"] == user.id, body
    assert (await browser.get("/api/user/self"))["data"]["username"] == "alice"
    again = browsers.new()
    assert (await password_login(again, "alice"))["data"] == {"require_2fa": True}
    assert (await second_step(again, code_at(secret, T0 + 60)))["success"] is False  # replay, same step
    assert (await second_step(again, code_at(secret, T0 + 30)))["success"] is False  # an earlier step

    # Backup codes: each works once, in any case and grouping.
    first, second = data["backup_codes"][:2]
    assert (await second_step(again, first.lower().replace("-", "")))["success"]
    other = browsers.new()
    await password_login(other, "alice")
    assert (await second_step(other, first))["success"] is False
    assert (await second_step(other, second))["success"]
    assert (await other.get("/api/user/2fa/status"))["data"]["backup_codes_remaining"] == 8

    # Disabling needs a fresh verification and a code or the password.
    refused = await other.post("/api/user/2fa/disable", {"password": "password123"}, expect_status=403)
    assert refused["message"].startswith("Verify it is you first")
    await verify(other)
    assert (await other.post("/api/user/2fa/disable", {"password": "wrong-pass"}))["message"] == "Wrong password"
    assert (await other.post("/api/user/2fa/disable", {}))["success"] is False
    assert (await other.post("/api/user/2fa/disable", {"code": data["backup_codes"][2]}))["success"]
    assert (await other.get("/api/user/2fa/status"))["data"]["enabled"] is False
    assert await TwoFactorBackupCode.filter(user_id=user.id).count() == 0
    plain = browsers.new()
    assert (await password_login(plain, "alice"))["data"]["id"] == user.id


async def test_backup_codes_regenerate_with_a_code_and_replace_the_old_ones(
        browsers: Browsers, clock: list[float]) -> None:
    _, api = await browsers.user("alice")
    secret, old = await enroll(api, clock)
    assert (await api.post("/api/user/2fa/backup_codes", {"code": old[0]}))["success"] is False  # TOTP only
    clock[0] += 30
    body = await api.post("/api/user/2fa/backup_codes", {"code": code_at(secret, clock[0])})
    assert body["success"] and len(body["data"]["backup_codes"]) == 10
    browser = browsers.new()
    await password_login(browser, "alice")
    assert (await second_step(browser, old[1]))["success"] is False
    assert (await second_step(browser, body["data"]["backup_codes"][0]))["success"]


async def test_the_code_step_is_throttled_per_account_and_source(browsers: Browsers, clock: list[float]) -> None:
    user, api = await browsers.user("alice")
    secret, _ = await enroll(api, clock)
    attacker = browsers.new()
    assert (await password_login(attacker, "alice", address="203.0.113.9"))["data"] == {"require_2fa": True}
    answers = [await second_step(attacker, f"{i:06d}", address="203.0.113.9", expect_status=None)
               for i in range(7)]
    assert [a["success"] for a in answers[:6]] == [False] * 6
    assert answers[6]["message"] == "Too many wrong codes or passwords for this account: try again in 2 s"
    right = code_at(secret, T0 + 30)  # the next step's: within the drift, not spent yet
    # While it waits, not even the right code is checked.
    assert (await second_step(attacker, right, address="203.0.113.9", expect_status=429))["success"] is False
    # Wrong codes count with wrong passwords: the password step waits as well (and would not clear them).
    assert (await browsers.new().post("/api/user/login", {"username": "alice", "password": "password123"},
                           headers={"X-Forwarded-For": "203.0.113.9"}, expect_status=429))["success"] is False
    clock[0] += 2
    assert (await second_step(attacker, right, address="203.0.113.9"))["success"]
    assert (await attacker.get("/api/user/self", headers={"New-Api-User": str(user.id)}))["success"]


async def test_an_oauth_login_goes_through_the_gate_too(client, browsers: Browsers, clock: list[float]) -> None:
    """Telegram's login (as GitHub's, LINUX DO's and WeChat's) ends in start_session: with 2FA on it
    waits for the code like a password login."""
    await set_options(client, TelegramBotToken=BOT_TOKEN, TelegramBotName="gateway_bot", TelegramOAuthEnabled=True)
    user, api = await browsers.user("alice", telegram_id="4242")
    secret, _ = await enroll(api, clock)
    browser = browsers.new()
    body = await browser.get("/api/oauth/telegram/login", params=telegram_fields(4242))
    assert body["success"] and body["data"] == {"require_2fa": True}, body
    browser.user_id = user.id
    assert (await browser.get("/api/user/self", expect_status=401))["success"] is False
    clock[0] += 30
    assert (await second_step(browser, code_at(secret, clock[0])))["data"]["id"] == user.id
    assert (await browser.get("/api/user/self"))["data"]["username"] == "alice"


async def test_admin_reset_follows_the_role_rules(browsers: Browsers, root: ApiClient, clock: list[float]) -> None:
    alice, alice_api = await browsers.user("alice")
    boss, boss_api = await browsers.user("boss", role=Role.ADMIN)
    await make_user("other", role=Role.ADMIN)
    await enroll(alice_api, clock)
    clock[0] += 30
    await enroll(boss_api, clock)
    stats = (await root.get("/api/user/2fa/stats"))["data"]
    assert stats == {"total_users": 4, "enabled_users": 2, "enabled_rate": "50.0%"}
    assert (await alice_api.get("/api/user/2fa/stats"))["success"] is False  # admins only
    # An admin resets a user below them, not an admin; a user resets nobody.
    assert (await alice_api.delete(f"/api/user/{boss.id}/2fa"))["success"] is False
    other_api = await browsers.login("other")
    assert (await other_api.delete(f"/api/user/{boss.id}/2fa"))["success"] is False
    assert await two_factor.is_enabled(boss.id)
    body = await other_api.delete(f"/api/user/{alice.id}/2fa")
    assert body["success"], body
    assert not await two_factor.is_enabled(alice.id)
    assert (await alice_api.get("/api/user/self", expect_status=401))["success"] is False  # sessions ended
    assert (await other_api.delete(f"/api/user/{alice.id}/2fa"))["message"] == \
        "Two-factor login is not on for this account"
    # Root resets anyone.
    assert (await root.delete(f"/api/user/{boss.id}/2fa"))["success"]
    assert not await two_factor.is_enabled(boss.id)
    assert (await boss_api.get("/api/user/self", expect_status=401))["success"] is False


async def test_the_option_sends_an_admin_without_2fa_to_set_it_up(
        client, browsers: Browsers, clock: list[float]) -> None:
    await set_options(client, TwoFactorRequiredForAdminsEnabled="true")
    boss = await make_user("boss", role=Role.ADMIN)
    await make_user("alice")
    assert (await browsers.login("alice")).user_id  # users are not concerned
    browser = browsers.new()
    body = await password_login(browser, "boss")
    assert body["data"] == {"require_2fa_setup": True, "username": "boss"}
    browser.user_id = boss.id
    # That session reaches nothing but the setup.
    assert (await browser.get("/api/user/self", expect_status=401))["success"] is False
    assert (await browser.get("/api/channel/", expect_status=401))["success"] is False
    setup = (await browser.post("/api/user/2fa/setup"))["data"]
    body = await browser.post("/api/user/2fa/enable", {"code": code_at(setup["secret"], clock[0])})
    assert body["success"] and body["data"]["id"] == boss.id, body
    assert (await browser.get("/api/user/self"))["data"]["username"] == "boss"
    # It cannot be turned off while required; the next login asks for the code.
    await verify(browser)
    assert (await browser.post("/api/user/2fa/disable", {"password": "password123"}))["message"] == \
        "Two-factor login is required for administrators: it cannot be turned off"
    assert (await password_login(browsers.new(), "boss"))["data"] == {"require_2fa": True}


async def test_verification_is_for_a_few_minutes_and_that_session_only(
        browsers: Browsers, root: ApiClient, clock: list[float]) -> None:
    from models import Channel

    channel = await Channel.create(name="c", type=1, key="sk-secret-key-0001", models="gpt-4o")
    refused = await root.post(f"/api/channel/{channel.id}/key", expect_status=403)
    assert refused["message"].startswith("Verify it is you first") and "sk-secret" not in str(refused)
    assert (await root.post("/api/verify", {"method": "password", "password": "nope"}))["message"] == "Wrong password"
    assert (await root.post("/api/verify", {"method": "2fa", "code": "123456"}))["message"] == \
        "This account cannot verify with 2fa"
    assert (await root.post("/api/verify", {"method": "passkey"}))["message"] == "Verify with your passkey first"
    assert (await root.post("/api/verify", {"method": "sms"}))["success"] is False
    body = await root.post("/api/verify", {"method": "password", "password": "123456"})
    assert body["success"] and body["data"]["verified"] is True and body["data"]["method"] == "password"
    assert body["data"]["expires_at"] - time.time() == pytest.approx(fresh_auth.VERIFIED_FOR, abs=5)
    status = (await root.get("/api/verify/status"))["data"]
    assert status["verified"] is True and status["methods"] == ["password"]
    assert (await root.post(f"/api/channel/{channel.id}/key"))["data"] == {"key": "sk-secret-key-0001"}
    # Another session of root is not verified.
    elsewhere = await browsers.login("root", "123456")
    assert (await elsewhere.post(f"/api/channel/{channel.id}/key", expect_status=403))["success"] is False
    # An admin may not reveal keys at all, verified or not.
    _, admin = await browsers.user("boss", role=Role.ADMIN)
    await verify(admin)
    assert (await admin.post(f"/api/channel/{channel.id}/key"))["success"] is False
    # The proof ages out: written back VERIFIED_FOR seconds, it is refused again.
    session = await _session_of(root)
    await session.set(verified_at=str(int(time.time()) - fresh_auth.VERIFIED_FOR - 1))
    assert (await root.post(f"/api/channel/{channel.id}/key", expect_status=403))["success"] is False


async def _session_of(api: ApiClient):
    from api import keys
    from api.web.sessions import Session

    manager = api.client.server.app[keys.SESSIONS]
    cookie = api.client.session.cookie_jar.filter_cookies(api.client.make_url("/"))["session"].value
    return Session(manager, cookie, await manager.store.redis.hgetall(manager.key(cookie)))


async def test_verify_with_a_code_and_the_routes_that_need_it(browsers: Browsers, root: ApiClient,
                                                             clock: list[float]) -> None:
    user, api = await browsers.user("alice")
    secret, _ = await enroll(api, clock)
    # A password change and a role change need it.
    change = {"password": "new-password-1", "password2": "new-password-1", "original_password": "password123"}
    assert (await api.put("/api/user/self", change, expect_status=403))["success"] is False
    clock[0] += 30
    assert (await api.post("/api/verify", {"method": "2fa", "code": code_at(secret, clock[0])}))["success"]
    assert (await api.post("/api/verify", {"method": "2fa", "code": code_at(secret, clock[0])}))["success"] is False
    assert (await api.put("/api/user/self", change))["success"]
    promote = {"id": user.id, "action": "promote"}
    assert (await root.post("/api/user/manage", promote, expect_status=403))["success"] is False
    await verify(root, "123456")
    assert (await root.post("/api/user/manage", promote))["data"]["role"] == int(Role.ADMIN)


async def test_verify_is_throttled_like_the_login(browsers: Browsers, clock: list[float]) -> None:
    _, api = await browsers.user("alice")
    answers = [await api.post("/api/verify", {"method": "password", "password": f"guess-{i}"}, expect_status=None)
               for i in range(7)]
    assert [a["message"] for a in answers[:6]] == ["Wrong password"] * 6
    assert answers[6]["message"] == "Too many wrong codes or passwords for this account: try again in 2 s"
    assert (await api.post("/api/verify", {"method": "password", "password": "password123"},
                           expect_status=429))["success"] is False
    clock[0] += 2
    assert (await api.post("/api/verify", {"method": "password", "password": "password123"}))["success"]
