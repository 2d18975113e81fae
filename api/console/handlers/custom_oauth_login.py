"""Logging in with, and binding, a custom OAuth 2 / OpenID Connect provider; the user's bindings.

- `GET /api/oauth/{slug}/authorize[?aff=]`: starts a flow (api/services/accounts/oidc.py) kept in the
  browser's session and answers the provider's authorization URL (state, PKCE S256 challenge, nonce)
  for the console to go to. A logged-in caller starts a binding, anyone else a login.
- `GET /api/oauth/{slug}?code&state`: the console's callback page (/oauth/{slug}) sends what the
  provider gave back; the flow is taken (once) and must match; the code is exchanged, the ID token
  verified (OpenID Connect) or the userinfo read (OAuth 2), then the user is logged in (a session
  through the common session starter) or the binding is made (message "bind", as new-api's).
- `GET /api/user/oauth/bindings`, `DELETE /api/user/oauth/bindings/{provider_id}`: the caller's own;
  `GET /api/user/{id}/oauth/bindings`, `DELETE /api/user/{id}/oauth/bindings/{provider_id}`: an admin's,
  for users below them (root: anyone's), as new-api's.
"""
from __future__ import annotations

from aiohttp import web

from api.console import oidc_client
from api.console.auth import admin_required, critical, current_user, services, the_user, user_required
from api.console.handlers.users import start_session
from api.errors import ApiError, Forbidden
from api.response import ok
from api.services.accounts import oidc
from api.services.accounts import oidc_providers as providers
from api.web.sessions import sessions_of
from models import CustomOAuthProvider, User
from models.enums import Role

FLOW_FIELD = "custom_oauth_flow"
BIND = "bind"


async def _enabled(slug: str) -> CustomOAuthProvider:
    provider = await CustomOAuthProvider.filter(slug=slug).first()
    if provider is None:
        raise ApiError("custom_oauth_not_found")
    if not provider.enabled:
        raise ApiError("custom_oauth_disabled", provider=provider.name)
    return provider


@critical("oauth")
async def authorize(request: web.Request) -> web.Response:
    provider = await _enabled(request.match_info["slug"])
    caller = await current_user(request)
    flow = oidc.new_flow(provider, caller.id if caller else 0, request.query.get("aff", "").strip())
    session = await sessions_of(request).get_or_create(request)
    await session.set(**{FLOW_FIELD: flow.dumps()})
    return ok({"url": oidc.authorization_url(provider, flow, oidc_client.redirect_uri(request, provider))})


async def _take_flow(request: web.Request, provider: CustomOAuthProvider) -> oidc.Flow:
    """The session's flow, removed whatever the outcome: a state is good for one callback only."""
    session = await sessions_of(request).load(request)
    raw = await session.pop(FLOW_FIELD) if session is not None else None
    return oidc.check_flow(oidc.Flow.loads(raw) if raw else None, provider, request.query.get("state", ""))


@critical("oauth")
async def callback(request: web.Request) -> web.Response:
    provider = await _enabled(request.match_info["slug"])
    code = request.query.get("code", "").strip()
    if not code:
        raise ApiError("invalid_param", name="code")
    flow = await _take_flow(request, provider)
    caller = await current_user(request)
    if flow.user_id and (caller is None or caller.id != flow.user_id):
        raise ApiError("oauth_state_invalid")  # a binding finishes in the session of the user who began it
    answer = await oidc_client.exchange_code(request, provider, code, flow)
    external = await oidc_client.external_identity(request, provider, flow, answer)
    if flow.user_id and caller is not None:
        await oidc.bind(services(request), caller, provider, external)
        return ok(None, BIND)
    user = await oidc.login_with_binding(services(request), provider, external, flow.aff)
    return await start_session(request, user)


@user_required
async def my_bindings(request: web.Request) -> web.Response:
    return ok(await oidc.bindings_of(the_user(request).id))


@user_required
async def unbind_mine(request: web.Request) -> web.Response:
    provider = await providers.provider_by_id(request.match_info["provider_id"])
    await oidc.unbind(services(request), the_user(request), provider)
    return ok()


async def _managed_user(request: web.Request) -> User:
    """The user an admin acts on: below the admin's role, unless the admin is root."""
    target = await User.filter(id=int(request.match_info["id"])).first()
    if target is None:
        raise ApiError("user_not_found")
    me = the_user(request)
    if me.role != Role.ROOT and target.role >= me.role:
        raise Forbidden()
    return target


@admin_required
async def user_bindings(request: web.Request) -> web.Response:
    return ok(await oidc.bindings_of((await _managed_user(request)).id))


@admin_required
async def unbind_user(request: web.Request) -> web.Response:
    target = await _managed_user(request)
    provider = await providers.provider_by_id(request.match_info["provider_id"])
    await oidc.unbind(services(request), target, provider, keep_a_login=False)
    return ok()
