"""Calling a custom OAuth 2 / OpenID Connect provider: its discovery document, its JWKS, its token and
userinfo endpoints.

Root types these URLs, so every call is made under the policy for user-supplied URLs of
api/upstream/media.py: http(s) only, every address the host resolves to public unless the option
MediaFetchPrivateEnabled allows private ones, the connection pinned to the addresses checked, each
redirect (GET only, at most MAX_REDIRECTS) checked like the first; bounded in time (TIMEOUT) and size
(MAX_BODY). The client secret travels only to the token endpoint, and is never logged.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import orjson
from aiohttp import web

from api import keys
from api.errors import ApiError
from api.services.accounts import oidc
from api.services.accounts.oidc_tokens import Expected, JwksCache, TokenRefused, verify_id_token
from api.upstream import media
from api.upstream.errors import RelayError
from models import CustomOAuthProvider

log = logging.getLogger(__name__)
TIMEOUT = aiohttp.ClientTimeout(total=15)
MAX_BODY = 1024 * 1024
MAX_REDIRECTS = 3
JWKS_CACHE = web.AppKey("jwks_cache", JwksCache)


def setup_jwks_cache(app: web.Application) -> None:
    app[JWKS_CACHE] = JwksCache()


class CallFailed(Exception):
    """A provider call that did not give a JSON answer: `reason` says why (no secret in it)."""


class AddressRefused(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


async def call(url: str, *, allow_private: bool, form: dict[str, str] | None = None,
               headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """(HTTP status, the JSON body) of a GET (or a form POST when `form` is given) under the policy."""
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AddressRefused(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            results = await media.checked_addresses(parts.hostname, port, allow_private)
        except RelayError:
            raise AddressRefused(url) from None
        connector = aiohttp.TCPConnector(resolver=media.PinnedResolver(results), use_dns_cache=False, force_close=True)
        sent = {"Accept": "application/json", "User-Agent": "ai-gateway", **(headers or {})}
        try:
            async with aiohttp.ClientSession(connector=connector, timeout=TIMEOUT) as http:
                method = "POST" if form is not None else "GET"
                async with http.request(method, url, data=form, headers=sent, allow_redirects=False) as resp:
                    if form is None and resp.status in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
                        url = urljoin(url, resp.headers["Location"])
                        continue
                    body = await resp.content.read(MAX_BODY + 1)
                    if len(body) > MAX_BODY:
                        raise CallFailed(f"the answer is larger than {MAX_BODY} bytes")
                    try:
                        return resp.status, orjson.loads(body)
                    except orjson.JSONDecodeError:
                        raise CallFailed(f"HTTP {resp.status}, not JSON") from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise CallFailed(type(exc).__name__) from None
    raise CallFailed(f"more than {MAX_REDIRECTS} redirects")


def allow_private(request: web.Request) -> bool:
    return request.config_dict[keys.OPTIONS].get_bool("MediaFetchPrivateEnabled")


async def discovery(request: web.Request, url: str, issuer: str) -> dict[str, Any]:
    """The discovery document at `url`; when fetched from an issuer, it must name that issuer."""
    try:
        status, body = await call(url, allow_private=allow_private(request))
    except AddressRefused as refused:
        raise ApiError("custom_oauth_address_refused", url=refused.url) from None
    except CallFailed as failed:
        raise ApiError("custom_oauth_discovery_failed", reason=str(failed)) from None
    if status != 200 or not isinstance(body, dict):
        raise ApiError("custom_oauth_discovery_failed", reason=f"HTTP {status}")
    found = body.get("issuer")
    if issuer and (not isinstance(found, str) or found.rstrip("/") != issuer.rstrip("/")):
        raise ApiError("custom_oauth_discovery_issuer", found=str(found)[:200], expected=issuer)
    return body


def redirect_uri(request: web.Request, provider: CustomOAuthProvider) -> str:
    """The console's callback page for the provider (as new-api: {ServerAddress}/oauth/{slug})."""
    base = request.config_dict[keys.OPTIONS].get("ServerAddress") or f"{request.scheme}://{request.host}"
    return base.rstrip("/") + "/oauth/" + provider.slug


