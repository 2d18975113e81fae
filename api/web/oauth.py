"""Third-party identities: the OAuth state, and each provider's protocol (code → identity).

Base URLs come from Settings (github_base_url, github_api_url, linuxdo_base_url) or from the options
(WeChatServerAddress), so tests and private deployments can point them at local servers.

- GitHub: POST {github_base_url}/login/oauth/access_token (client id, secret, code; JSON answer),
  then GET {github_api_url}/user with the bearer token. The identity is GitHub's numeric user id
  (a login name can be renamed and then taken by someone else).
- LINUX DO: POST {linuxdo_base_url}/oauth2/token (HTTP Basic client credentials, authorization_code
  grant), then GET {linuxdo_base_url}/api/user; trust_level is checked against LinuxDoMinLevel.
- WeChat: GET {WeChatServerAddress}/api/wechat/user?code= with Authorization: WeChatServerToken
  (the wechat-server protocol); data is the user's WeChat id.
- Telegram: the login widget's fields, signed with HMAC-SHA256 of the data-check-string under
  SHA256(bot token); auth_date must be less than a day old.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import time
from typing import Any

import aiohttp
from aiohttp import web

from api import keys
from api.errors import ApiError
from api.services.accounts.identities import Identity
from api.services.configuration.options import OptionsService
from api.services.passwords import constant_time_equals, random_string
from api.web.sessions import sessions_of

log = logging.getLogger(__name__)
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=15)
STATE_LENGTH = 12
STATE_FIELD = "oauth_state"
AFF_FIELD = "aff"
TELEGRAM_MAX_AGE = 86400
TELEGRAM_FIELDS = ("id", "first_name", "last_name", "username", "photo_url", "auth_date")




# -- state -----------------------------------------------------------------------------------------
async def new_state(request: web.Request, aff: str = "") -> str:
    session = await sessions_of(request).get_or_create(request)
    state = random_string(STATE_LENGTH)
    fields = {STATE_FIELD: state}
    if aff:
        fields[AFF_FIELD] = aff[:32]
    await session.set(**fields)
    return state


async def take_state(request: web.Request, state: str) -> str:
    """Check the callback's state against the session (single use); returns the remembered aff code."""
    session = await sessions_of(request).load(request)
    expected = session.data.get(STATE_FIELD, "") if session is not None else ""
    if session is None or not expected or not state or not constant_time_equals(expected, state):
        raise ApiError("oauth_state_invalid")
    await session.pop(STATE_FIELD)
    return session.data.get(AFF_FIELD, "")


# -- HTTP ------------------------------------------------------------------------------------------
async def _call(request: web.Request, provider: str, method: str, url: str, **kwargs: Any) -> Any:
    """One JSON call to a provider; ApiError("oauth_provider_error") on any transport or HTTP failure."""
    http: aiohttp.ClientSession = request.config_dict[keys.HTTP]
    headers = {"Accept": "application/json", "Accept-Encoding": "identity", "User-Agent": "ai-gateway",
               **kwargs.pop("headers", {})}
    try:
        async with http.request(method, url, headers=headers, timeout=HTTP_TIMEOUT, **kwargs) as resp:
            body = await resp.json(content_type=None)
            status = resp.status
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        log.warning("%s call failed: %s", provider, type(exc).__name__)
        raise ApiError("oauth_provider_error", provider=provider) from exc
    if status != 200 or not isinstance(body, dict):
        log.warning("%s answered HTTP %s", provider, status)
        raise ApiError("oauth_provider_error", provider=provider)
    return body


def _callback_url(request: web.Request, options: OptionsService, path: str) -> str:
    base = options.get("ServerAddress") or f"{request.scheme}://{request.host}"
    return base.rstrip("/") + path


