"""The importer carries new-api's custom OAuth providers and the users' bindings to them: a user bound
in new-api logs in here through the imported provider (a strict local OpenID Connect provider); the
kinds not served here are skipped with the reason, a provider with an access policy comes disabled,
and a second run changes nothing."""
from __future__ import annotations

import asyncio
from typing import Any

from models import CustomOAuthProvider, UserOAuthBinding
from tests.api.test_accounts_oidc import CALLBACK, SERVER, at_provider
from tests.fakes.browsers import Browsers, set_options
from tests.fakes.oidc_provider import CLIENT_ID, CLIENT_SECRET, start_oidc
from tests.models.test_importer import NEW_API, build_source, drop_source, importer, rows_for

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
