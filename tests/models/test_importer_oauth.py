"""The importer carries new-api's custom OAuth providers and the users' bindings to them: a user bound
in new-api logs in here through the imported provider (a strict local OpenID Connect provider); the
kinds not served here are skipped with the reason, a provider with an access policy comes disabled,
and a second run changes nothing. So does new-api's built-in OpenID Connect login: carried as the
provider `oidc`, verified as OpenID Connect when its discovery document is reachable at import time
(else carried disabled), with each user's oidc_id as a binding."""
from __future__ import annotations

import asyncio
import socket
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import orjson

from models import CustomOAuthProvider, User, UserOAuthBinding
from tests.api.test_accounts_oidc import CALLBACK, SERVER, at_provider
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.oidc_provider import CLIENT_ID, CLIENT_SECRET, start_oidc
from tests.helpers import ApiClient
from tests.models.test_importer import NEW_API, build_source, drop_source, go_hash, importer, rows_for

# new-api's model/custom_oauth_provider.go and model/user_oauth_binding.go (the columns used here).
NEW_API_OAUTH = {
    **NEW_API,
    "custom_oauth_providers": {
        "id": "pk", "name": "text", "slug": "text", "icon": "text", "kind": "text", "enabled": "bool",
        "client_id": "text", "client_secret": "text", "authorization_endpoint": "text", "token_endpoint": "text",
        "user_info_endpoint": "text", "scopes": "text", "issuer": "text", "audience": "text", "jwks_url": "text",
        "user_id_field": "text", "username_field": "text", "display_name_field": "text", "email_field": "text",
        "well_known": "text", "auth_style": "int", "access_policy": "text", "access_denied_message": "text",
        "auto_register": "bool", "created_at": "stamp", "updated_at": "stamp"},
    "user_oauth_bindings": {"id": "pk", "user_id": "int", "provider_id": "int", "provider_user_id": "text",
                            "created_at": "stamp"},
}


def providers_rows(idp_url: str) -> list[dict[str, Any]]:
    corp = {"id": 3, "name": "Corp SSO", "slug": "corp", "icon": "", "kind": "oauth_code", "enabled": True,
            "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "authorization_endpoint": f"{idp_url}/authorize",
            "token_endpoint": f"{idp_url}/token", "user_info_endpoint": f"{idp_url}/userinfo",
            "scopes": "openid profile email", "issuer": idp_url, "audience": "", "jwks_url": f"{idp_url}/jwks",
            "user_id_field": "sub", "username_field": "preferred_username", "display_name_field": "name",
            "email_field": "email", "well_known": "", "auth_style": 0, "access_policy": "",
            "access_denied_message": "", "auto_register": False, "created_at": "2025-11-01 10:00:00",
            "updated_at": "2025-11-01 10:00:00"}
    return [corp, {**corp, "id": 4, "slug": "jwt", "kind": "jwt_direct"},
            {**corp, "id": 5, "slug": "staff", "access_policy": '{"logic":"and","conditions":[]}'}]


async def test_providers_and_bindings_carried_and_used(client, settings, tmp_path, aiohttp_server) -> None:
    idp = await start_oidc(aiohttp_server, {CALLBACK})
    idp.user = {**idp.user, "sub": "alice-at-corp"}
    rows = rows_for(NEW_API_OAUTH, "http://unused.invalid", one_api=False)
    rows["custom_oauth_providers"] = providers_rows(idp.url)
    rows["user_oauth_bindings"] = [
        {"id": 1, "user_id": 7, "provider_id": 3, "provider_user_id": "alice-at-corp", "created_at": None},
        {"id": 2, "user_id": 7, "provider_id": 4, "provider_user_id": "alice-jwt", "created_at": None}]
    url = await build_source("sqlite", NEW_API_OAUTH, rows, tmp_path)
    try:
        first = await asyncio.to_thread(importer, settings, url)
        assert first.returncode == 0, first.stderr + first.stdout
        second = await asyncio.to_thread(importer, settings, url)
        assert second.returncode == 0, second.stderr
    finally:
        await drop_source("sqlite")
    out = first.stdout
    assert "id 4: provider kind 'jwt_direct' is not served here" in out, out
    assert "id 2: its provider 4 was not carried" in out
    assert "custom OAuth provider 5 (staff): carried disabled, its access policy is not enforced here" in out
    assert "custom_oauth_providers: 2 were created, 0 updated, 0 unchanged, 1 skipped" in out
    assert "custom_oauth_providers: 0 were created, 0 updated, 2 unchanged, 1 skipped" in second.stdout
    assert "user_oauth_bindings: 0 were created, 0 updated, 1 unchanged, 1 skipped" in second.stdout
    carried = {p.id: p for p in await CustomOAuthProvider.all()}
    assert sorted(carried) == [3, 5] and carried[3].enabled and not carried[5].enabled
    assert carried[3].client_secret == CLIENT_SECRET
    assert [(b.id, b.user_id, b.provider_id) for b in await UserOAuthBinding.all()] == [(1, 7, 3)]

    # Alice, bound in new-api, logs in here through the imported provider.
    await set_options(client, ServerAddress=SERVER, MediaFetchPrivateEnabled=True)
    browsers = Browsers(client)
    try:
        api = browsers.new()
        start = await api.get("/api/oauth/corp/authorize")
        back = await at_provider(start["data"]["url"])
        body = await api.get(f"/api/oauth/corp?code={back['code']}&state={back['state']}")
        assert body["success"] and body["data"]["id"] == 7, body
    finally:
        await browsers.close()