# -- providers -------------------------------------------------------------------------------------
async def github_identity(request: web.Request, code: str) -> Identity:
    options = request.config_dict[keys.OPTIONS]
    settings = request.config_dict[keys.SETTINGS]
    token = await _call(request, "GitHub", "POST", f"{settings.github_base_url}/login/oauth/access_token",
                        json={"client_id": options.get("GitHubClientId"),
                              "client_secret": options.get("GitHubClientSecret"), "code": code})
    access = token.get("access_token")
    if not isinstance(access, str) or not access:
        log.warning("GitHub refused the code: %s", token.get("error", "no access_token"))
        raise ApiError("oauth_provider_error", provider="GitHub")
    user = await _call(request, "GitHub", "GET", f"{settings.github_api_url}/user",
                       headers={"Authorization": f"Bearer {access}"})
    if not user.get("id"):
        raise ApiError("oauth_provider_error", provider="GitHub")
    return Identity("github", str(user["id"]), username=str(user.get("login") or ""),
                    display_name=str(user.get("name") or user.get("login") or ""),
                    email=str(user.get("email") or ""))


async def linuxdo_identity(request: web.Request, code: str) -> Identity:
    options = request.config_dict[keys.OPTIONS]
    base = request.config_dict[keys.SETTINGS].linuxdo_base_url
    token = await _call(request, "LINUX DO", "POST", f"{base}/oauth2/token",
                        headers={"Authorization": aiohttp.encode_basic_auth(
                            options.get("LinuxDoClientId"), options.get("LinuxDoClientSecret"))},
                        data={"grant_type": "authorization_code", "code": code,
                              "redirect_uri": _callback_url(request, options, "/oauth/linuxdo")})
    access = token.get("access_token")
    if not isinstance(access, str) or not access:
        log.warning("LINUX DO refused the code: %s", token.get("error", "no access_token"))
        raise ApiError("oauth_provider_error", provider="LINUX DO")
    user = await _call(request, "LINUX DO", "GET", f"{base}/api/user", headers={"Authorization": f"Bearer {access}"})
    if not user.get("id"):
        raise ApiError("oauth_provider_error", provider="LINUX DO")
    try:
        level = int(user.get("trust_level") or 0)
    except (TypeError, ValueError):
        level = 0
    return Identity("linuxdo", str(user["id"]), username=str(user.get("username") or ""),
                    display_name=str(user.get("name") or user.get("username") or ""), level=level)


def check_linuxdo_level(options: OptionsService, identity: Identity) -> None:
    minimum = options.get_int("LinuxDoMinLevel")
    if identity.provider == "linuxdo" and identity.level < minimum:
        raise ApiError("linuxdo_level_low", level=identity.level, min=minimum)


async def wechat_identity(request: web.Request, code: str) -> Identity:
    options = request.config_dict[keys.OPTIONS]
    server = options.get("WeChatServerAddress").rstrip("/")
    if not server:
        raise ApiError("oauth_disabled", provider="WeChat")
    body = await _call(request, "WeChat", "GET", f"{server}/api/wechat/user", params={"code": code},
                       headers={"Authorization": options.get("WeChatServerToken")})
    wechat_id = body.get("data")
    if body.get("success") is not True or not isinstance(wechat_id, str) or not wechat_id:
        raise ApiError("verification_code_invalid")
    return Identity("wechat", wechat_id)


def telegram_identity(options: OptionsService, fields: dict[str, str], now: float | None = None) -> Identity:
    """Check the login widget's signature and freshness; only Telegram's own fields are signed."""
    received = fields.get("hash", "")
    data = {k: fields[k] for k in TELEGRAM_FIELDS if k in fields}
    bot_token = options.get("TelegramBotToken")
    if not received or "id" not in data or "auth_date" not in data or not bot_token:
        raise ApiError("telegram_invalid")
    check_string = "\n".join(f"{k}={data[k]}" for k in sorted(data))
    secret = hashlib.sha256(bot_token.encode()).digest()
    expected = hmac.new(secret, check_string.encode(), hashlib.sha256).hexdigest()
    if not constant_time_equals(expected, received.lower()):
        raise ApiError("telegram_invalid")
    try:
        auth_date = int(data["auth_date"])
    except ValueError:
        raise ApiError("telegram_invalid") from None
    current = time.time() if now is None else now
    if current - auth_date > TELEGRAM_MAX_AGE or auth_date - current > 300:
        raise ApiError("telegram_expired")
    name = " ".join(p for p in (data.get("first_name", ""), data.get("last_name", "")) if p)
    return Identity("telegram", data["id"], username=data.get("username", ""), display_name=name)
