"""Custom OAuth 2 / OpenID Connect providers against a strict local provider of the test's own
(tests/fakes/oidc_provider.py): root's administration and discovery, login of a new and of a bound
user, binding and unbinding, and every forged or foreign answer refused with nothing bound and no
session."""
from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from models import CustomOAuthProvider, User, UserOAuthBinding
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.oidc_provider import CLIENT_ID, CLIENT_SECRET, FakeOidc, new_key, start_oidc
from tests.helpers import ApiClient, both_databases

SERVER = "https://gw.example.com"
CALLBACK = f"{SERVER}/oauth/corp"


@pytest.fixture
async def idp(aiohttp_server) -> FakeOidc:
    return await start_oidc(aiohttp_server, {CALLBACK})


@pytest.fixture
async def browsers(client):
    opened = Browsers(client)
    yield opened
    await opened.close()


def oidc_fields(idp: FakeOidc, **extra: Any) -> dict[str, Any]:
    return {"name": "Corp SSO", "slug": "corp", "enabled": True, "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET, "authorization_endpoint": f"{idp.url}/authorize",
            "token_endpoint": f"{idp.url}/token", "user_info_endpoint": "", "scopes": "openid profile email",
            "issuer": idp.url, "jwks_url": f"{idp.url}/jwks", **extra}


@pytest.fixture
async def corp(client, root: ApiClient, idp: FakeOidc) -> dict[str, Any]:
    await set_options(client, ServerAddress=SERVER, MediaFetchPrivateEnabled=True)  # the provider is local
    body = await root.post("/api/custom-oauth-provider/", oidc_fields(idp))
    assert body["success"], body
    return body["data"]


