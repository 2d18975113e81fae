"""A Bedrock channel's credentials, in one of two key forms:

- `AccessKeyId|SecretAccessKey|Region`: every request is signed with SigV4 (service `bedrock`), so
  the secret key never leaves the process;
- `BedrockApiKey|Region`: an Amazon Bedrock API key, sent as `Authorization: Bearer <key>`
  (docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html). Long-term keys start with
  `ABSK`, short-term ones with `bedrock-api-key-`; Bedrock refuses any other with a 403.

The region picks the runtime's host (`bedrock-runtime.{region}.amazonaws.com`) and the geography of
the inference profiles (models.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from api.upstream.base import RelayMeta, UpstreamContext, UpstreamRequest
from api.upstream.errors import RelayError
from api.upstream.signing import sigv4

REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")
NO_SPACE = re.compile(r"^\S+$")
API_KEY_PREFIXES = ("ABSK", "bedrock-api-key-")
KEY_MESSAGE = "channel_key_bedrock"  # api/i18n: the two forms, with an example of each


@dataclass(frozen=True, slots=True)
class Credentials:
    region: str
    access_key: str = ""
    secret_key: str = ""
    api_key: str = ""  # an Amazon Bedrock API key (Bearer) instead of the access key pair


def parse_key(key: str) -> Credentials | None:
    """The credentials of a channel key in either form; None when it is in neither."""
    parts = [p.strip() for p in key.strip().split("|")]
    if not all(parts) or not all(NO_SPACE.match(p) for p in parts) or not REGION.match(parts[-1]):
        return None
    if len(parts) == 3:
        return Credentials(parts[2], access_key=parts[0], secret_key=parts[1])
    if len(parts) == 2 and parts[0].startswith(API_KEY_PREFIXES):
        return Credentials(parts[1], api_key=parts[0])
    return None


def key_problem(key: str) -> str | None:
    """The message key (api/i18n) saying why `key` is no Bedrock channel key; None when it is one."""
    return None if parse_key(key) is not None else KEY_MESSAGE


def key_region(key: str) -> str:
    """The region of a key (its last part), without checking the rest: enough for the profile's geography."""
    return key.rsplit("|", 1)[-1].strip() if "|" in key else ""


class BedrockAuth:
    """What both Bedrock adaptors share: the runtime's host and the request's authorization."""

    meta: RelayMeta
    base_url: str

    @property
    def credentials(self) -> Credentials:
        found = parse_key(self.meta.key)
        if found is None:
            raise RelayError(401, "the AWS Bedrock key must be AccessKeyId|SecretAccessKey|Region or "
                                  "BedrockApiKey|Region", "authentication_error", "invalid_api_key")
        return found

    def runtime_host(self) -> str:
        return self.base_url or f"https://bedrock-runtime.{self.credentials.region}.amazonaws.com"

    def model_region(self) -> str:
        """The region for the inference profile (a channel base URL needs no valid key to build the URL)."""
        return key_region(self.meta.key)

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        creds = self.credentials
        if creds.api_key:
            request.headers["Authorization"] = f"Bearer {creds.api_key}"
            return
        body = request.body if isinstance(request.body, bytes) else b""
        request.headers = sigv4.sign(request.method, request.url, request.headers, body,
                                     access_key=creds.access_key, secret_key=creds.secret_key, region=creds.region,
                                     service="bedrock", now=datetime.now(UTC))
