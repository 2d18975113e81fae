"""Passkeys through the real routes, answered by a strict software authenticator
(tests/fakes/authenticator.py): registration, the list, login with and without a username,
re-verification, deletion and the administrators' reset; and what is refused: another site's origin or
rp id, a challenge used twice or too late, another user's passkey, a cloned passkey with an old counter,
an authenticator that did not verify its user, ceremonies without ServerAddress or with the option off."""
from __future__ import annotations

import dataclasses

import pytest

from api import keys
from api.services.accounts import passkeys
from api.web.fresh_auth import VERIFIED_FOR
from api.web.sessions import COOKIE
from models import PasskeyCredential
from models.enums import Role, UserStatus
from tests.fakes.authenticator import Authenticator
from tests.fakes.browsers import Browsers, set_options
from tests.helpers import ApiClient, both_databases

ORIGIN = "https://gw.example.com"


@pytest.fixture
def critical_limit() -> int:
    return 100000  # the per-address limit of the critical routes (a test may parametrize it)


@pytest.fixture
def settings(settings, critical_limit: int):
    return dataclasses.replace(settings, rate_limit_critical=critical_limit)


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


@pytest.fixture
async def enabled(client) -> None:
    await set_options(client, ServerAddress=ORIGIN, PasskeyLoginEnabled=True)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_800_000_000.0]
    monkeypatch.setattr(passkeys, "clock", lambda: now[0])
    return now


async def register(api: ApiClient, authenticator: Authenticator, name: str = "Laptop") -> dict:
    begin = await api.post("/api/user/passkey/register/begin", {"name": name})
    assert begin["success"], begin
    body = await api.post("/api/user/passkey/register/finish", authenticator.create(begin["data"]["options"]))
    assert body["success"], body
    return body["data"]


async def login_begin(browser: ApiClient, username: str | None = None) -> dict:
    begin = await browser.post("/api/user/passkey/login/begin", {"username": username} if username else None)
    assert begin["success"], begin
    return begin["data"]["options"]


async def passkey_login(browser: ApiClient, authenticator: Authenticator, username: str | None = None,
                        **lie: object) -> dict:
    options = await login_begin(browser, username)
    body = await browser.post("/api/user/passkey/login/finish", authenticator.get(options, **lie))  # type: ignore[arg-type]
    if body["success"]:
        browser.user_id = body["data"]["id"]
    return body


async def session_data(client, browser: ApiClient) -> dict[str, str]:
    cookie = browser.client.session.cookie_jar.filter_cookies(browser.client.make_url("/"))[COOKIE].value
    sessions = client.server.app[keys.SESSIONS]
    return await sessions.store.redis.hgetall(sessions.key(cookie))


@both_databases
async def test_register_list_and_log_in_without_a_password(client, browsers: Browsers, enabled) -> None:
    alice, browser = await browsers.user("alice")
    authenticator = Authenticator(ORIGIN)
    begin = await browser.post("/api/user/passkey/register/begin", {"name": "Laptop"})
    public_key = begin["data"]["options"]["publicKey"]
    assert public_key["rp"] == {"id": "gw.example.com", "name": "AI Gateway"}
    assert public_key["user"]["name"] == "alice"
    assert public_key["authenticatorSelection"]["userVerification"] == "required"
    created = await browser.post("/api/user/passkey/register/finish", authenticator.create(begin["data"]["options"]))
    assert created["success"], created
    assert created["data"]["name"] == "Laptop" and created["data"]["transports"] == ["internal"]

    listed = (await browser.get("/api/user/passkey"))["data"]
    assert listed["enabled"] is True and listed["last_used_at"] is None
    assert [p["name"] for p in listed["passkeys"]] == ["Laptop"]
    assert not {"public_key", "credential_id", "sign_count"} & set(listed["passkeys"][0])
    # A second registration of the same authenticator is excluded by the options (the browser refuses it).
    again = (await browser.post("/api/user/passkey/register/begin", {}))["data"]["options"]["publicKey"]
    assert again["excludeCredentials"][0]["id"] == created_id(authenticator)

    stranger = browsers.new()
    body = await passkey_login(stranger, authenticator)
    assert body["success"], body
    assert body["data"]["username"] == "alice" and body["data"]["id"] == alice.id
    assert (await stranger.get("/api/user/self"))["data"]["username"] == "alice"
    row = await PasskeyCredential.get(user_id=alice.id)
    assert row.sign_count == 1 and row.last_used_time > 0 and not row.clone_warning
    # And with the username given: only alice's passkeys are allowed.
    other = browsers.new()
    options = await login_begin(other, "alice")
    assert [c["id"] for c in options["publicKey"]["allowCredentials"]] == [created_id(authenticator)]
    body = await other.post("/api/user/passkey/login/finish", authenticator.get(options))
    assert body["success"] and (await PasskeyCredential.get(user_id=alice.id)).sign_count == 2