async def at_provider(url: str) -> dict[str, str]:
    """What a browser sent to the authorization URL brings back to the callback page."""
    async with aiohttp.ClientSession() as browser, browser.get(url, allow_redirects=False) as resp:
        assert resp.status == 302, (resp.status, await resp.text())
        location = resp.headers["Location"]
    assert location.startswith(CALLBACK + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def oidc_round(api: ApiClient, slug: str = "corp", **override: str) -> dict:
    start = await api.get(f"/api/oauth/{slug}/authorize")
    assert start["success"], start
    back = {**await at_provider(start["data"]["url"]), **override}
    return await api.get(f"/api/oauth/{slug}?code={back['code']}&state={back['state']}")


async def has_session(api: ApiClient) -> bool:
    """Whether the browser's cookie is a logged-in session, of any user."""
    for user in await User.all():
        resp = await api.client.get("/api/user/self", headers={"New-Api-User": str(user.id)})
        if resp.status == 200:
            return True
    return False


# -- root's administration ---------------------------------------------------------------------------
async def test_root_manages_providers_and_the_secret_never_leaves(client, root: ApiClient, browsers: Browsers,
                                                                  idp: FakeOidc) -> None:
    _, alice = await browsers.user("alice")
    for method, path in (("GET", "/api/custom-oauth-provider/"), ("POST", "/api/custom-oauth-provider/"),
                         ("PUT", "/api/custom-oauth-provider/1"), ("DELETE", "/api/custom-oauth-provider/1"),
                         ("POST", "/api/custom-oauth-provider/discovery")):
        body = await alice.request(method, path, json={}, expect_status=None)
        assert body == {"success": False, "message": "You are not allowed to do this", "data": None}, (method, path)
    created = await root.post("/api/custom-oauth-provider/", oidc_fields(idp, enabled=False))
    assert created["success"], created
    data = created["data"]
    assert "client_secret" not in data and data["client_secret_set"] is True
    assert (data["slug"], data["kind"], data["user_id_field"], data["auth_style"]) == ("corp", "oauth_code", "sub", 0)
    listed = await root.get("/api/custom-oauth-provider/")
    assert CLIENT_SECRET not in str(listed) and [p["id"] for p in listed["data"]] == [data["id"]]
    # An update without a secret keeps the stored one; the status lists only enabled providers.
    status = await (await client.get("/api/status")).json()
    assert status["data"]["custom_oauth_providers"] == []
    updated = await root.put(f"/api/custom-oauth-provider/{data['id']}", {"enabled": True, "client_secret": ""})
    assert updated["data"]["enabled"] is True
    assert (await CustomOAuthProvider.get(id=data["id"])).client_secret == CLIENT_SECRET
    status = await (await client.get("/api/status")).json()
    assert [(p["slug"], p["name"]) for p in status["data"]["custom_oauth_providers"]] == [("corp", "Corp SSO")]
    assert CLIENT_SECRET not in str(status)

    refusals = [
        (oidc_fields(idp), "The slug is already in use"),
        (oidc_fields(idp, slug="github"), "The slug github belongs to a built-in login"),
        (oidc_fields(idp, slug="Bad Slug"), "The slug may contain only lowercase letters, digits and hyphens"),
        (oidc_fields(idp, slug="x", token_endpoint="ftp://idp/token"), "token_endpoint must be an http or https URL"),
        (oidc_fields(idp, slug="x", jwks_url=""), "An OpenID Connect provider (scope openid) needs"),
        (oidc_fields(idp, slug="x", scopes="profile"), "A provider without the openid scope needs"),
        (oidc_fields(idp, slug="x", access_policy='{"logic":"and"}'), "access_policy = "),
        (oidc_fields(idp, slug="x", kind="trusted_header"), "kind = trusted_header is not supported"),
        (oidc_fields(idp, slug="x", client_id=""), "client_id is required"),
    ]
    for fields, message in refusals:
        body = await root.post("/api/custom-oauth-provider/", fields)
        assert body["success"] is False and body["message"].startswith(message), (fields, body)
    zh = await root.post("/api/custom-oauth-provider/", oidc_fields(idp), headers={"Accept-Language": "zh-CN"})
    assert zh["message"] == "该 Slug 已被使用"
    assert await CustomOAuthProvider.all().count() == 1
    body = await root.put(f"/api/custom-oauth-provider/{data['id']}", {"token_endpoint": "nope"})
    assert body["success"] is False
    assert (await CustomOAuthProvider.get(id=data["id"])).token_endpoint == f"{idp.url}/token"
    assert (await root.get("/api/custom-oauth-provider/999"))["message"] == "OAuth provider not found"
    assert (await root.delete(f"/api/custom-oauth-provider/{data['id']}"))["success"]
    assert await CustomOAuthProvider.all().count() == 0


async def test_discovery_under_the_url_policy(client, root: ApiClient, idp: FakeOidc) -> None:
    body = await root.post("/api/custom-oauth-provider/discovery", {"issuer_url": idp.url})
    assert body["success"] is False and "is refused: only http(s) to a public address" in body["message"]
    assert idp.calls_to("discovery") == []  # the private address was refused before any request
    await set_options(client, MediaFetchPrivateEnabled=True)
    body = await root.post("/api/custom-oauth-provider/discovery", {"issuer_url": idp.url + "/"})
    assert body["success"], body
    assert body["data"]["well_known_url"] == f"{idp.url}/.well-known/openid-configuration"
    assert body["data"]["discovery"]["jwks_uri"] == f"{idp.url}/jwks"
    body = await root.post("/api/custom-oauth-provider/discovery", {"issuer_url": "http://127.0.0.1:1"})
    assert body["success"] is False and body["message"].startswith("Fetching the discovery document failed")
    other = idp.url.replace("127.0.0.1", "localhost")
    body = await root.post("/api/custom-oauth-provider/discovery",
                           {"well_known_url": f"{idp.url}/.well-known/openid-configuration", "issuer_url": other})
    assert body["success"], body  # a discovery URL given: the issuer is read from the document
    body = await root.post("/api/custom-oauth-provider/discovery", {"issuer_url": other})
    assert body["success"] is False and "names the issuer" in body["message"]
    body = await root.post("/api/custom-oauth-provider/discovery", {})
    assert body["message"] == "Enter the discovery URL or the issuer URL first"


# -- login ---------------------------------------------------------------------------------------------
@both_databases
async def test_new_user_then_bound_user_log_in(client, browsers: Browsers, corp: dict, idp: FakeOidc) -> None:
    api = browsers.new()
    start = await api.get("/api/oauth/corp/authorize")
    query = parse_qs(urlsplit(start["data"]["url"]).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["redirect_uri"] == [CALLBACK] and query["scope"] == ["openid profile email"] and query["nonce"]
    assert "code_verifier" not in start["data"]["url"]
    back = await at_provider(start["data"]["url"])
    body = await api.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}")
    assert body["success"], body
    user = await User.get(id=body["data"]["id"])
    assert user.username.startswith("corp_") and (user.display_name, user.email, user.password) == (
        "Ada Lovelace", "ada@idp.example", "")
    assert await UserOAuthBinding.filter(user_id=user.id, provider_id=corp["id"], provider_user_id="user-1").exists()
    token_call = idp.calls_to("token")[0]
    assert token_call["code_verifier"] and token_call["client_secret"] == CLIENT_SECRET
    api.user_id = user.id
    assert (await api.get("/api/user/self"))["data"]["id"] == user.id  # the session works

    again = browsers.new()
    body = await oidc_round(again)
    assert body["success"] and body["data"]["id"] == user.id
    assert await User.all().count() == 2  # root and the new user, no second account
    # A code is good once: the provider refuses it again and nothing happens.
    replay = await again.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}")
    assert replay["success"] is False


