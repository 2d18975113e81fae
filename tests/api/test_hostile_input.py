"""Input an attacker chooses gets a clear error and changes nothing, never a 500: numbers beyond a
column's range, thousands of digits, Unicode digits, NUL bytes, absurd option values; and the
hardening around accounts (headers, no account discovery, access tokens, login backoff)."""
from __future__ import annotations

import asyncio

import orjson
import pytest

from api import keys
from api.services.columns import max_length
from models import Log, Midjourney, QuotaData, Task, User
from models.enums import LogType
from tests.fakes.stripe import enable_stripe
from tests.helpers import ApiClient, both_databases, make_user


async def no_500(api: ApiClient, method: str, path: str, **kw) -> dict:
    """The answer is not a server error and is in the envelope."""
    resp = await api.client.request(method, path, headers=api._headers(None), **kw)
    assert resp.status < 500, (path, resp.status, await resp.text())
    body = await resp.json()
    assert set(body) >= {"success", "message"}, (path, body)
    return body


@both_databases
async def test_numbers_beyond_every_range(client, root: ApiClient, login_as) -> None:
    user_api, _ = await login_as("alice")
    for path in ("/api/token/3000000000", "/api/token/99999999999999999999999", "/api/redemption/3000000000",
                 "/api/channel/3000000000", "/api/user/3000000000", "/api/user/99999999999999999999999"):
        body = await no_500(user_api if path.startswith("/api/token") else root, "GET", path)
        assert body["success"] is False, (path, body)  # no such row
    for query in ("p=" + "9" * 5000, "p=²", "page_size=" + "1" * 30, "channel=3000000000",
                  "start_timestamp=99999999999999999999"):
        await no_500(root, "GET", f"/api/log/?{query}")
    for keyword in ("²", "٣", "9" * 5000, "3000000000"):
        body = await root.get("/api/user/search", params={"keyword": keyword})
        assert body["success"], body
        body = await root.get("/api/channel/search", params={"keyword": keyword})
        assert body["success"], body
    body = await root.put("/api/user/", {"id": 1, "quota": 10 ** 30})
    assert body["success"] is False
    assert (await User.get(username="root")).quota < 10 ** 20
    for quota in ("1_000", "+5", "٣"):  # Python's int() grammar, not the integer rule (api.services.params)
        body = await root.put("/api/user/", {"id": 1, "quota": quota})
        assert body == {"success": False, "message": "The quota must be an integer", "data": None}, quota
    # A body id past the id column: the same answer on every database (PostgreSQL once said "out of range").
    for api, path in ((user_api, "/api/token/"), (root, "/api/redemption/")):
        body = await api.put(path, {"id": 3_000_000_000, "name": "x"})
        assert body == {"success": False, "message": "Invalid parameter: id", "data": None}, path
    # Lists of ids and the multi-key channel id alike: refused or "not found" before the database.
    for path in ("/api/channel/batch", "/api/channel/batch/tag"):
        body = await root.post(path, {"ids": [3_000_000_000], "tag": "x"})
        assert body == {"success": False, "message": "Invalid parameter: ids", "data": None}, path
    body = await root.post("/api/channel/multi_key/manage", {"channel_id": 3_000_000_000, "action": "get_key_status"})
    assert body["success"] is False and "channel" in body["message"].lower(), body


@both_databases
async def test_nul_bytes_are_refused_before_anything_is_stored(client, anon: ApiClient, root: ApiClient) -> None:
    resp = await anon.client.post("/api/user/login", json={"username": "ro\u0000ot", "password": "123456"})
    assert resp.status == 400 and "NUL" in (await resp.json())["message"]
    resp = await root.client.put("/api/user/self", json={"display_name": "a\u0000b"},
                                 headers=root._headers(None))
    assert resp.status == 400
    assert (await User.get(username="root")).display_name != "a\u0000b"
    resp = await root.client.get("/api/user/search?keyword=a%00b", headers=root._headers(None))
    assert resp.status == 400
    body = await root.put("/api/user/self", {"display_name": "a\\u0000b"})  # an escaped backslash: plain text
    assert body["success"], body


# (list, filter, the model and column it filters) of every console list with a text filter
TEXT_FILTERS = [
    ("/api/log/self", "model_name", Log, "model_name"), ("/api/log/self", "token_name", Log, "token_name"),
    ("/api/log/self/stat", "model_name", Log, "model_name"), ("/api/log/", "username", Log, "username"),
    ("/api/log/", "model_name", Log, "model_name"), ("/api/log/stat", "token_name", Log, "token_name"),
    ("/api/task/self", "task_id", Task, "task_id"), ("/api/task/self", "platform", Task, "platform"),
    ("/api/task/", "task_id", Task, "task_id"), ("/api/task/", "platform", Task, "platform"),
    ("/api/mj/self", "mj_id", Midjourney, "mj_id"), ("/api/mj/", "mj_id", Midjourney, "mj_id"),
    ("/api/data/", "username", QuotaData, "username"), ("/api/user/search", "group", User, "group"),
    ("/api/user/search", "keyword", User, "email"), ("/api/channel/search", "tag", None, 64),
    ("/api/channel/search", "group", None, 255), ("/api/channel/search", "keyword", None, 128),
    ("/api/channel/", "tag", None, 64), ("/api/redemption/search", "keyword", None, 64),
]


