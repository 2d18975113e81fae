"""Root's custom OAuth 2 / OpenID Connect providers, on new-api's routes (`/api/custom-oauth-provider/`):
list, read, create, update, delete, and `POST /discovery` that fetches an issuer's
`/.well-known/openid-configuration` for the console to fill the endpoints from. Every route is root's;
no answer holds the client secret (`client_secret_set` says whether one is stored)."""
from __future__ import annotations

from aiohttp import web

from api.console import oidc_client
from api.console.auth import root_required
from api.response import ok, read_json
from api.services.accounts import oidc_providers as providers
from api.services.audit import snapshot
from api.web import audit
from models import CustomOAuthProvider

SECRETS = ("client_secret",)  # masked in the audit entries whatever the masking by name finds


@root_required
async def list_providers(request: web.Request) -> web.Response:
    return ok([providers.provider_data(p) for p in await CustomOAuthProvider.all().order_by("id")])


@root_required
async def get_provider(request: web.Request) -> web.Response:
    return ok(providers.provider_data(await providers.provider_by_id(request.match_info["id"])))


@root_required
async def create_provider(request: web.Request) -> web.Response:
    provider = await providers.create_provider(await read_json(request))
    await audit.record(request, "oauth_provider.create", "oauth_provider", provider.id, None, provider,
                       secret_fields=SECRETS)
    return ok(providers.provider_data(provider))


@root_required
async def update_provider(request: web.Request) -> web.Response:
    body = await read_json(request)
    provider = await providers.provider_by_id(request.match_info["id"])
    before = snapshot(provider)
    updated = await providers.update_provider(provider, body)
    await audit.record(request, "oauth_provider.update", "oauth_provider", updated.id, before, updated,
                       secret_fields=SECRETS)
    return ok(providers.provider_data(updated))


@root_required
async def delete_provider(request: web.Request) -> web.Response:
    provider = await providers.provider_by_id(request.match_info["id"])
    before = snapshot(provider)
    await providers.delete_provider(provider)
    await audit.record(request, "oauth_provider.delete", "oauth_provider", provider.id, before, None,
                       secret_fields=SECRETS)
    return ok()


@root_required
async def fetch_discovery(request: web.Request) -> web.Response:
    url, issuer = providers.discovery_target(await read_json(request))
    document = await oidc_client.discovery(request, url, issuer)
    return ok({"well_known_url": url, "discovery": document})
