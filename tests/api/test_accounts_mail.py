"""E-mail: verification codes, registration with a code, password reset, and the mail.send actor,
against a local SMTP server."""
from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from dramatiq import Retry

from api import keys
from api.services.accounts import mail
from models import User
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.smtp import FakeSmtp
from tests.helpers import ApiClient, both_databases, make_user

CODE = re.compile(r"<strong>([A-Za-z0-9]{6})</strong>")


@pytest.fixture
def smtp() -> Iterator[FakeSmtp]:
    with FakeSmtp(username="mailer@example.com", password="smtp-secret") as server:
        yield server


@pytest.fixture
async def smtp_options(client, smtp: FakeSmtp) -> FakeSmtp:
    await set_options(client, SMTPServer="127.0.0.1", SMTPPort=smtp.port, SMTPAccount="mailer@example.com",
                      SMTPToken="smtp-secret", SMTPFrom="noreply@example.com", SystemName="Test Gateway",
                      ServerAddress="https://gw.example.com")
    return smtp


@pytest.fixture
def direct_delivery(client, smtp_options: FakeSmtp, monkeypatch: pytest.MonkeyPatch) -> FakeSmtp:
    """Mail goes straight to SMTP in this process (what the actor does), instead of through a queue."""
    options = client.server.app[keys.OPTIONS]

    async def send_now(app, to: str, subject: str, html: str) -> None:
        await mail.deliver(options, to, subject, html)

    monkeypatch.setattr(mail, "send_mail", send_now)
    return smtp_options


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


def code_of(received) -> str:
    match = CODE.search(received.html())
    assert match, received.html()
    return match.group(1)


async def test_verification_code_through_a_worker(client, anon: ApiClient, smtp_options: FakeSmtp, worker) -> None:
    await set_options(client, EmailVerificationEnabled=True)
    body = await anon.get("/api/verification?email=New.User@Example.com")
    assert body == {"success": True, "message": "", "data": None}
    received = (await smtp_options.wait_for(1))[0]
    assert received.rcpt_tos == ["new.user@example.com"]
    assert received.login == "mailer@example.com"  # the worker authenticated with the SMTP options
    assert received.message["From"] == "Test Gateway <noreply@example.com>"
    assert "verification" in received.message["Subject"]
    code = code_of(received)

    body = await anon.post("/api/user/register", {"username": "newbie", "password": "password123",
                                                 "email": "new.user@example.com", "verification_code": code})
    assert body["success"], body
    assert (await User.get(username="newbie")).email == "new.user@example.com"
    again = await anon.post("/api/user/register", {"username": "second", "password": "password123",
                                                  "email": "new.user@example.com", "verification_code": code})
    assert again["message"] == "The verification code is wrong or has expired"  # used once; taken: no new one


async def test_verification_refusals(client, anon: ApiClient, direct_delivery: FakeSmtp) -> None:
    await make_user("owner", email="used@example.com")
    await set_options(client, EmailDomainRestrictionEnabled=True, EmailDomainWhitelist="example.com,corp.example",
                      EmailAliasRestrictionEnabled=True, EmailVerificationEnabled=True)
    for email, message in [
        ("", "Please enter the e-mail address"),
        ("not-an-address", "Invalid e-mail address"),
        ("me@gmail.com", "The administrator only allows e-mail addresses of these domains: example.com, corp.example"),
        ("me+tag@example.com", "The administrator does not allow e-mail aliases (an address with + before the @)"),
    ]:
        body = await anon.get("/api/verification", params={"email": email})
        assert body == {"success": False, "message": message, "data": None}, email
    assert direct_delivery.messages == []

    assert (await anon.get("/api/verification?email=me@corp.example"))["success"]
    body = await anon.get("/api/verification?email=me@corp.example")
    assert body["success"] is False and body["message"].startswith("A mail was sent less than")
    assert len(direct_delivery.messages) == 1  # the refused resend sent nothing

    # A registered address answers as a free one (no account discovery); its owner gets a notice, no code.
    assert await anon.get("/api/verification?email=USED@example.com") == {"success": True, "message": "",
                                                                          "data": None}
    notice = direct_delivery.messages[1]
    assert notice.rcpt_tos == ["used@example.com"] and "already" in notice.html() and not CODE.search(notice.html())
    body = await anon.post("/api/user/register", {"username": "squatter", "password": "password123",
                                                 "email": "used@example.com", "verification_code": "123456"})
    assert body["message"] == "The verification code is wrong or has expired", body  # not "already in use"


async def test_smtp_not_configured(anon: ApiClient) -> None:
    for path in ("/api/verification?email=a@example.com", "/api/reset_password?email=a@example.com"):
        body = await anon.get(path)
        assert body["message"] == "The administrator has not configured SMTP, no mail can be sent"


@both_databases
async def test_register_with_email_verification(client, anon: ApiClient, direct_delivery: FakeSmtp) -> None:
    await set_options(client, EmailVerificationEnabled=True, QuotaForNewUser=5)
    await anon.get("/api/verification?email=reg@example.com")
    code = code_of(direct_delivery.messages[0])
    base = {"username": "reg", "password": "password123", "email": "reg@example.com"}
    for body, message in [
        ({**base, "email": ""}, "Please enter the e-mail address"),
        ({**base}, "Please enter the verification code"),
        ({**base, "verification_code": "WRONG1"}, "The verification code is wrong or has expired"),
        ({**base, "email": "other@example.com", "verification_code": code},
         "The verification code is wrong or has expired"),
    ]:
        answer = await anon.post("/api/user/register", body)
        assert answer == {"success": False, "message": message, "data": None}
    assert not await User.filter(username="reg").exists()

    assert (await anon.post("/api/user/register", {**base, "verification_code": code}))["success"]
    user = await User.get(username="reg")
    assert (user.email, user.quota) == ("reg@example.com", 5)


