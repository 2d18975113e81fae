"""Password guessing is slowed per account and source: an attacker at many addresses locks out his
own addresses and slows unknown ones, never the owner's known browser (api.web.login_guard).

Sources are the forwarded addresses of a trusted proxy (the test client's own address); time is
the guard's clock, frozen and moved by the tests."""
from __future__ import annotations

import dataclasses

import pytest

from api import keys
from api.services.accounts import mail
from api.services.accounts import users as accounts
from api.web import login_guard
from tests.fakes.browsers import Browsers
from tests.helpers import ApiClient, make_user

FAILED = "Wrong username or password, or the user has been banned"


@pytest.fixture
def critical_limit() -> int:
    return 100000  # the per-address limit of the critical routes (a test may parametrize it)


@pytest.fixture
def settings(settings, critical_limit: int):
    return dataclasses.replace(settings, trusted_proxies=("127.0.0.1/32", "::1/128"),
                               rate_limit_critical=critical_limit)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_800_000_000.0]
    monkeypatch.setattr(login_guard, "clock", lambda: now[0])
    return now


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


async def try_login(browser: ApiClient, address: str, username: str, password: str,
                    lang: str = "en") -> tuple[int, str]:
    resp = await browser.client.post("/api/user/login", json={"username": username, "password": password},
                                      headers={"X-Forwarded-For": address, "Accept-Language": lang})
    body = await resp.json()
    if body["success"]:
        browser.user_id = body["data"]["id"]
        return resp.status, "ok"
    return resp.status, body["message"]


def backoff(seconds: int) -> tuple[int, str]:
    return 429, f"Too many wrong passwords for this account: try again in {seconds} s"


async def test_spraying_from_many_addresses_never_locks_out_the_known_browser(
        client, browsers: Browsers, clock: list[float]) -> None:
    owner = browsers.new()
    assert await try_login(owner, "198.51.100.7", "root", "123456") == (200, "ok")
    await owner.get("/api/user/logout")  # the session ends; the device cookie stays
    answers = []
    for i in range(50):  # 50 wrong guesses from 10 addresses, each from a fresh browser
        answers.append(await try_login(browsers.new(), f"203.0.113.{i % 10}", "root", f"guess-{i}"))
    assert "ok" not in [m for _, m in answers]
    assert answers[:6] == [(200, FAILED)] * 6 and answers[6] == backoff(2)  # the account's unknown sources
    assert answers.count((200, FAILED)) == 6
    # The owner's browser logs in with the right password, from its address or any other.
    assert await try_login(owner, "198.51.100.7", "root", "123456") == (200, "ok")
    assert await try_login(owner, "192.0.2.50", "root", "123456") == (200, "ok")
    # It is the cookie, not the address: a fresh browser at the owner's address waits like the rest.
    assert await try_login(browsers.new(), "198.51.100.7", "root", "123456") == backoff(2)
    # A typo in the known browser counts only against itself.
    assert await try_login(owner, "198.51.100.7", "root", "wrong") == (200, FAILED)
    assert await try_login(owner, "198.51.100.7", "root", "123456") == (200, "ok")


