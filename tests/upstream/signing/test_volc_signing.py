"""Volcengine's OpenAPI signature against the worked examples of its signing guide: docs/6369/67270
("签名示例": GET iam ListUsers at 20240619T071306Z) and docs/6369/67269 ("签名方法": GET QueryBalanceAcct
and POST ListBill on billing at 20250329T180937Z), with the guide's sample key pair (it can call nothing)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from api.upstream.signing import volc

AK = "AKLTYWViMTVmZGYzM2E0NDI5Mzk2MDZjNjFmMjc2MjRjMzg"
SK = "WkRZeE1EQmxPVGhsWWpWak5HVmtNbUUxTXpZeU9UVXlOMlE1TmpZeVlqTQ=="


@pytest.mark.parametrize(("method", "url", "body", "region", "service", "now", "signature"), [
    ("GET", "https://iam.volcengineapi.com/?Action=ListUsers&Version=2018-01-01&Limit=10&Offset=0", b"",
     "cn-beijing", "iam", datetime(2024, 6, 19, 7, 13, 6, tzinfo=UTC),
     "e31c4558bcfe08a286001f59cedbf0791ffd0b2362f10e55ee2627467bcdde93"),
    ("GET", "https://billing.volcengineapi.com/?Action=QueryBalanceAcct&Version=2022-01-01", b"",
     "cn-beijing", "billing", datetime(2025, 3, 29, 18, 9, 37, tzinfo=UTC),
     "1eda9e7e6b1728151a8e8791fdaf67cfbd28bd5c80d0fce2eb208746cf483105"),
    ("POST", "https://billing.volcengineapi.com/?Action=ListBill&Version=2022-01-01",
     b'{"Limit":10,"BillPeriod":"2023-08"}', "cn-beijing", "billing", datetime(2025, 3, 29, 18, 9, 37, tzinfo=UTC),
     "5e8480ceea12d0000a23c054151c50dd02c1a7dec835004057d19f13d53a7658"),
])
def test_the_guides_worked_examples(method, url, body, region, service, now, signature) -> None:
    out = volc.sign(method, url, {}, body, access_key=AK, secret_key=SK, region=region, service=service, now=now,
                    payload_header=False)
    scope = f"{now:%Y%m%d}/{region}/{service}/request"
    assert out["Authorization"] == (f"HMAC-SHA256 Credential={AK}/{scope}, SignedHeaders=host;x-date, "
                                    f"Signature={signature}")
    assert out["X-Date"] == f"{now:%Y%m%dT%H%M%SZ}" and "host" not in {k.lower() for k in out}


def test_the_intermediate_values_of_the_guides_get_example() -> None:
    canonical = ("GET\n/\nAction=ListUsers&Limit=10&Offset=0&Version=2018-01-01\nhost:iam.volcengineapi.com\n"
                 "x-date:20240619T071306Z\n\nhost;x-date\n"
                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    assert volc.string_to_sign("20240619T071306Z", "20240619/cn-beijing/iam/request", canonical).endswith(
        "\n5ed5bca3905e1fcbf789abb56a17c2d819674a3bcfa468ae476bd1ea80d135cb")
    assert volc.signing_key(SK, "20240619", "cn-beijing", "iam").hex() == \
        "abee62e533a58934c49954459a3c3237d2fccea517c9a7c8a2651d8ea7779826"


def test_the_payload_hash_and_content_type_are_signed() -> None:
    out = volc.sign("POST", "https://visual.volcengineapi.com/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31",
                    {"Content-Type": "application/json"}, b"{}", access_key="AK", secret_key="SK",
                    region="cn-north-1", service="cv", now=datetime(2026, 1, 2, tzinfo=UTC))
    assert out["X-Content-Sha256"] == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    assert out["Authorization"].startswith("HMAC-SHA256 Credential=AK/20260102/cn-north-1/cv/request, "
                                           "SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=")
