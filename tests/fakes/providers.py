"""Fake GitHub, LINUX DO, WeChat server and Cloudflare Turnstile, each speaking its real protocol,
on one aiohttp test server. Tests register what a code or token stands for, then point the gateway's
Settings/options at `url`.

- GitHub:     POST /login/oauth/access_token (JSON or form: client_id, client_secret, code) → 200 with
              {access_token, token_type, scope} or {error, error_description};
              GET /github-api/user (Authorization: Bearer|token) → the user, or 401 Bad credentials.
- LINUX DO:   POST /oauth2/token (HTTP Basic client credentials; form grant_type, code, redirect_uri)
              → {access_token, ...} or 400 {error: invalid_grant}; GET /api/user (Bearer) → the user.
- WeChat:     GET /api/wechat/user?code= with Authorization: <server token> → {success, message, data}.
- Turnstile:  POST /turnstile/v0/siteverify (form secret, response, remoteip) → {success, error-codes};
              a token is accepted once.
"""
from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

GITHUB_API = "/github-api"
SITEVERIFY = "/turnstile/v0/siteverify"


@dataclass
class FakeProviders:
    github_client: tuple[str, str] = ("gh-client", "gh-secret")
    linuxdo_client: tuple[str, str] = ("ld-client", "ld-secret")
    wechat_token: str = "wechat-server-token"
    turnstile_secret: str = "ts-secret"
    github_codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    linuxdo_codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    wechat_codes: dict[str, str] = field(default_factory=dict)
    turnstile_tokens: set[str] = field(default_factory=set)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    url: str = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/login/oauth/access_token", self.github_token)
        app.router.add_get(f"{GITHUB_API}/user", self.github_user)
        app.router.add_post("/oauth2/token", self.linuxdo_token)
        app.router.add_get("/api/user", self.linuxdo_user)
        app.router.add_get("/api/wechat/user", self.wechat_user)
        app.router.add_post(SITEVERIFY, self.siteverify)
        return app

    def calls_to(self, name: str) -> list[dict[str, Any]]:
        return [payload for call, payload in self.calls if call == name]

    # -- GitHub ------------------------------------------------------------------------------------
    async def github_token(self, request: web.Request) -> web.Response:
        if request.content_type == "application/json":
            body = await request.json()
        else:
            body = dict(await request.post())
        self.calls.append(("github_token", body))
        if (body.get("client_id"), body.get("client_secret")) != self.github_client:
            return web.json_response({"error": "incorrect_client_credentials",
                                      "error_description": "The client_id and/or client_secret passed are incorrect."})
        user = self.github_codes.pop(body.get("code", ""), None)
        if user is None:
            return web.json_response({"error": "bad_verification_code",
                                      "error_description": "The code passed is incorrect or expired."})
        token = "gho_" + secrets.token_hex(16)
        self._tokens[token] = user
        if "application/json" not in request.headers.get("Accept", ""):
            return web.Response(text=f"access_token={token}&scope=user%3Aemail&token_type=bearer")
        return web.json_response({"access_token": token, "token_type": "bearer", "scope": "user:email"})

    async def github_user(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        user = self._tokens.get(token)
        if user is None:
            return web.json_response({"message": "Bad credentials"}, status=401)
        return web.json_response(user)

    # -- LINUX DO ----------------------------------------------------------------------------------
    async def linuxdo_token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        auth = request.headers.get("Authorization", "")
        client = ("", "")
        if auth.startswith("Basic "):
            decoded = base64.b64decode(auth[6:]).decode()
            client = tuple(decoded.split(":", 1))  # type: ignore[assignment]
        self.calls.append(("linuxdo_token", {**form, "client": client}))
        if client != self.linuxdo_client:
            return web.json_response({"error": "invalid_client"}, status=401)
        user = self.linuxdo_codes.pop(form.get("code", ""), None)
        if form.get("grant_type") != "authorization_code" or user is None:
            return web.json_response({"error": "invalid_grant"}, status=400)
        token = secrets.token_hex(16)
        self._tokens[token] = user
        return web.json_response({"access_token": token, "token_type": "bearer", "expires_in": 3600})

    async def linuxdo_user(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        user = self._tokens.get(auth.removeprefix("Bearer "))
        if user is None:
            return web.json_response({"error": "invalid_token"}, status=401)
        return web.json_response(user)

    # -- WeChat server -----------------------------------------------------------------------------
    async def wechat_user(self, request: web.Request) -> web.Response:
        self.calls.append(("wechat_user", {"code": request.query.get("code", ""),
                                           "authorization": request.headers.get("Authorization", "")}))
        if request.headers.get("Authorization") != self.wechat_token:
            return web.json_response({"success": False, "message": "无权进行此操作，未登录或 token 无效"})
        wechat_id = self.wechat_codes.pop(request.query.get("code", ""), None)
        if wechat_id is None:
            return web.json_response({"success": False, "message": "验证码错误或已过期"})
        return web.json_response({"success": True, "message": "", "data": wechat_id})

    # -- Turnstile ---------------------------------------------------------------------------------
    async def siteverify(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        self.calls.append(("siteverify", form))
        if form.get("secret") != self.turnstile_secret:
            return web.json_response({"success": False, "error-codes": ["invalid-input-secret"]})
        if form.get("response") not in self.turnstile_tokens:
            return web.json_response({"success": False, "error-codes": ["invalid-input-response"]})
        self.turnstile_tokens.discard(form["response"])
        return web.json_response({"success": True, "challenge_ts": "2026-01-01T00:00:00Z",
                                  "hostname": "localhost", "error-codes": []})


async def start_providers(aiohttp_server) -> FakeProviders:
    """The fake providers on a local test server (the `aiohttp_server` fixture closes it)."""
    fake = FakeProviders()
    server = await aiohttp_server(fake.app())
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


def pointed_at(settings, fake: FakeProviders):
    """Settings whose provider base URLs are the fake's."""
    import dataclasses

    return dataclasses.replace(settings, turnstile_verify_url=fake.url + SITEVERIFY, github_base_url=fake.url,
                               github_api_url=fake.url + GITHUB_API, linuxdo_base_url=fake.url)