async def test_a_fresh_address_waits_only_for_the_unknown_source_throttle(
        client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice")
    attacker = browsers.new()
    for i in range(6):
        assert await try_login(attacker, "203.0.113.1", "alice", f"guess-{i}") == (200, FAILED)
    assert await try_login(attacker, "203.0.113.1", "alice", "guess") == backoff(2)
    # The owner at a new address, with no cookie: delayed by the unknown-source wait, and only by it.
    owner = browsers.new()
    assert await try_login(owner, "198.51.100.2", "alice", "password123") == backoff(2)
    clock[0] += 2
    assert await try_login(owner, "198.51.100.2", "alice", "password123") == (200, "ok")
    # The attacker's own address keeps its count: its next failure waits 4 s there, and only there.
    assert await try_login(attacker, "203.0.113.1", "alice", "guess-6") == (200, FAILED)
    assert await try_login(attacker, "203.0.113.1", "alice", "password123") == backoff(4)
    assert await try_login(browsers.new(), "192.0.2.9", "alice", "password123") == (200, "ok")
    clock[0] += 4
    assert await try_login(attacker, "203.0.113.1", "alice", "password123") == (200, "ok")


async def test_username_and_email_share_one_counter(client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice", email="alice@example.com")
    browser = browsers.new()
    for i in range(3):
        assert await try_login(browser, "203.0.113.5", "alice", f"guess-{i}") == (200, FAILED)
        assert await try_login(browser, "203.0.113.5", "Alice@Example.com", f"guess-{i}") == (200, FAILED)
    assert await try_login(browser, "203.0.113.5", "alice", "password123") == backoff(2)
    assert await try_login(browser, "203.0.113.5", "alice@example.com", "password123") == backoff(2)


async def test_unknown_names_answer_and_cost_like_wrong_passwords(
        client, browsers: Browsers, clock: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    await make_user("alice", email="alice@example.com")
    checks: list[str] = []
    real_verify = accounts.verify_password

    async def counted(password: str, hashed: str) -> bool:
        checks.append(password)
        return await real_verify(password, hashed)

    monkeypatch.setattr(accounts, "verify_password", counted)
    seen = {}
    for n, name in enumerate(("alice", "ghost", "ghost@example.com")):
        browser = browsers.new()
        seen[name] = [await try_login(browser, f"203.0.113.{n}", name, f"guess-{i}") for i in range(7)]
    assert seen["alice"] == seen["ghost"] == seen["ghost@example.com"] == [(200, FAILED)] * 6 + [backoff(2)]
    assert len(checks) == 18  # a bcrypt check for every name checked, existing or not
    # Each unknown name has its counter: another one is not slowed by them.
    assert await try_login(browsers.new(), "203.0.113.1", "nobody", "guess") == (200, FAILED)


async def test_success_clears_the_count_of_its_source(client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice")
    # An unknown source (fresh browsers at one address): four failures, a success, then five free again.
    for i in range(4):
        assert await try_login(browsers.new(), "203.0.113.3", "alice", f"guess-{i}") == (200, FAILED)
    assert await try_login(browsers.new(), "203.0.113.3", "alice", "password123") == (200, "ok")
    for i in range(6):
        assert await try_login(browsers.new(), "203.0.113.3", "alice", f"guess-{i}") == (200, FAILED)
    assert await try_login(browsers.new(), "203.0.113.3", "alice", "password123") == backoff(2)
    clock[0] += 2
    # A known browser: the same, on its own counter.
    known = browsers.new()
    assert await try_login(known, "198.51.100.3", "alice", "password123") == (200, "ok")
    await known.get("/api/user/logout")
    for i in range(4):
        assert await try_login(known, "198.51.100.3", "alice", f"guess-{i}") == (200, FAILED)
    assert await try_login(known, "198.51.100.3", "alice", "password123") == (200, "ok")
    await known.get("/api/user/logout")
    for i in range(6):
        assert await try_login(known, "198.51.100.3", "alice", f"guess-{i}") == (200, FAILED)
    assert await try_login(known, "198.51.100.3", "alice", "password123") == backoff(2)


async def test_a_live_session_is_a_known_source(client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice")
    owner = browsers.new()
    assert await try_login(owner, "198.51.100.7", "alice", "password123") == (200, "ok")
    owner.client.session.cookie_jar.clear(lambda c: c.key.startswith(login_guard.DEVICE_COOKIE))
    for i in range(8):
        await try_login(browsers.new(), f"203.0.113.{i}", "alice", f"guess-{i}")
    assert await try_login(browsers.new(), "198.51.100.8", "alice", "password123") == backoff(2)
    assert await try_login(owner, "198.51.100.7", "alice", "password123") == (200, "ok")


async def test_a_device_cookie_is_its_own_accounts_and_issued_fresh(
        client, browsers: Browsers, clock: list[float]) -> None:
    alice = await make_user("alice")
    await make_user("bob")
    shared = browsers.new()
    assert await try_login(shared, "198.51.100.7", "bob", "password123") == (200, "ok")
    await shared.get("/api/user/logout")
    for i in range(8):
        await try_login(browsers.new(), f"203.0.113.{i}", "alice", f"guess-{i}")
    # Bob's device is no device of Alice's; nor is a cookie the server did not remember.
    assert await try_login(shared, "198.51.100.7", "alice", "password123") == backoff(2)
    forged = browsers.new()
    name = login_guard.device_cookie(alice.id)
    forged.client.session.cookie_jar.update_cookies({name: "x" * 43},
                                                    response_url=forged.client.make_url("/api/user/login"))
    assert await try_login(forged, "198.51.100.9", "alice", "password123") == backoff(2)
    # After a login the browser holds a new value, and only that one is known.
    clock[0] += 2
    assert await try_login(forged, "198.51.100.9", "alice", "password123") == (200, "ok")
    issued = [c.value for c in forged.client.session.cookie_jar if c.key == name]
    assert len(issued) == 1 and issued[0] != "x" * 43
    store = client.server.app[keys.STORE]
    guard = login_guard.LoginGuard(store, client.server.app[keys.SESSIONS].secret)
    assert await store.redis.zcard(guard.devices_key(f"u{alice.id}")) == 1


async def test_a_password_reset_makes_its_browser_the_known_one(
        client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice", email="alice@example.com")
    old = browsers.new()
    assert await try_login(old, "198.51.100.7", "alice", "password123") == (200, "ok")
    await old.get("/api/user/logout")
    for i in range(8):
        await try_login(browsers.new(), f"203.0.113.{i}", "alice", f"guess-{i}")
    store = client.server.app[keys.STORE]
    token = await mail.issue_code(store, mail.RESET, "alice@example.com", mail.RESET_TOKEN_LENGTH)
    mailbox = browsers.new()  # the browser that opened the link from the mail
    body = await mailbox.post("/api/user/reset", {"email": "alice@example.com", "token": token},
                              headers={"X-Forwarded-For": "192.0.2.77"})
    password = body["data"]
    assert body["success"], body
    assert await try_login(mailbox, "192.0.2.77", "alice", password) == (200, "ok")
    # The reset forgot the devices from before it (whoever held them).
    assert await try_login(old, "198.51.100.7", "alice", password) == backoff(2)


async def test_the_backoff_speaks_both_languages(client, browsers: Browsers, clock: list[float]) -> None:
    await make_user("alice")
    browser = browsers.new()
    for i in range(6):
        await try_login(browser, "203.0.113.1", "alice", f"guess-{i}")
    assert await try_login(browser, "203.0.113.1", "alice", "x", lang="zh-CN") == (
        429, "该账户密码错误次数过多，请 2 秒后重试")


@pytest.mark.parametrize("critical_limit", [10])
async def test_the_address_limit_spares_the_known_browser(client, browsers: Browsers, clock: list[float]) -> None:
    """Everyone behind one address (a NAT, or a proxy missing from TRUSTED_PROXIES): guessers use up
    the address's limit of critical requests; the owner's browser still logs in."""
    await make_user("alice")
    owner = browsers.new()
    assert await try_login(owner, "198.51.100.1", "alice", "password123") == (200, "ok")
    await owner.get("/api/user/logout")
    answers = [await try_login(browsers.new(), "198.51.100.1", "alice", f"guess-{i}") for i in range(12)]
    assert answers[-1] == (429, "Too many requests, try again later")
    assert await try_login(browsers.new(), "198.51.100.1", "alice", "password123") == answers[-1]
    assert await try_login(owner, "198.51.100.1", "alice", "password123") == (200, "ok")
    # A cookie of another account does not spare its holder.
    await make_user("mallory")
    mallory = browsers.new()
    assert await try_login(mallory, "198.51.100.2", "mallory", "password123") == (200, "ok")
    assert await try_login(mallory, "198.51.100.1", "alice", "password123") == answers[-1]
