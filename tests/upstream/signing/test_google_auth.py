"""Google service-account OAuth: the RS256 assertion, and its exchange against a local token
endpoint that verifies the signature as Google's does."""
from __future__ import annotations

import base64

import orjson
import pytest
from aiohttp import ClientSession, web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from api.upstream.errors import RelayError
from api.upstream.signing import google


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def key_file(key: rsa.RSAPrivateKey, token_uri: str = google.DEFAULT_TOKEN_URI, indent: bool = False) -> str:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    data = {"type": "service_account", "project_id": "proj-1", "private_key_id": "kid-1", "private_key": pem,
            "client_email": "relay@proj-1.iam.gserviceaccount.com", "token_uri": token_uri}
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 if indent else 0).decode()


def b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def verify(token: str, public: rsa.RSAPublicKey) -> tuple[dict, dict]:
    header, claims, signature = token.split(".")
    public.verify(b64decode(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return orjson.loads(b64decode(header)), orjson.loads(b64decode(claims))


def test_service_account_parsing() -> None:
    key = new_key()
    one_line = google.parse_service_account(key_file(key))
    pretty = google.parse_service_account(key_file(key, indent=True))
    assert one_line == pretty and one_line.project_id == "proj-1" and one_line.private_key_id == "kid-1"
    for text, problem in [("ya29.x", "not JSON"), ('{"type": "user"}', '"type" is not "service_account"'),
                          ('{"type": "service_account", "project_id": "p"}', "missing client_email, private_key")]:
        with pytest.raises(ValueError, match=problem):
            google.parse_service_account(text)


def test_assertion_is_an_rs256_jwt_for_the_token_endpoint() -> None:
    key = new_key()
    account = google.parse_service_account(key_file(key))
    header, claims = verify(google.assertion(account, 1_700_000_000.7), key.public_key())
    assert header == {"alg": "RS256", "typ": "JWT", "kid": "kid-1"}
    assert claims == {"iss": "relay@proj-1.iam.gserviceaccount.com", "scope": google.CLOUD_PLATFORM,
                      "aud": "https://oauth2.googleapis.com/token", "iat": 1_700_000_000, "exp": 1_700_003_600}
    with pytest.raises(InvalidSignature):
        verify(google.assertion(account, 0), new_key().public_key())


async def test_exchange_against_a_token_endpoint(aiohttp_server) -> None:
    key = new_key()
    seen: list[dict] = []

    async def token(request: web.Request) -> web.Response:
        form = dict(await request.post())
        seen.append(form)
        try:
            _, claims = verify(form["assertion"], key.public_key())
        except InvalidSignature:
            return web.json_response({"error": "invalid_grant", "error_description": "Invalid JWT Signature."},
                                     status=400)
        assert form["grant_type"] == google.JWT_BEARER and claims["aud"] == str(request.url)
        return web.json_response({"access_token": "ya29.fresh", "expires_in": 3599, "token_type": "Bearer"})

    app = web.Application()
    app.router.add_post("/token", token)
    server = await aiohttp_server(app)
    uri = str(server.make_url("/token"))
    async with ClientSession() as http:
        credential = await google.exchange(http, google.parse_service_account(key_file(key, uri)), 1000.0)
        assert (credential.value, credential.expires_at) == ("ya29.fresh", 4599.0)
        impostor = google.parse_service_account(key_file(new_key(), uri))
        with pytest.raises(RelayError) as caught:
            await google.exchange(http, impostor, 1000.0)
    err = caught.value
    assert (err.status, err.type) == (401, "authentication_error")
    assert "Invalid JWT Signature." in err.message and "PRIVATE KEY" not in err.message
    assert len(seen) == 2