# new-api's built-in OpenID Connect login: its `oidc.*` options (setting/system_setting/oidc.go) and
# users.oidc_id; it calls back to {ServerAddress}/oauth/oidc, which the carried provider keeps.
OIDC_CALLBACK = f"{SERVER}/oauth/oidc"


def builtin_oidc_rows(well_known: str, idp_url: str) -> dict[str, list[dict[str, Any]]]:
    rows = rows_for(NEW_API_OAUTH, "http://unused.invalid", one_api=False)
    rows["custom_oauth_providers"] = providers_rows(idp_url)
    rows["user_oauth_bindings"] = [
        {"id": 1, "user_id": 7, "provider_id": 3, "provider_user_id": "alice-at-corp", "created_at": None},
        {"id": 2, "user_id": 7, "provider_id": 4, "provider_user_id": "alice-jwt", "created_at": None}]
    rows["options"] += [{"key": f"oidc.{k}", "value": v} for k, v in (
        ("enabled", "true"), ("display_name", "Acme SSO"), ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET), ("well_known", well_known),
        ("authorization_endpoint", f"{idp_url}/authorize"), ("token_endpoint", f"{idp_url}/token"),
        ("user_info_endpoint", f"{idp_url}/userinfo"), ("role_claim_enabled", "false"))]
    next(u for u in rows["users"] if u["id"] == 7)["oidc_id"] = "alice-oidc-sub"
    rows["users"].append({"id": 10, "username": "bob", "password": go_hash("bob-old-pass"), "role": 1,
                          "status": 1, "quota": 0, "group": "default", "aff_code": "BOBB", "oidc_id": "bob-oidc-sub"})
    return rows


