"""Kling's API token (api/upstream/signing/kling.py) read back by PyJWT, an implementation of its own:
HS256 with the secret key, `iss` the access key, valid from five seconds before it was made for
TOKEN_LIFETIME; and the adaptor signs each call when the one upstream call authorizes it."""
from __future__ import annotations

import time

import jwt
import pytest

from api.upstream.base import UpstreamContext
from api.upstream.credentials import CredentialCache
from api.upstream.providers.kling import KlingAdaptor
from api.upstream.signing import kling
from api.upstream.task_base import KeyPairInvalid

ACCESS, SECRET = "ak-test-access", "sk-test-secret-of-32-bytes-000000"


def test_token_is_hs256_over_iss_exp_nbf() -> None:
    now = 1_700_000_000.7
    token, expires = kling.token(ACCESS, SECRET, now)
    assert expires == 1_700_000_000 + kling.TOKEN_LIFETIME
    assert jwt.get_unverified_header(token) == {"alg": "HS256", "typ": "JWT"}
    claims = jwt.decode(token, SECRET, algorithms=["HS256"], options={"verify_exp": False, "verify_nbf": False})
    assert claims == {"iss": ACCESS, "exp": expires, "nbf": 1_700_000_000 - 5}
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, "another-secret-of-32-bytes-000000", algorithms=["HS256"],
                   options={"verify_exp": False, "verify_nbf": False})


def test_a_fresh_token_is_valid_now() -> None:
    token, _ = kling.token(ACCESS, SECRET, time.time())
    assert jwt.decode(token, SECRET, algorithms=["HS256"])["iss"] == ACCESS


async def test_the_adaptor_signs_when_authorized() -> None:
    adaptor = KlingAdaptor("", f"{ACCESS}|{SECRET}")
    request = adaptor.fetch(["text2video/task-1"])
    assert "Authorization" not in request.headers  # built unsigned: the one upstream call authorizes it
    await adaptor.authorize(request, UpstreamContext(None, CredentialCache()))  # type: ignore[arg-type]
    scheme, _, token = request.headers["Authorization"].partition(" ")
    assert scheme == "Bearer"
    assert jwt.decode(token, SECRET, algorithms=["HS256"])["iss"] == ACCESS
    assert request.url == "https://api-singapore.klingai.com/v1/videos/text2video/task-1"


def test_a_key_that_is_not_a_pair_fails_before_anything_is_sent() -> None:
    with pytest.raises(KeyPairInvalid):
        KlingAdaptor("", "just-one-key").fetch(["text2video/task-1"])
