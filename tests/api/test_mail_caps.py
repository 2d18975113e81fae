"""One mailbox receives at most mail.DAILY_CAP account mails in 24 hours, whatever their purpose
(verification codes, address-in-use notices, reset links) and however many callers ask."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from api import keys
from api.services.accounts import mail
from tests.fakes.browsers import set_options
from tests.fakes.smtp import FakeSmtp
from tests.helpers import ApiClient, make_user

CAPPED = ("This address has received the most mails allowed in 24 hours (10), try again in {minutes} min")


@pytest.fixture
def smtp() -> Iterator[FakeSmtp]:
    with FakeSmtp() as server:
        yield server


@pytest.fixture
async def delivered(client, smtp: FakeSmtp, monkeypatch: pytest.MonkeyPatch) -> FakeSmtp:
    """Mail goes straight to the local SMTP server (what the worker's actor does)."""
    await set_options(client, SMTPServer="127.0.0.1", SMTPPort=smtp.port, SMTPFrom="noreply@example.com",
                      ServerAddress="https://gw.example.com")
    options = client.server.app[keys.OPTIONS]

    async def send_now(jobs, to: str, subject: str, html: str) -> None:
        await mail.deliver(options, to, subject, html)

    monkeypatch.setattr(mail, "send_mail", send_now)
    return smtp


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_800_000_000.0]
    monkeypatch.setattr(mail, "clock", lambda: now[0])
    return now


async def ask(client, anon: ApiClient, path: str, email: str, lang: str = "en") -> dict:
    """One request for a mail, once the resend cooldown (another guard) is over."""
    store = client.server.app[keys.STORE]
    for purpose in (mail.VERIFY, mail.RESET):
        await store.redis.delete(mail.cooldown_key(store, purpose, email))
    return await anon.get(path, params={"email": email}, headers={"Accept-Language": lang})


async def test_one_mailbox_gets_ten_mails_a_day_across_purposes(
        client, anon: ApiClient, delivered: FakeSmtp, clock: list[float]) -> None:
    await make_user("alice", email="alice@example.com")
    ok = {"success": True, "message": "", "data": None}
    for i in range(10):  # address-in-use notices (the address is Alice's) and reset links, alternately
        path = "/api/verification" if i % 2 == 0 else "/api/reset_password"
        assert await ask(client, anon, path, "alice@example.com") == ok, i
        clock[0] += 60
    assert len(delivered.messages) == 10
    assert sum("already" in m.html() for m in delivered.messages) == 5
    for path in ("/api/verification", "/api/reset_password"):
        body = await ask(client, anon, path, "alice@example.com")
        # The first of the ten leaves the window 24 h after it was sent: 600 s ago.
        assert body == {"success": False, "message": CAPPED.format(minutes=1430), "data": None}
    body = await ask(client, anon, "/api/reset_password", "alice@example.com", lang="zh-CN")
    assert body["message"] == "该邮箱 24 小时内收到的邮件已达上限（10 封），请 1430 分钟后再试"
    assert len(delivered.messages) == 10  # nothing more went out
    # Another mailbox is not affected; a day after the first mail, one more may go.
    assert await ask(client, anon, "/api/verification", "bob@example.com") == ok
    clock[0] += 86400 - 600
    assert await ask(client, anon, "/api/reset_password", "ALICE@example.com") == ok
    assert (await ask(client, anon, "/api/verification", "alice@example.com"))["success"] is False
    assert len(delivered.messages) == 12


async def test_the_cap_tells_nothing_about_accounts(
        client, anon: ApiClient, delivered: FakeSmtp, clock: list[float]) -> None:
    for _ in range(10):  # no account has this address: no mail goes, each request counts all the same
        assert (await ask(client, anon, "/api/reset_password", "nobody@example.com"))["success"]
    assert delivered.messages == []
    body = await ask(client, anon, "/api/reset_password", "nobody@example.com")
    assert body["message"] == CAPPED.format(minutes=1440)


async def test_a_mail_that_could_not_be_queued_does_not_count(
        client, anon: ApiClient, delivered: FakeSmtp, clock: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    sent = mail.send_mail

    async def broken(*args: object) -> None:
        raise RuntimeError("queue unreachable")

    monkeypatch.setattr(mail, "send_mail", broken)
    resp = await client.get("/api/verification", params={"email": "carol@example.com"})
    assert resp.status == 500
    monkeypatch.setattr(mail, "send_mail", sent)
    for _ in range(10):
        assert (await ask(client, anon, "/api/verification", "carol@example.com"))["success"]
    assert len(delivered.messages) == 10
    assert (await ask(client, anon, "/api/verification", "carol@example.com"))["success"] is False
