"""Baidu Qianfan V2 (type 46): OpenAI's format under `/v2` at qianfan.baidubce.com, one API key
(`bce-v3/ALTAK-…/…`) as a Bearer token, and the optional `appid` header of a Qianfan V2 app taken
from the channel's `other` field (cloud.baidu.com/doc/WENXINWORKSHOP/s/Zm2ycv77m).

Chat is `/v2/chat/completions` (stream_options.include_usage accepted: the usage comes in the last
chunk), embeddings `/v2/embeddings`, rerank `/v2/rerank` (cloud.baidu.com/doc/qianfan-api/s/Fm7u3ropn,
…/2m7u4zt74). Errors have OpenAI's shape, `{"error": {"code", "message", "type"}, "id"}`
(cloud.baidu.com/doc/qianfan-api/s/Om9b4yj3w); two of its 401s are not about the key and are
answered for what they are: a model the account may not use is the channel's 404 (the channel
lists a model its upstream does not serve: counted, retried elsewhere, not a reason to disable the
channel at once), a request parameter the account may not use is the client's 400."""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from api.upstream.base import RelayMeta, RelayMode, TokenUsage
from api.upstream.endpoints import RerankMixin
from api.upstream.errors import RelayError
from api.upstream.payloads import openai_error
from api.upstream.providers.openai import OpenAIAdaptor

# An API key as the Qianfan console shows it (a short-term key has the same prefix).
_KEY = re.compile(r"^bce-v3/\S+/\S+$")
# A Qianfan V2 app ID, e.g. `app-Mu4xq6` (it travels as an HTTP header value).
_APPID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def key_problem(key: str) -> str | None:
    """The i18n key of the refusal when `key` is not a Qianfan API key (V1's `APIKey|SecretKey`
    pair included: V1 is switched off), None when it is one."""
    return None if _KEY.match(key.strip()) else "channel_key_qianfan"


def other_problem(other: str) -> str | None:
    """The `other` field is the optional app ID sent as the `appid` header."""
    return None if not other.strip() or _APPID.match(other.strip()) else "channel_other_qianfan_appid"


class QianfanAdaptor(RerankMixin, OpenAIAdaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = {
        RelayMode.CHAT: "/v2/chat/completions",
        RelayMode.EMBEDDINGS: "/v2/embeddings",
        RelayMode.RERANK: "/v2/rerank",
    }

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        # The OpenAI SDKs' base URL in Qianfan's own docs ends in /v2: the paths carry it already.
        self.base_url = self.base_url.removesuffix("/v2")
        self.base64 = False  # the client asked for base64 embeddings, which Qianfan does not give


    def supports(self, mode: RelayMode) -> bool:
        return mode in self.paths

    def request_headers(self) -> dict[str, str]:
        headers = super().request_headers()
        if self.meta.other.strip():
            headers["appid"] = self.meta.other.strip()
        return headers

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Qianfan's `encoding_format` "当前只支持float" (only float): base64 (the openai SDKs' default)
        is asked as float and encoded here as OpenAI does (little-endian float32)."""
        body = super().convert_embeddings_request(req)
        self.base64 = body.get("encoding_format") == "base64"
        if self.base64:
            body["encoding_format"] = "float"
        return body

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if self.base64:
            for item in body.get("data") or []:
                vector = item.get("embedding") if isinstance(item, dict) else None
                if isinstance(vector, list):
                    item["embedding"] = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        return super().convert_embeddings_response(body)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        err = openai_error(status, body)
        if status == 401 and err.code == "invalid_model":  # "No permission to use the model"
            return RelayError(404, f"The model `{self.meta.model}` does not exist or you do not have access to it "
                                   f"({err.message})", "invalid_request_error", "model_not_found", "model")
        if status == 401 and err.code == "no_parameter_permission":
            return RelayError(400, err.message, "invalid_request_error", err.code)
        return err