def created_id(authenticator: Authenticator) -> str:
    from tests.fakes.authenticator import b64url

    return b64url(authenticator.credential_id)


async def test_a_cloned_passkey_with_an_old_counter_is_refused(client, browsers: Browsers, enabled) -> None:
    alice, browser = await browsers.user("alice")
    original = Authenticator(ORIGIN)
    await register(browser, original)
    assert (await passkey_login(browsers.new(), original))["success"]  # counter 1
    clone = original.clone()  # the key and counter as they are now
    assert (await passkey_login(browsers.new(), original))["success"]  # counter 2
    body = await passkey_login(browsers.new(), clone)  # the clone says 2 again
    assert body == {"success": False, "data": None,
                    "message": "This passkey's signature counter went back: it may have been copied, so it is "
                               "refused. Use another passkey or your password, and remove this one"}
    row = await PasskeyCredential.get(user_id=alice.id)
    assert row.sign_count == 2 and row.clone_warning
    assert (await passkey_login(browsers.new(), original))["success"]  # the owner's count moves on: 3


async def test_authenticators_that_count_nothing_keep_logging_in(client, browsers: Browsers, enabled) -> None:
    _, browser = await browsers.user("alice")
    synced = Authenticator(ORIGIN, counting=False, backed_up=True)
    await register(browser, synced)
    for _ in range(3):
        assert (await passkey_login(browsers.new(), synced))["success"]
    row = await PasskeyCredential.get(name="Laptop")
    assert row.sign_count == 0 and row.backup_eligible and row.backup_state and not row.clone_warning


async def test_another_site_or_an_unverified_user_is_refused(client, browsers: Browsers, enabled) -> None:
    alice, browser = await browsers.user("alice")
    wrong_site = ("The passkey answer was made for another site than https://gw.example.com: open the console "
                  "at that address (ServerAddress)")
    authenticator = Authenticator(ORIGIN)
    for lie in ({"origin": "https://evil.example.com"}, {"rp_id": "evil.example.com"},
                {"origin": "http://gw.example.com"}):
        begin = await browser.post("/api/user/passkey/register/begin", {})
        body = await browser.post("/api/user/passkey/register/finish",
                                  authenticator.create(begin["data"]["options"], **lie))  # type: ignore[arg-type]
        assert body["message"] == wrong_site, lie
    begin = await browser.post("/api/user/passkey/register/begin", {})
    body = await browser.post("/api/user/passkey/register/finish",
                              authenticator.create(begin["data"]["options"], verified=False))
    assert body["message"].startswith("The authenticator did not verify you")
    assert not await PasskeyCredential.exists()

    await register(browser, authenticator)
    for lie in ({"origin": "https://evil.example.com"}, {"rp_id": "evil.example.com"}):
        body = await passkey_login(browsers.new(), authenticator, **lie)
        assert body["message"] == wrong_site, lie
    body = await passkey_login(browsers.new(), authenticator, verified=False)
    assert body["message"].startswith("The authenticator did not verify you")
    assert (await PasskeyCredential.get(user_id=alice.id)).sign_count == 0  # nothing refused was counted


async def test_a_challenge_is_used_once_and_expires(client, browsers: Browsers, enabled, clock) -> None:
    _, browser = await browsers.user("alice")
    authenticator = Authenticator(ORIGIN)
    await register(browser, authenticator)
    stranger = browsers.new()
    options = await login_begin(stranger)
    answer = authenticator.get(options)
    assert (await stranger.post("/api/user/passkey/login/finish", answer))["success"]
    replayed = await stranger.post("/api/user/passkey/login/finish", answer)
    assert replayed["message"] == "No passkey request is waiting (it was already used or never started): start again"

    late = browsers.new()
    options = await login_begin(late)
    clock[0] += passkeys.CHALLENGE_TTL + 1
    body = await late.post("/api/user/passkey/login/finish", authenticator.get(options))
    assert body["message"] == "The passkey request has expired: start again"
    # Taken by the late answer: gone even for a prompt one now.
    clock[0] -= passkeys.CHALLENGE_TTL + 1
    body = await late.post("/api/user/passkey/login/finish", authenticator.get(options))
    assert body["message"].startswith("No passkey request is waiting")
    # A challenge is its browser's: another one's answer to it has no challenge of its own.
    first = browsers.new()
    options = await login_begin(first)
    body = await browsers.new().post("/api/user/passkey/login/finish", authenticator.get(options))
    assert body["message"].startswith("No passkey request is waiting")