def nothing_found(data) -> bool:
    if isinstance(data, list):
        return data == []
    return data.get("total", 0) == 0 and not data.get("items") and not data.get("quota")


@both_databases
async def test_a_filter_longer_than_its_column_matches_nothing(client, root: ApiClient, login_as) -> None:
    user_api, alice = await login_as("alice")
    at_most = "m" * max_length(Log, "model_name")
    await Log.create(user_id=alice.id, username="alice", type=int(LogType.CONSUME), model_name=at_most, quota=7)
    for path, name, model, column in TEXT_FILTERS:
        limit = column if model is None else max_length(model, column)
        api = user_api if "/self" in path else root
        for value in ("x" * (limit + 1), "é" * 1000):
            body = await no_500(api, "GET", path, params={name: value})
            assert body["success"] and nothing_found(body["data"]), (path, name, body)
    # At its column's length a filter is a filter (nothing was cut to make it fit).
    body = await user_api.get("/api/log/self", params={"model_name": at_most})
    assert [i["model_name"] for i in body["data"]["items"]] == [at_most]
    assert (await user_api.get("/api/log/self/stat", params={"model_name": at_most}))["data"]["quota"] == 7


async def raw_request(client, request_line: str, header: bytes, body: bytes = b"") -> tuple[int, dict]:
    """A request with a header of raw bytes (0xff: not UTF-8, which no client library sends)."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(f"{request_line} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n".encode() + header + b"\r\n\r\n" + body)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, content = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), orjson.loads(content)


async def test_credentials_that_are_not_text_are_no_credentials(client) -> None:
    for header in (b"Authorization: \xff", b"Authorization: Bearer \xff\xfe", b"Cookie: session=\xff"):
        for path in ("/api/user/self", "/api/log/self?p=1", "/api/token/"):
            status, body = await raw_request(client, f"GET {path}", header)
            assert status == 401 and body["success"] is False and body["message"], (header, path, body)
        status, body = await raw_request(client, "GET /api/status", header)
        assert status == 200 and body["success"], header
    login = b'{"username": "root", "password": "123456"}'
    status, body = await raw_request(client, "POST /api/user/login", b"Cookie: session=\xff", login)
    assert status == 200 and body["success"] and body["data"]["username"] == "root"


async def test_a_stripe_signature_that_is_not_ascii_is_refused(client) -> None:
    await enable_stripe(client.server.app[keys.OPTIONS])
    for signature in ("t=1,v1=é".encode(), b"t=1,v1=\xff"):
        status, body = await raw_request(client, "POST /api/stripe/webhook", b"Stripe-Signature: " + signature,
                                         b'{"type": "checkout.session.completed"}')
        assert status == 400 and body["success"] is False and "signature" in body["message"].lower(), body


async def test_absurd_option_values_are_refused(client, root: ApiClient, anon: ApiClient) -> None:
    for value in ("1e30", "inf", "nan", str(2 ** 63)):
        body = await root.put("/api/option/", {"key": "QuotaForNewUser", "value": value})
        assert body["success"] is False, value
    body = await anon.post("/api/user/register", {"username": "newbie", "password": "password123"})
    assert body["success"], body


async def test_metrics_with_a_non_ascii_bearer_and_a_nul_path(client) -> None:
    await client.server.app[keys.OPTIONS].update("MetricsToken", "metrics-secret")
    resp = await client.get("/metrics", headers={"Authorization": "Bearer é".encode().decode("latin-1")})
    assert resp.status == 403
    resp = await client.get("/index.html%00.js")
    assert resp.status == 404


async def test_security_headers_and_no_versions(client) -> None:
    resp = await client.get("/api/status")
    assert resp.headers["Server"] == "ai-gateway"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
    resp = await client.get("/some/page")  # the console's page (here: its not-built notice, text/plain)
    assert "aiohttp" not in resp.headers.get("Server", "") and "Python" not in resp.headers.get("Server", "")


async def test_console_pages_carry_csp_and_deny_framing(aiohttp_client, settings, tmp_path) -> None:
    from dataclasses import replace

    from api.app import create_app

    build = tmp_path / "build"
    build.mkdir()
    (build / "index.html").write_text("<!doctype html><title>console</title>")
    console = await aiohttp_client(create_app(replace(settings, frontend_dir=build)))
    resp = await console.get("/login")
    assert resp.status == 200
    csp = resp.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "object-src 'none'" in csp
    assert resp.headers["X-Frame-Options"] == "DENY"


async def test_a_new_password_ends_the_access_token(client, login_as, root: ApiClient) -> None:
    api, user = await login_as("alice")
    token = (await api.get("/api/user/token"))["data"]
    bearer = api.fork()  # no cookie: the access token alone
    bearer.user_id = user.id
    bearer.headers = {"Authorization": f"Bearer {token}"}
    assert (await bearer.get("/api/user/self"))["success"]
    assert (await api.post("/api/verify", {"method": "password", "password": "password123"}))["success"]
    body = await api.put("/api/user/self", {"password": "newpassword1", "original_password": "password123"})
    assert body["success"], body
    await bearer.get("/api/user/self", expect_status=401)
    # An admin reset ends the new one too.
    api2, user2 = await login_as("bob")
    token2 = (await api2.get("/api/user/token"))["data"]
    assert (await root.put("/api/user/", {"id": user2.id, "username": "bob", "password": "resetpass123"}))["success"]
    bearer2 = api.fork()
    bearer2.user_id = user2.id
    bearer2.headers = {"Authorization": f"Bearer {token2}"}
    await bearer2.get("/api/user/self", expect_status=401)
    await bearer.client.session.close()
    await bearer2.client.session.close()


async def test_password_guessing_on_one_account_backs_off(client, anon: ApiClient) -> None:
    await make_user("alice")
    answers = []
    for i in range(8):  # from as many addresses as the attacker likes: the count is the account's
        browser = anon.fork()
        try:
            resp = await browser.client.post("/api/user/login", json={"username": "alice", "password": f"guess{i}"},
                                              headers={"X-Forwarded-For": f"203.0.113.{i}"})
            answers.append((resp.status, (await resp.json())["message"]))
        finally:
            await browser.client.session.close()
    assert [s for s, _ in answers[:6]] == [200] * 6  # five free failures, the sixth starts the wait
    assert answers[6][0] == 429 and "try again in" in answers[6][1]
    # During the wait even the right password is not checked.
    resp = await anon.client.post("/api/user/login", json={"username": "alice", "password": "password123"})
    assert resp.status == 429
    store = client.server.app[keys.STORE]
    async for key in store.redis.scan_iter(match=f"{store.prefix}login:failures:*"):
        await store.redis.hset(key, "until", 0)  # the wait is over
    assert (await anon.login("alice", "password123"))["username"] == "alice"
    assert not [k async for k in store.redis.scan_iter(match=f"{store.prefix}login:failures:*")]  # cleared


@pytest.mark.parametrize("path", ["/api/verification?email=alice@example.com"])
async def test_verification_does_not_reveal_registered_addresses(client, anon: ApiClient, path) -> None:
    await make_user("alice", email="alice@example.com")
    await client.server.app[keys.OPTIONS].update("SMTPServer", "127.0.0.1")
    taken = await anon.get(path)
    free = await anon.get("/api/verification?email=nobody@example.com")
    assert taken["message"] == free["message"] != "The e-mail address is already in use"


async def test_a_forwarded_address_that_is_no_address(aiohttp_client, settings) -> None:
    """Behind a trusted proxy that passes X-Forwarded-For on as it came, a hop that is not an IP
    address (bytes that are not UTF-8, a word) is not the client's address: the proxy's own view
    stands. Nothing answers 500 (rate-limit keys, a key's IP allow-list and its message)."""
    import asyncio
    import dataclasses

    from api.app import create_app
    from tests.relay.fakes import make_key, rich_user

    app = create_app(dataclasses.replace(settings, trusted_proxies=("127.0.0.1/32", "::1/128")))
    gateway = await aiohttp_client(app)
    key = await make_key(await rich_user(), allow_ips="198.51.100.7")

    async def raw(path: str, forwarded: bytes, body: bytes, auth: bytes = b"") -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection(gateway.server.host, gateway.server.port)
        head = [b"POST " + path.encode() + b" HTTP/1.1", b"Host: gateway", b"Connection: close",
                b"Content-Type: application/json", b"Content-Length: " + str(len(body)).encode(),
                b"X-Forwarded-For: " + forwarded]
        if auth:
            head.append(b"Authorization: Bearer " + auth)
        writer.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        answer = await reader.read()
        writer.close()
        await writer.wait_closed()
        status, _, rest = answer.partition(b"\r\n")
        return int(status.split()[1]), rest.partition(b"\r\n\r\n")[2]

    chat = b'{"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}'
    for forwarded in (b"\xff\xfe", b"not-an-address", b"203.0.113.9, \xc3\x28"):
        status, body = await raw("/v1/chat/completions", forwarded, chat, f"sk-{key.key}".encode())
        assert status == 403 and b"ip" in body.lower(), (forwarded, body)
        status, body = await raw("/api/user/login", forwarded, b'{"username": "nobody", "password": "x"}')
        assert status == 200 and b'"success":false' in body.replace(b" ", b""), (forwarded, body)