async def at_idp(url: str) -> dict[str, str]:
    async with aiohttp.ClientSession() as browser, browser.get(url, allow_redirects=False) as resp:
        assert resp.status == 302, (resp.status, await resp.text())
        location = resp.headers["Location"]
    assert location.startswith(OIDC_CALLBACK + "?"), location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def test_builtin_oidc_carried_as_provider_oidc_and_used(client, settings, tmp_path, aiohttp_server) -> None:
    idp = await start_oidc(aiohttp_server, {OIDC_CALLBACK, CALLBACK})
    # The identity provider is on this machine: discovery at import time needs private addresses.
    await set_options(client, ServerAddress=SERVER, MediaFetchPrivateEnabled=True)
    url = await build_source("sqlite", NEW_API_OAUTH,
                             builtin_oidc_rows(f"{idp.url}/.well-known/openid-configuration", idp.url), tmp_path)
    try:
        first = await asyncio.to_thread(importer, settings, url)
        assert first.returncode == 0, first.stderr + first.stdout
        second = await asyncio.to_thread(importer, settings, url)
        assert second.returncode == 0, second.stderr
    finally:
        await drop_source("sqlite")
    out = first.stdout
    assert "custom_oauth_providers: 3 were created, 0 updated, 0 unchanged, 1 skipped" in out, out
    assert "user_oauth_bindings: 3 were created, 0 updated, 0 unchanged, 1 skipped" in out
    assert "oidc.role_claim_enabled: no such option here" in out and "oidc.client_id" not in out
    assert "users.oidc_id" not in out and CLIENT_SECRET not in out + first.stderr
    assert "custom_oauth_providers: 0 were created, 0 updated, 3 unchanged, 1 skipped" in second.stdout
    assert "user_oauth_bindings: 0 were created, 0 updated, 3 unchanged, 1 skipped" in second.stdout
    assert idp.calls_to("discovery") == [{}]  # the second run found the provider here and asked nothing

    oidc = await CustomOAuthProvider.get(slug="oidc")
    assert oidc.id == 6  # past the source's custom providers (3, 4, 5)
    assert (oidc.name, oidc.enabled, oidc.client_id, oidc.client_secret, oidc.scopes, oidc.auth_style) == (
        "Acme SSO", True, CLIENT_ID, CLIENT_SECRET, "openid profile email", 1)
    assert (oidc.authorization_endpoint, oidc.token_endpoint, oidc.user_info_endpoint) == (
        f"{idp.url}/authorize", f"{idp.url}/token", f"{idp.url}/userinfo")
    assert (oidc.issuer, oidc.jwks_url, oidc.is_oidc) == (idp.url, f"{idp.url}/jwks", True)
    assert (oidc.user_id_field, oidc.username_field, oidc.display_name_field, oidc.email_field) == (
        "sub", "preferred_username", "name", "email")
    bound = [(b.user_id, b.provider_id, b.provider_user_id) for b in await UserOAuthBinding.all().order_by("id")]
    assert bound == [(7, 3, "alice-at-corp"), (7, 6, "alice-oidc-sub"), (10, 6, "bob-oidc-sub")]

    # Root (imported, old password) sees the provider, never its secret.
    root = ApiClient(client)
    await root.login("root", "old-root-pass")
    listed = await root.get("/api/custom-oauth-provider/")
    assert listed["success"] and CLIENT_SECRET not in orjson.dumps(listed).decode(), listed
    row = next(p for p in listed["data"] if p["slug"] == "oidc")
    assert row["client_secret_set"] is True and "client_secret" not in row

    # Bob, bound in new-api's built-in login, logs in here through it: the ID token verified, bob's account.
    idp.user = {"sub": "bob-oidc-sub", "preferred_username": "bob", "name": "Bob", "email": "bob@idp.example"}
    browsers = Browsers(client)
    try:
        api = browsers.new()
        start = await api.get("/api/oauth/oidc/authorize")
        assert start["success"], start
        back = await at_idp(start["data"]["url"])
        body = await api.get(f"/api/oauth/oidc?code={back['code']}&state={back['state']}")
        assert body["success"] and body["data"]["id"] == 10, body
    finally:
        await browsers.close()
    assert idp.calls_to("jwks") and not await User.filter(username__startswith="oidc_").exists()


async def test_builtin_oidc_without_discovery_carried_disabled(client, settings, tmp_path, aiohttp_server) -> None:
    idp = await start_oidc(aiohttp_server, {OIDC_CALLBACK})
    await set_options(client, ServerAddress=SERVER, MediaFetchPrivateEnabled=True)
    with socket.socket() as s:  # a port nothing listens on: the discovery document cannot be fetched
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/.well-known/openid-configuration"
    url = await build_source("sqlite", NEW_API_OAUTH, builtin_oidc_rows(closed, idp.url), tmp_path)
    try:
        run = await asyncio.to_thread(importer, settings, url)
        assert run.returncode == 0, run.stderr + run.stdout
    finally:
        await drop_source("sqlite")
    assert ("built-in OIDC login: carried as the custom provider 'oidc', disabled: "
            f"{closed} could not be fetched") in run.stdout, run.stdout
    oidc = await CustomOAuthProvider.get(slug="oidc")
    assert (oidc.enabled, oidc.well_known, oidc.issuer, oidc.jwks_url) == (False, closed, "", "")
    assert (oidc.client_secret, oidc.token_endpoint) == (CLIENT_SECRET, f"{idp.url}/token")
    assert await UserOAuthBinding.filter(provider_id=oidc.id).count() == 2
    api = ApiClient(client)
    refused = await api.get("/api/oauth/oidc/authorize")
    assert not refused["success"] and not idp.calls_to("authorize"), refused