async def test_another_users_passkey_is_refused(client, browsers: Browsers, enabled) -> None:
    alice, alice_browser = await browsers.user("alice")
    bob, bob_browser = await browsers.user("bob")
    alices, bobs = Authenticator(ORIGIN), Authenticator(ORIGIN)
    await register(alice_browser, alices)
    await register(bob_browser, bobs)
    # Login limited to alice: bob's passkey answers (as a lying browser would make it) and is refused.
    stranger = browsers.new()
    options = await login_begin(stranger, "alice")
    options["publicKey"]["allowCredentials"] = []
    body = await stranger.post("/api/user/passkey/login/finish", bobs.get(options))
    assert body["message"] == "This passkey is not registered here"
    # A name that is nobody's: the same options' shape, and no passkey will do.
    options = await login_begin(stranger, "nobody")
    assert options["publicKey"].get("allowCredentials", []) == []
    assert (await stranger.post("/api/user/passkey/login/finish", bobs.get(options)))["success"] is False
    # Re-verification of alice's session with bob's passkey.
    begin = await alice_browser.post("/api/user/passkey/verify/begin")
    options = begin["data"]["options"]
    options["publicKey"]["allowCredentials"] = []
    body = await alice_browser.post("/api/user/passkey/verify/finish", bobs.get(options))
    assert body["message"] == "This passkey is not registered here"
    assert "verified_at" not in await session_data(client, alice_browser)
    # A user handle that is not the passkey's owner.
    options = await login_begin(stranger)
    answer = alices.get(options)
    answer["response"]["userHandle"] = answer["response"]["userHandle"][:-1] + "z"
    assert (await stranger.post("/api/user/passkey/login/finish", answer))["success"] is False
    # Deleting bob's passkey by its id from alice's account.
    bob_id = (await PasskeyCredential.get(user_id=bob.id)).id
    body = await alice_browser.delete(f"/api/user/passkey?id={bob_id}")
    assert body["message"] == "No such passkey" and await PasskeyCredential.filter(user_id=bob.id).exists()


async def test_re_verification_marks_the_session(client, browsers: Browsers, enabled, clock) -> None:
    alice, browser = await browsers.user("alice")
    none = await browser.post("/api/user/passkey/verify/begin")
    assert none["message"] == "You have not registered a passkey"
    authenticator = Authenticator(ORIGIN)
    await register(browser, authenticator)
    begin = await browser.post("/api/user/passkey/verify/begin")
    assert [c["id"] for c in begin["data"]["options"]["publicKey"]["allowCredentials"]] == [created_id(authenticator)]
    body = await browser.post("/api/user/passkey/verify/finish", authenticator.get(begin["data"]["options"]))
    assert body["success"], body
    assert body["data"]["verified"] is True and body["data"]["expires_at"] > 0
    data = await session_data(client, browser)
    assert data["verified_by"] == "passkey"
    assert body["data"]["expires_at"] == int(data["verified_at"]) + VERIFIED_FOR
    # A login challenge does not finish a verification, nor the reverse.
    options = await login_begin(browser)
    body = await browser.post("/api/user/passkey/verify/finish", authenticator.get(options))
    assert body["message"].startswith("No passkey request is waiting")


async def test_delete_one_or_all_and_the_administrators_reset(client, browsers: Browsers, enabled) -> None:
    alice, alice_browser = await browsers.user("alice")
    for name in ("Laptop", "Phone", "Key"):
        await register(alice_browser, Authenticator(ORIGIN), name)
    phone = await PasskeyCredential.get(name="Phone")
    assert (await alice_browser.delete(f"/api/user/passkey?id={phone.id}"))["success"]
    assert sorted(await PasskeyCredential.filter(user_id=alice.id).values_list("name", flat=True)) == ["Key", "Laptop"]
    assert (await alice_browser.delete("/api/user/passkey?id=x"))["message"] == "Invalid parameter: id"
    assert (await alice_browser.delete("/api/user/passkey"))["success"]
    assert not await PasskeyCredential.exists()

    admin, admin_browser = await browsers.user("admin", Role.ADMIN)
    other_admin, other_browser = await browsers.user("admin2", Role.ADMIN)
    await register(alice_browser, Authenticator(ORIGIN))
    await register(other_browser, Authenticator(ORIGIN))
    assert (await alice_browser.delete(f"/api/user/{admin.id}/reset_passkey"))["message"] == \
        "You are not allowed to do this"
    refused = await admin_browser.delete(f"/api/user/{other_admin.id}/reset_passkey")
    assert refused["success"] is False and await PasskeyCredential.filter(user_id=other_admin.id).exists()
    assert (await admin_browser.delete(f"/api/user/{alice.id}/reset_passkey"))["success"]
    assert not await PasskeyCredential.filter(user_id=alice.id).exists()
    again = await admin_browser.delete(f"/api/user/{alice.id}/reset_passkey")
    assert again["message"] == "This user has not registered a passkey"
    root = browsers.new()
    await root.login("root", "123456")
    assert (await root.delete(f"/api/user/{other_admin.id}/reset_passkey"))["success"]
    assert not await PasskeyCredential.exists()