async def _provider_json(request: web.Request, provider: CustomOAuthProvider, url: str, step: str,
                         **kwargs: Any) -> dict[str, Any]:
    try:
        status, body = await call(url, allow_private=allow_private(request), **kwargs)
    except AddressRefused as refused:
        raise ApiError("custom_oauth_address_refused", url=refused.url) from None
    except CallFailed as failed:
        log.warning("custom OAuth %s: %s failed: %s", provider.slug, step, failed)
        raise ApiError("oauth_provider_error", provider=provider.name) from None
    if status != 200 or not isinstance(body, dict):
        error = body.get("error") if isinstance(body, dict) else None
        log.warning("custom OAuth %s: %s answered HTTP %s %s", provider.slug, step, status, str(error)[:100])
        raise ApiError("oauth_provider_error", provider=provider.name)
    return body


async def exchange_code(request: web.Request, provider: CustomOAuthProvider, code: str,
                        flow: oidc.Flow) -> dict[str, Any]:
    """The token endpoint's answer for the code, sent with the PKCE verifier and the client's credentials."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri(request, provider),
            "code_verifier": flow.verifier}
    headers: dict[str, str] = {}
    if provider.auth_style == 2:
        headers["Authorization"] = aiohttp.encode_basic_auth(provider.client_id, provider.client_secret)
    else:
        form.update(client_id=provider.client_id, client_secret=provider.client_secret)
    answer = await _provider_json(request, provider, provider.token_endpoint, "token", form=form, headers=headers)
    if answer.get("error") or not isinstance(answer.get("access_token"), str) or not answer["access_token"]:
        log.warning("custom OAuth %s: the token endpoint refused the code: %s", provider.slug,
                    str(answer.get("error", "no access_token"))[:100])
        raise ApiError("oauth_provider_error", provider=provider.name)
    return answer


async def _userinfo(request: web.Request, provider: CustomOAuthProvider, answer: dict[str, Any]) -> dict[str, Any]:
    token_type = str(answer.get("token_type") or "Bearer")
    token_type = "Bearer" if token_type.lower() == "bearer" else token_type
    return await _provider_json(request, provider, provider.user_info_endpoint, "userinfo",
                                headers={"Authorization": f"{token_type} {answer['access_token']}"})


async def external_identity(request: web.Request, provider: CustomOAuthProvider, flow: oidc.Flow,
                            answer: dict[str, Any]) -> oidc.External:
    """Who the provider says logged in: from the verified ID token (OpenID Connect, completed by the
    userinfo answer when the provider has that endpoint, which must then be of the same `sub`), or
    from the userinfo answer alone (plain OAuth 2)."""
    if not provider.is_oidc:
        return oidc.external_of(provider, await _userinfo(request, provider, answer))

    async def fetch_jwks(url: str) -> dict[str, Any]:
        return await _provider_json(request, provider, url, "jwks")

    expected = Expected(issuer=provider.issuer, audience=provider.audience or provider.client_id,
                        client_id=provider.client_id, nonce=flow.nonce, jwks_url=provider.jwks_url)
    try:
        claims = await verify_id_token(answer.get("id_token", ""), expected, request.config_dict[JWKS_CACHE],
                                       fetch_jwks)
    except TokenRefused as refused:
        log.warning("custom OAuth %s: ID token refused (%s)", provider.slug, refused.reason)
        raise ApiError(f"oidc_token_{refused.reason}", provider=provider.name) from None
    data = dict(claims)
    if provider.user_info_endpoint:
        info = await _userinfo(request, provider, answer)
        if info.get("sub", claims["sub"]) != claims["sub"]:
            raise ApiError("oidc_userinfo_mismatch", provider=provider.name)
        data = {**info, **claims}  # what the signed token says wins
    return oidc.external_of(provider, data)