async def test_a_code_dies_after_five_wrong_guesses(client, anon: ApiClient, direct_delivery: FakeSmtp) -> None:
    await set_options(client, EmailVerificationEnabled=True)
    await anon.get("/api/verification?email=guess@example.com")
    code = code_of(direct_delivery.messages[0])
    base = {"username": "guess", "password": "password123", "email": "guess@example.com"}
    for _ in range(mail.MAX_ATTEMPTS):
        await anon.post("/api/user/register", {**base, "verification_code": "AAAAAA"})
    body = await anon.post("/api/user/register", {**base, "verification_code": code})
    assert body["message"] == "The verification code is wrong or has expired"


async def test_codes_live_in_redis_hashed_with_expiry(client, anon: ApiClient, direct_delivery: FakeSmtp) -> None:
    await anon.get("/api/verification?email=store@example.com")
    code = code_of(direct_delivery.messages[0])
    store = client.server.app[keys.STORE]
    key = mail.code_key(store, mail.VERIFY, "store@example.com")
    assert key.startswith(store.prefix)
    stored = await store.redis.hgetall(key)
    assert stored["code"] != code and code not in str(stored)
    assert 0 < await store.redis.ttl(key) <= mail.CODE_TTL
    assert 0 < await store.redis.ttl(mail.cooldown_key(store, mail.VERIFY, "store@example.com")) <= 30


@both_databases
async def test_password_reset(client, browsers: Browsers, direct_delivery: FakeSmtp) -> None:
    user, session = await browsers.user("alice", email="alice@example.com")
    anon = browsers.new()
    assert (await anon.get("/api/reset_password?email=ALICE@example.com"))["success"]
    received = direct_delivery.messages[0]
    assert received.rcpt_tos == ["alice@example.com"]
    link = re.search(r'href="([^"]+)"', received.html()).group(1).replace("&amp;", "&")
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://gw.example.com/user/reset"
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert query["email"] == "alice@example.com" and len(query["token"]) == 32

    before = user.password
    for body in ({"email": "alice@example.com", "token": "x" * 32}, {"email": "bob@example.com",
                                                                     "token": query["token"]}, {}):
        answer = await anon.post("/api/user/reset", body)
        assert answer == {"success": False, "message": "The reset link is invalid or has expired", "data": None}
    await user.refresh_from_db()
    assert user.password == before

    body = await anon.post("/api/user/reset", query)
    new_password = body["data"]
    assert body["success"] and isinstance(new_password, str) and len(new_password) == 12
    await session.get("/api/user/self", expect_status=401)  # sessions end with the old password
    await browsers.login("alice", new_password)
    again = await anon.post("/api/user/reset", query)
    assert again["message"] == "The reset link is invalid or has expired"  # single use


async def test_reset_links_never_come_from_the_host_header(client, browsers: Browsers,
                                                          direct_delivery: FakeSmtp) -> None:
    await browsers.user("alice", email="alice@example.com")
    anon = browsers.new()
    resp = await client.get("/api/reset_password?email=alice@example.com", headers={"Host": "evil.example"})
    assert (await resp.json())["success"]
    assert "evil.example" not in direct_delivery.messages[0].html()
    assert "https://gw.example.com/user/reset?" in direct_delivery.messages[0].html().replace("&amp;", "&")
    await set_options(client, ServerAddress="")  # unset: no link can be trusted, no mail is sent
    body = await anon.get("/api/reset_password?email=bob@example.com")
    assert body["success"] is False and "server address is not set" in body["message"]
    assert len(direct_delivery.messages) == 1


async def test_reset_for_an_unknown_address_answers_the_same(anon: ApiClient, direct_delivery: FakeSmtp) -> None:
    body = await anon.get("/api/reset_password?email=nobody@example.com")
    assert body == {"success": True, "message": "", "data": None}
    assert direct_delivery.messages == []
    body = await anon.get("/api/reset_password?email=nobody@example.com")
    assert body["message"].startswith("A mail was sent less than")  # same cooldown as a real address


# -- the actor ----------------------------------------------------------------------------------------
@pytest.fixture
def worker_context(client, settings):
    from api.resources import Resources
    from api.upstream.credentials import process_credentials
    from workers.context import set_context

    app = client.server.app
    set_context(Resources(settings, app[keys.STORE], app[keys.EVENTS], app[keys.OPTIONS], app[keys.HTTP],
                          app[keys.JOBS], process_credentials()))
    yield
    set_context(None)


async def test_actor_retries_transient_failures_and_drops_misconfiguration(
        client, smtp_options: FakeSmtp, worker_context, caplog: pytest.LogCaptureFixture) -> None:
    from workers.actors.mail import send_mail

    smtp_options.refuse_first = 1
    with pytest.raises(Retry):
        await send_mail("x@example.com", "Hello", "<p>code <strong>SECRET</strong></p>")
    await send_mail("x@example.com", "Hello", "<p>code <strong>SECRET</strong></p>")
    assert [m.rcpt_tos for m in smtp_options.messages] == [["x@example.com"]]
    assert smtp_options.messages[0].html().strip() == "<p>code <strong>SECRET</strong></p>"

    await set_options(client, SMTPToken="wrong-secret")
    with pytest.raises(Retry):  # the admin may fix the password: retried
        await send_mail("x@example.com", "Hello", "<p>SECRET</p>")
    await set_options(client, EmailVerificationEnabled=False, SMTPServer="")
    await send_mail("x@example.com", "Hello", "<p>SECRET</p>")  # nothing to retry: dropped, logged
    assert len(smtp_options.messages) == 1
    assert "SECRET" not in caplog.text and "x@example.com" not in caplog.text