async def test_registration_off_refuses_new_users_only(client, browsers: Browsers, corp: dict,
                                                       idp: FakeOidc) -> None:
    await set_options(client, RegisterEnabled=False)
    api = browsers.new()
    body = await oidc_round(api)
    assert body["message"] == "The administrator has turned off new registrations"
    assert await UserOAuthBinding.all().count() == 0 and await User.all().count() == 1
    assert not await has_session(api)


@pytest.mark.parametrize(("tamper", "message"), [
    ({"sign_with": new_key()}, "The ID token from Corp SSO is not signed by its keys"),
    ({"exp": 1_000_000_000, "iat": 999_999_000}, "The ID token from Corp SSO has expired or is not valid yet"),
    ({"nonce": "another-login"}, "The ID token from Corp SSO does not belong to this login"),
    ({"aud": "another-client"}, "The ID token from Corp SSO is meant for another client"),
    ({"aud": [CLIENT_ID, "another-client"]}, "The ID token from Corp SSO is meant for another client"),
    ({"iss": "https://evil.example"}, "The ID token from Corp SSO was issued by another issuer"),
    ({"iat": 4_000_000_000}, "The ID token from Corp SSO has expired or is not valid yet"),
])
async def test_forged_or_foreign_id_tokens_refused(browsers: Browsers, corp: dict, idp: FakeOidc,
                                                  tamper: dict, message: str) -> None:
    idp.tamper = tamper
    api = browsers.new()
    body = await oidc_round(api)
    assert (body["success"], body["message"]) == (False, message)
    assert not await has_session(api)
    alice, bound = await browsers.user("alice")  # a binding with the same token: refused, nothing bound
    body = await oidc_round(bound)
    assert (body["success"], body["message"]) == (False, message)
    assert await UserOAuthBinding.all().count() == 0 and await User.all().count() == 2  # root, alice


async def test_wrong_or_reused_state_refused_before_the_provider(browsers: Browsers, corp: dict,
                                                                 idp: FakeOidc) -> None:
    api = browsers.new()
    body = await oidc_round(api, state="forged-state")
    assert body["message"] == "The state parameter is wrong or has expired, start the login again"
    assert idp.calls_to("token") == []
    # Another browser's state does not fit this one's session.
    thief, victim = browsers.new(), browsers.new()
    start = await victim.get("/api/oauth/corp/authorize")
    back = await at_provider(start["data"]["url"])
    body = await thief.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}")
    assert body["message"].startswith("The state parameter is wrong")
    assert idp.calls_to("token") == [] and not await has_session(thief)
    assert (await victim.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}"))["success"]
    body = await victim.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}")  # used once
    assert body["message"].startswith("The state parameter is wrong")
    assert await UserOAuthBinding.all().count() == 1


async def test_rotated_keys_are_fetched_again(browsers: Browsers, corp: dict, idp: FakeOidc) -> None:
    assert (await oidc_round(browsers.new()))["success"]
    assert len(idp.calls_to("jwks")) == 1
    assert (await oidc_round(browsers.new()))["success"]
    assert len(idp.calls_to("jwks")) == 1  # cached
    idp.rotate()
    assert (await oidc_round(browsers.new()))["success"]
    assert len(idp.calls_to("jwks")) == 2
    idp.kid = "made-up"  # an unknown key id again within the minute: no new fetch, refused
    body = await oidc_round(browsers.new())
    assert body["message"] == "The ID token from Corp SSO is not signed by its keys"
    assert len(idp.calls_to("jwks")) == 2


