"""AWS Signature Version 4 against AWS's published test suite (credentials AKIDEXAMPLE, region
us-east-1, service `service`, 2015-08-30T12:36:00Z), and the Bedrock path with a `:` in the model."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from api.upstream.signing import sigv4

SUITE = {"access_key": "AKIDEXAMPLE", "secret_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
         "region": "us-east-1", "service": "service", "now": datetime(2015, 8, 30, 12, 36, tzinfo=UTC),
         "sign_payload_header": False}
HOST = "https://example.amazonaws.com"


def authorization(signature: str, signed: str = "host;x-amz-date") -> str:
    return (f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            f"SignedHeaders={signed}, Signature={signature}")


@pytest.mark.parametrize(("name", "method", "path", "headers", "body", "signed", "signature"), [
    ("get-vanilla", "GET", "/", {}, b"", "host;x-amz-date",
     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
    ("post-vanilla", "POST", "/", {}, b"", "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
    ("get-vanilla-query-order-key-case", "GET", "/?Param2=value2&Param1=value1", {}, b"", "host;x-amz-date",
     "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
    ("post-x-www-form-urlencoded", "POST", "/", {"Content-Type": "application/x-www-form-urlencoded"},
     b"Param1=value1", "content-type;host;x-amz-date",
     "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"),
    ("get-utf8", "GET", "/ሴ", {}, b"", "host;x-amz-date",
     "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
    ("get-space-normalized", "GET", "/example space/", {}, b"", "host;x-amz-date",
     "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"),
])
def test_published_vectors(name, method, path, headers, body, signed, signature) -> None:
    out = sigv4.sign(method, HOST + path, headers, body, **SUITE)
    assert out["Authorization"] == authorization(signature, signed), name
    assert out["X-Amz-Date"] == "20150830T123600Z"
    assert "host" not in {k.lower() for k in out}  # aiohttp sends the same Host itself


def test_intermediate_values_of_get_vanilla() -> None:
    canonical, signed = sigv4.canonical_request("GET", HOST + "/", {"host": "example.amazonaws.com",
                                                                   "x-amz-date": "20150830T123600Z"},
                                                sigv4.EMPTY_SHA256)
    assert canonical == ("GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                         + sigv4.EMPTY_SHA256)
    assert sigv4.string_to_sign("20150830T123600Z", "20150830/us-east-1/service/aws4_request", canonical) == (
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63")


def test_bedrock_model_id_is_encoded_in_the_url_and_again_in_the_canonical_request() -> None:
    model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    url = f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{sigv4.url_path_segment(model)}/invoke"
    assert url.endswith("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke")
    canonical, _ = sigv4.canonical_request("POST", url, {"host": "h"}, sigv4.EMPTY_SHA256)
    assert canonical.split("\n")[1] == "/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/invoke"


def test_payload_hash_and_session_token_are_signed() -> None:
    out = sigv4.sign("POST", HOST + "/", {"Content-Type": "application/json"}, b"{}", access_key="AKID",
                     secret_key="s", region="eu-west-3", service="bedrock", now=datetime(2026, 1, 2, tzinfo=UTC),
                     session_token="tok")
    assert out["X-Amz-Security-Token"] == "tok"
    assert out["X-Amz-Content-Sha256"] == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    assert "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token," in \
        out["Authorization"]
    assert "/20260102/eu-west-3/bedrock/aws4_request" in out["Authorization"]
