"""Status, options, login/logout and roles: the backbone's console routes."""
from __future__ import annotations

import pytest

from models import Log, Option, User
from models.enums import Role
from tests.helpers import ApiClient, both_databases, make_user

STATUS_FIELDS = {
    "system_name", "logo", "footer_html", "quota_per_unit", "display_in_currency", "enable_drawing", "enable_task",
    "enable_data_export", "chats", "data_export_default_time", "default_collapse_sidebar", "mj_notify_enabled",
    "chat_link", "chat_link2", "email_verification", "turnstile_check", "turnstile_site_key", "github_oauth",
    "github_client_id", "linuxdo_oauth", "linuxdo_client_id", "wechat_login", "wechat_qrcode", "telegram_oauth",
    "telegram_bot_name", "version", "start_time", "server_address", "top_up_link", "min_topup", "payment_enabled",
    "enable_online_topup", "price",
}


@both_databases
async def test_status_has_every_field(anon: ApiClient) -> None:
    body = await anon.get("/api/status")
    assert body["success"] is True and body["message"] == ""
    assert STATUS_FIELDS <= set(body["data"])
    assert body["data"]["system_name"] == "AI Gateway"
    assert body["data"]["quota_per_unit"] == 500000
    assert body["data"]["payment_enabled"] is False
    assert body["data"]["self_deletion"] is False  # the console offers "delete my account" only when on
    assert anon.last_response.headers["X-Oneapi-Request-Id"]


async def test_notice_about_home(root: ApiClient, anon: ApiClient) -> None:
    await root.put("/api/option/", {"key": "Notice", "value": "**hello**"})
    await root.put("/api/option/", {"key": "About", "value": "about us"})
    assert (await anon.get("/api/notice"))["data"] == "**hello**"
    assert (await anon.get("/api/about"))["data"] == "about us"
    assert (await anon.get("/api/home_page_content"))["data"] == ""


@both_databases
async def test_root_login_flags_default_password(anon: ApiClient) -> None:
    data = await anon.login("root", "123456")
    assert data["role"] == 100 and data["default_password"] is True
    assert "password" not in data


async def test_login_refusals(anon: ApiClient) -> None:
    body = await anon.post("/api/user/login", {"username": "root", "password": "wrong"})
    assert body == {"success": False, "message": "Wrong username or password, or the user has been banned",
                    "data": None}
    body = await anon.post("/api/user/login", {"username": "", "password": ""})
    assert body["message"] == "Please enter username and password"
    body = await anon.post("/api/user/login", {"username": "root", "password": "x"},
                           headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert body["message"] == "用户名或密码错误，或用户已被封禁"


async def test_password_login_can_be_turned_off(root: ApiClient, anon: ApiClient) -> None:
    await make_user("alice")
    await root.put("/api/option/", {"key": "PasswordLoginEnabled", "value": "false"})
    body = await anon.post("/api/user/login", {"username": "alice", "password": "password123"})
    assert body["success"] is False and "password login" in body["message"]


async def test_logout_ends_the_session(root: ApiClient) -> None:
    assert (await root.get("/api/option/"))["success"]
    await root.get("/api/user/logout")
    body = await root.get("/api/option/", expect_status=401)
    assert body["success"] is False


async def test_user_header_must_match_session(root: ApiClient) -> None:
    body = await root.get("/api/option/", headers={"New-Api-User": "999"}, expect_status=401)
    assert "refresh the page" in body["message"]


@pytest.mark.parametrize(("role", "status"), [(None, 401), (Role.USER, 200), (Role.ADMIN, 200)])
async def test_options_are_root_only(client, role: Role | None, status: int) -> None:
    api = ApiClient(client)
    if role is not None:
        await make_user("someone", role=role)
        await api.login("someone", "password123")
    body = await api.get("/api/option/", expect_status=status)
    assert body["success"] is False
    if role is not None:
        assert body["message"] == "You are not allowed to do this"


@both_databases
async def test_option_list_hides_secrets(root: ApiClient) -> None:
    await root.put("/api/option/", {"key": "ServerAddress", "value": "https://gw.example.com/"})
    body = await root.put("/api/option/", {"key": "StripeApiSecret", "value": "sk_test_123/"})
    assert body["success"], body
    options = {o["key"]: o["value"] for o in (await root.get("/api/option/"))["data"]}
    assert options["ServerAddress"] == "https://gw.example.com"  # trailing slash stripped
    for secret in ("StripeApiSecret", "StripeWebhookSecret", "GitHubClientSecret", "SMTPToken",
                   "TurnstileSecretKey", "TelegramBotToken", "WeChatServerToken", "LinuxDoClientSecret"):
        assert secret not in options
    assert await Option.get(key="StripeApiSecret").values_list("value", flat=True) == "sk_test_123"


async def test_access_token_auth(client) -> None:
    from api.services.passwords import sha256_hex

    user = await make_user("scripted", role=Role.ROOT, access_token=sha256_hex("tok-abc"))
    api = ApiClient(client)
    body = await api.get("/api/option/", headers={"Authorization": "Bearer tok-abc", "New-Api-User": str(user.id)})
    assert body["success"] is True
    body = await api.get("/api/option/", headers={"Authorization": "tok-wrong", "New-Api-User": str(user.id)},
                         expect_status=401)
    assert body["success"] is False


async def test_unknown_api_path_is_an_envelope_404(anon: ApiClient) -> None:
    body = await anon.get("/api/no/such/thing", expect_status=404)
    assert body["success"] is False


async def test_banned_user_session_stops_working(client) -> None:
    await make_user("bob", role=Role.ADMIN)
    api = ApiClient(client)
    await api.login("bob", "password123")
    await User.filter(username="bob").update(status=2)
    body = await api.get("/api/status")  # public still fine
    assert body["success"]
    body = await api.get("/api/option/", expect_status=401)
    assert body["message"] == "This user has been banned"


async def test_option_change_leaves_manage_log_through_worker_queue(root: ApiClient) -> None:
    """The API enqueues; the worker test proves consumption. Here: the message is on the queue."""
    await root.put("/api/option/", {"key": "SystemName", "value": "Gateway X"})
    assert (await root.get("/api/status"))["data"]["system_name"] == "Gateway X"
    assert await Log.all().count() == 0  # written by the worker, not by the request