# -- bindings ----------------------------------------------------------------------------------------
async def test_bind_list_and_unbind(client, browsers: Browsers, corp: dict, idp: FakeOidc) -> None:
    alice, api = await browsers.user("alice")
    body = await oidc_round(api)
    assert (body["success"], body["message"]) == (True, "bind")
    listed = await api.get("/api/user/oauth/bindings")
    assert listed["data"] == [{"provider_id": corp["id"], "provider_name": "Corp SSO", "provider_slug": "corp",
                               "provider_icon": "", "provider_user_id": "user-1",
                               "created_at": listed["data"][0]["created_at"]}]
    # Logging in with the provider now opens alice's account.
    assert (await oidc_round(browsers.new()))["data"]["id"] == alice.id
    # Another account cannot take the same provider identity.
    bob, bob_api = await browsers.user("bob")
    body = await oidc_round(bob_api)
    assert body["message"] == "This Corp SSO account is already bound to another user"
    assert await UserOAuthBinding.filter(user_id=bob.id).count() == 0
    # The provider cannot be deleted while alice is bound to it.
    root_api = await browsers.login("root", "123456")
    body = await root_api.delete(f"/api/custom-oauth-provider/{corp['id']}")
    assert body["message"].startswith("Users are still bound to this OAuth provider")
    assert (await api.delete(f"/api/user/oauth/bindings/{corp['id']}"))["success"]
    assert (await api.get("/api/user/oauth/bindings"))["data"] == []
    body = await api.delete(f"/api/user/oauth/bindings/{corp['id']}")
    assert body["message"] == "This account is not bound to Corp SSO"


async def test_the_last_way_to_log_in_cannot_be_unbound(client, browsers: Browsers, corp: dict,
                                                        idp: FakeOidc) -> None:
    api = browsers.new()
    body = await oidc_round(api)
    user_id = api.user_id = body["data"]["id"]
    body = await api.delete(f"/api/user/oauth/bindings/{corp['id']}")
    assert body["message"].startswith("Corp SSO is this account's only way to log in")
    assert await UserOAuthBinding.filter(user_id=user_id).count() == 1
    # An admin may remove it (a compromised identity), for a user below them.
    admin_api = await browsers.login("root", "123456")
    assert (await admin_api.get(f"/api/user/{user_id}/oauth/bindings"))["data"][0]["provider_user_id"] == "user-1"
    assert (await admin_api.delete(f"/api/user/{user_id}/oauth/bindings/{corp['id']}"))["success"]
    assert await UserOAuthBinding.filter(user_id=user_id).count() == 0


async def test_plain_oauth2_provider_reads_userinfo_through_the_mappings(client, root: ApiClient,
                                                                         browsers: Browsers, idp: FakeOidc) -> None:
    await set_options(client, ServerAddress=SERVER, MediaFetchPrivateEnabled=True)
    idp.user = {"sub": "ignored", "data": {"user": {"id": 4242, "login": "grace", "mail": "grace@idp.example",
                                                    "nick": "Grace H"}}}
    body = await root.post("/api/custom-oauth-provider/", oidc_fields(
        idp, scopes="profile", issuer="", jwks_url="", user_info_endpoint=f"{idp.url}/userinfo", auth_style=2,
        user_id_field="data.user.id", username_field="data.user.login", display_name_field="data.user.nick",
        email_field="data.user.mail"))
    assert body["success"], body
    api = browsers.new()
    body = await oidc_round(api)
    assert body["success"], body
    user = await User.get(id=body["data"]["id"])
    assert (user.display_name, user.email) == ("Grace H", "grace@idp.example")
    assert await UserOAuthBinding.filter(user_id=user.id, provider_user_id="4242").exists()
    call = idp.calls_to("token")[0]
    assert call["authorization"].startswith("Basic ") and "client_secret" not in call
    assert "nonce" not in idp.calls_to("authorize")[0]


async def test_an_expired_flow_is_refused() -> None:
    """A flow is good for FLOW_TTL seconds: one whose time has passed is refused like a wrong state."""
    from api.errors import ApiError
    from api.services.accounts import oidc

    provider = CustomOAuthProvider(id=7, slug="corp", scopes="openid")
    flow = oidc.new_flow(provider, 0, "")
    assert oidc.check_flow(flow, provider, flow.state) is flow
    flow.expires = 1_000_000_000
    with pytest.raises(ApiError) as refused:
        oidc.check_flow(flow, provider, flow.state)
    assert refused.value.message == "oauth_state_invalid"
