"""A local OpenID Connect provider, strict as a real one: discovery, JWKS, RS256-signed ID tokens, and
authorize / token / userinfo endpoints.

- /authorize refuses an unknown client, a redirect_uri not registered (exact match), a response_type
  other than `code`, a PKCE challenge missing or not S256; it "logs in" `user` (the test sets it) and
  redirects (302) to redirect_uri with a one-time code and the state.
- /token refuses a wrong grant, a code unknown, used or expired, a redirect_uri other than the
  authorize one, a code_verifier whose S256 is not the challenge, wrong client credentials (in the
  form or HTTP Basic, one method only); it answers an access token and an ID token whose claims are
  iss, sub, aud, exp, iat, nonce and the user's, signed with the current key (kid `k1`).
- /userinfo wants the access token as a bearer.

`tamper` changes the next ID tokens (claims merged over the right ones; `sign_with` another key) so
that tests can forge them; `rotate()` makes a new signing key with a new kid.
"""
from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID = "gateway-client"
CLIENT_SECRET = "gateway-secret-value"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Grant:
    user: dict[str, Any]
    redirect_uri: str
    challenge: str
    nonce: str
    scope: str
    expires: float
    used: bool = False


@dataclass
class FakeOidc:
    redirect_uris: set[str]
    url: str = ""
    key: rsa.RSAPrivateKey = field(default_factory=new_key)
    kid: str = "k1"
    user: dict[str, Any] = field(default_factory=lambda: {"sub": "user-1", "preferred_username": "ada",
                                                          "name": "Ada Lovelace", "email": "ada@idp.example"})
    tamper: dict[str, Any] = field(default_factory=dict)
    userinfo_extra: dict[str, Any] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    old_keys: list[tuple[str, rsa.RSAPrivateKey]] = field(default_factory=list)

    def calls_to(self, path: str) -> list[dict[str, str]]:
        return [args for p, args in self.calls if p == path]

    def rotate(self) -> None:
        self.kid = f"k{len(self.old_keys) + 2}"
        self.key = new_key()

    def jwks(self) -> dict[str, Any]:
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def discovery(self) -> dict[str, Any]:
        return {"issuer": self.url, "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token", "userinfo_endpoint": f"{self.url}/userinfo",
                "jwks_uri": f"{self.url}/jwks", "response_types_supported": ["code"],
                "scopes_supported": ["openid", "profile", "email"], "code_challenge_methods_supported": ["S256"],
                "id_token_signing_alg_values_supported": ["RS256"], "subject_types_supported": ["public"]}

    def id_token(self, grant: Grant) -> str:
        now = int(time.time())
        claims = {"iss": self.url, "sub": grant.user["sub"], "aud": CLIENT_ID, "exp": now + 300, "iat": now,
                  "nonce": grant.nonce, **{k: v for k, v in grant.user.items() if k != "sub"}}
        claims.update({k: v for k, v in self.tamper.items() if k != "sign_with"})
        return jwt.encode(claims, self.tamper.get("sign_with", self.key), algorithm="RS256",
                          headers={"kid": self.kid})


def _oauth_error(error: str, status: int = 400) -> web.Response:
    return web.json_response({"error": error}, status=status)


def _client_of(request: web.Request, form: dict[str, str]) -> tuple[str, str] | None:
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Basic "):
        if "client_secret" in form:
            return None  # two authentication methods at once
        user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        return user, password
    return form.get("client_id", ""), form.get("client_secret", "")


async def start_oidc(aiohttp_server, redirect_uris: set[str]) -> FakeOidc:
    fake = FakeOidc(redirect_uris=redirect_uris)
    app = web.Application()

    async def discovery(request: web.Request) -> web.Response:
        fake.calls.append(("discovery", {}))
        return web.json_response(fake.discovery())

    async def jwks(request: web.Request) -> web.Response:
        fake.calls.append(("jwks", {}))
        return web.json_response(fake.jwks())

    async def authorize(request: web.Request) -> web.Response:
        q = dict(request.query)
        fake.calls.append(("authorize", q))
        if q.get("client_id") != CLIENT_ID:
            return web.Response(status=400, text="unknown client")
        if q.get("redirect_uri") not in fake.redirect_uris:
            return web.Response(status=400, text="redirect_uri not registered")
        if q.get("response_type") != "code" or not q.get("state"):
            return web.Response(status=400, text="bad request")
        if q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43:
            return web.Response(status=400, text="PKCE S256 required")
        code = secrets.token_urlsafe(16)
        fake.grants[code] = Grant(dict(fake.user), q["redirect_uri"], q["code_challenge"], q.get("nonce", ""),
                                  q.get("scope", ""), time.time() + 60)
        raise web.HTTPFound(q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]}))

    async def token(request: web.Request) -> web.Response:
        form = dict(await request.post())
        fake.calls.append(("token", {**form, "authorization": request.headers.get("Authorization", "")}))
        if _client_of(request, form) != (CLIENT_ID, CLIENT_SECRET):
            return _oauth_error("invalid_client", 401)
        if form.get("grant_type") != "authorization_code":
            return _oauth_error("unsupported_grant_type")
        grant = fake.grants.get(form.get("code", ""))
        if grant is None or grant.used or grant.expires < time.time():
            return _oauth_error("invalid_grant")
        grant.used = True
        if form.get("redirect_uri") != grant.redirect_uri:
            return _oauth_error("invalid_grant")
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if not verifier or digest != grant.challenge:
            return _oauth_error("invalid_grant")
        access = secrets.token_urlsafe(24)
        fake.tokens[access] = grant.user
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": 300}
        if "openid" in grant.scope.split():
            answer["id_token"] = fake.id_token(grant)
        return web.json_response(answer)

    async def userinfo(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        fake.calls.append(("userinfo", {}))
        user = fake.tokens.get(auth[7:]) if auth.startswith("Bearer ") else None
        if user is None:
            return _oauth_error("invalid_token", 401)
        return web.json_response({**user, **fake.userinfo_extra})

    app.router.add_get("/.well-known/openid-configuration", discovery)
    app.router.add_get("/jwks", jwks)
    app.router.add_get("/authorize", authorize)
    app.router.add_post("/token", token)
    app.router.add_get("/userinfo", userinfo)
    server = await aiohttp_server(app)
    fake.url = str(server.make_url("")).rstrip("/")
    return fake
