"""Google service-account OAuth (Vertex AI): a service-account JSON key is exchanged for an access
token by posting an RS256-signed JWT assertion to the key's `token_uri` (RFC 7523, Google's
"OAuth 2.0 for server to server applications"). The private key never leaves this process: only
the assertion is sent, and only the access token is put on requests.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

import aiohttp
import orjson
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from api.upstream.credentials import Credential
from api.upstream.errors import RelayError
from api.upstream.signing import oauth

DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
ASSERTION_LIFETIME = 3600
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class ServiceAccount:
    client_email: str
    private_key: str  # PEM
    private_key_id: str
    project_id: str
    token_uri: str = DEFAULT_TOKEN_URI


def parse_service_account(text: str) -> ServiceAccount:
    """The key file's JSON (one line or pretty-printed); ValueError naming what is wrong."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ValueError("not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("type") != "service_account":
        raise ValueError('"type" is not "service_account"')
    missing = [f for f in ("client_email", "private_key", "project_id") if not isinstance(data.get(f), str)
               or not data[f]]
    if missing:
        raise ValueError("missing " + ", ".join(missing))
    if "PRIVATE KEY" not in data["private_key"]:
        raise ValueError("private_key is not a PEM key")
    return ServiceAccount(data["client_email"], data["private_key"], str(data.get("private_key_id") or ""),
                          data["project_id"], str(data.get("token_uri") or DEFAULT_TOKEN_URI))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def assertion(account: ServiceAccount, now: float, scope: str = CLOUD_PLATFORM) -> str:
    header = {"alg": "RS256", "typ": "JWT", **({"kid": account.private_key_id} if account.private_key_id else {})}
    issued = int(now)
    claims = {"iss": account.client_email, "scope": scope, "aud": account.token_uri, "iat": issued,
              "exp": issued + ASSERTION_LIFETIME}
    signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}"
    try:
        key = serialization.load_pem_private_key(account.private_key.encode(), password=None)
    except (ValueError, TypeError):
        raise RelayError(401, "the service-account private key cannot be read", "authentication_error",
                         "invalid_api_key") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise RelayError(401, "the service-account private key is not an RSA key", "authentication_error",
                         "invalid_api_key")
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64(signature)}"


async def exchange(http: aiohttp.ClientSession, account: ServiceAccount, now: float,
                   timeout: float = 10) -> Credential:
    """POST the assertion to the token endpoint → the access token and its expiry."""
    form = {"grant_type": JWT_BEARER, "assertion": assertion(account, now)}
    return await oauth.exchange(http, account.token_uri, now, form=form, timeout=timeout,
                                provider="the Google token endpoint", refused="the service account")