async def test_option_server_address_and_session_are_required(client, browsers: Browsers) -> None:
    alice, browser = await browsers.user("alice")
    body = await browser.post("/api/user/passkey/register/begin", {}, headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "管理员未启用 Passkey 登录"
    assert (await browsers.new().post("/api/user/passkey/login/begin"))["message"] == \
        "The administrator has not enabled passkey login"
    root = browsers.new()
    await root.login("root", "123456")
    refused = await root.put("/api/option/", {"key": "PasskeyLoginEnabled", "value": "true"})
    assert refused["success"] is False and "ServerAddress" in refused["message"]
    await set_options(client, ServerAddress=ORIGIN, PasskeyLoginEnabled=True)
    assert (await browsers.new().get("/api/status"))["data"]["passkey_login"] is True
    await set_options(client, ServerAddress="")
    body = await browser.post("/api/user/passkey/register/begin", {})
    assert body["message"].startswith("Passkeys need the server address (ServerAddress")
    await set_options(client, ServerAddress="http://127.0.0.1:3000")
    body = await browser.post("/api/user/passkey/register/begin", {})
    assert body["message"].startswith("The server address (ServerAddress) must be an http(s) address with a domain")
    await set_options(client, ServerAddress="http://localhost:3000")
    begin = await browser.post("/api/user/passkey/register/begin", {})
    assert begin["data"]["options"]["publicKey"]["rp"]["id"] == "localhost"
    # With the access token (no session), passkeys cannot be managed.
    token = (await browser.get("/api/user/token"))["data"]
    script = browsers.new()
    body = await script.post("/api/user/passkey/register/begin", {},
                             headers={"Authorization": token, "New-Api-User": str(alice.id)})
    assert body["message"].startswith("Passkeys are managed from a logged-in console session")
    too_long = await browser.post("/api/user/passkey/register/begin", {"name": "x" * 65})
    assert too_long["message"] == "The passkey name must be at most 64 characters"
    # The localhost registration begun above is taken by a malformed answer, and is gone after it.
    body = await browser.post("/api/user/passkey/register/finish", {"id": 1})
    assert body["message"] == "The passkey could not be registered, try again"
    body = await browser.post("/api/user/passkey/register/finish", {"id": 1})
    assert body["message"].startswith("No passkey request is waiting")
    assert not await PasskeyCredential.exists()


async def test_malformed_answers_change_nothing(client, browsers: Browsers, enabled) -> None:
    _, browser = await browsers.user("alice")
    authenticator = Authenticator(ORIGIN)
    for bad in ({}, {"rawId": 5}, {"rawId": "%%%"}, {"rawId": "AAAA", "response": "x"}):
        await login_begin(browser)
        body = await browser.post("/api/user/passkey/login/finish", bad)
        assert body["success"] is False, bad
    await register(browser, authenticator)
    options = await login_begin(browser)
    answer = authenticator.get(options)
    answer["response"]["signature"] = answer["response"]["signature"][:-4] + "AAAA"
    body = await browser.post("/api/user/passkey/login/finish", answer)
    assert body["message"] == "Passkey verification failed, try again"
    begin = await browser.post("/api/user/passkey/register/begin", {})
    created = Authenticator(ORIGIN).create(begin["data"]["options"])
    created["response"]["attestationObject"] = "AAAA"
    body = await browser.post("/api/user/passkey/register/finish", created)
    assert body["message"] == "The passkey could not be registered, try again"
    assert await PasskeyCredential.all().count() == 1


@pytest.mark.parametrize("critical_limit", [4])
async def test_passkey_logins_count_against_the_critical_limit(client, browsers: Browsers, enabled) -> None:
    stranger = browsers.new()
    answers = [(await stranger.request("POST", "/api/user/passkey/login/begin", expect_status=None))
               for _ in range(3)]
    answers.append(await stranger.request("POST", "/api/user/passkey/login/finish", {}, expect_status=None))
    assert all(a["success"] is not None for a in answers)
    refused = await stranger.request("POST", "/api/user/passkey/login/begin", expect_status=429)
    assert refused["success"] is False
    assert stranger.last_response.status == 429


def _corrupt(answer: dict, path: str, value: object) -> dict:
    spoilt = {**answer, "response": dict(answer["response"])}
    where, _, key = path.rpartition(".")
    (spoilt["response"] if where == "response" else spoilt)[key] = value
    return spoilt


NOT_JSON = "__4gbm90IGpzb24"  # b"\xff\xfe not json"
A_LIST = "WzEsMl0"  # b"[1,2]"
SPOILT_ASSERTIONS = [("type", "password"), ("id", "AAAA"), ("response.clientDataJSON", "!!!"),
                     ("response.clientDataJSON", NOT_JSON), ("response.clientDataJSON", A_LIST),
                     ("response.authenticatorData", ""), ("response.authenticatorData", "AAAA"),
                     ("response.signature", 5), ("response.signature", ""), ("response.userHandle", 7),
                     ("response.userHandle", "%%"), ("response", None), ("rawId", "x" * 600)]
SPOILT_ATTESTATIONS = [("response.attestationObject", "gQE"), ("response.attestationObject", "oWNmbXRkbm9uZQ"),
                       ("response.attestationObject", "!!"), ("response.clientDataJSON", A_LIST),
                       ("response.clientDataJSON", NOT_JSON),
                       ("response", []), ("rawId", 1), ("type", None)]


async def test_spoilt_answers_are_refused_without_a_server_error(client, browsers: Browsers, enabled) -> None:
    _, browser = await browsers.user("alice")
    authenticator = Authenticator(ORIGIN)
    await register(browser, authenticator)
    for path, value in SPOILT_ASSERTIONS:
        for begin, finish in (("/api/user/passkey/login/begin", "/api/user/passkey/login/finish"),
                              ("/api/user/passkey/verify/begin", "/api/user/passkey/verify/finish")):
            options = (await browser.post(begin))["data"]["options"]
            body = await browser.post(finish, _corrupt(authenticator.get(options), path, value))
            assert body["success"] is False, (finish, path, value)
    for path, value in SPOILT_ATTESTATIONS:
        options = (await browser.post("/api/user/passkey/register/begin", {}))["data"]["options"]
        body = await browser.post("/api/user/passkey/register/finish",
                                  _corrupt(Authenticator(ORIGIN).create(options), path, value))
        assert body["success"] is False, (path, value)
    body = await browser.post("/api/user/passkey/login/finish", [1])
    assert body["message"] == "The request body is not valid JSON"
    assert await PasskeyCredential.all().count() == 1


async def test_a_disabled_or_deleted_users_passkey_logs_nobody_in(client, browsers: Browsers, enabled) -> None:
    alice, browser = await browsers.user("alice")
    authenticator = Authenticator(ORIGIN)
    await register(browser, authenticator)
    await alice.filter(id=alice.id).update(status=int(UserStatus.DISABLED))
    stranger = browsers.new()
    assert (await passkey_login(stranger, authenticator))["message"] == "This user has been banned"
    await alice.filter(id=alice.id).update(status=int(UserStatus.ENABLED), deleted_at=1)
    assert (await passkey_login(stranger, authenticator))["message"] == "This user has been banned"
    assert (await stranger.request("GET", "/api/user/self", expect_status=401))["success"] is False


async def test_a_passkey_is_the_second_factor_a_password_needs(client, browsers: Browsers, enabled) -> None:
    """An account with two-factor login on: its password login waits for a code, its passkey login
    starts the session at once (a passkey is a strong factor); verification offers the passkey."""
    import pyotp

    alice, browser = await browsers.user("alice")
    setup = await browser.post("/api/user/2fa/setup")
    assert (await browser.post("/api/user/2fa/enable", {"code": pyotp.TOTP(setup["data"]["secret"]).now()}))["success"]
    authenticator = Authenticator(ORIGIN)
    await register(browser, authenticator)
    assert "passkey" in (await browser.get("/api/verify/status"))["data"]["methods"]

    by_password = browsers.new()
    body = await by_password.post("/api/user/login", {"username": "alice", "password": "password123"})
    assert body["success"] and body["data"]["require_2fa"] is True, body
    assert (await by_password.get("/api/user/self", expect_status=401))["success"] is False  # no session yet

    by_passkey = browsers.new()
    body = await passkey_login(by_passkey, authenticator)
    assert body["success"] and not body["data"].get("require_2fa"), body
    assert (await by_passkey.get("/api/user/self"))["data"]["id"] == alice.id
