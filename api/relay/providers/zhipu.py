"""Zhipu GLM-4 / GLM-4V (type 26): OpenAI's format under `/api/paas/v4`, authorised by a JWT signed
from the key `id.secret` (api/relay/signing/zhipu.py), cached per channel key and renewed before it
expires."""
from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import ClassVar

from api.relay.base import RelayMode, UpstreamContext, UpstreamRequest
from api.relay.credentials import Credential
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.signing import zhipu
from models.enums import ChannelType

ZHIPU_V4_PATHS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "/api/paas/v4/chat/completions",
    RelayMode.EMBEDDINGS: "/api/paas/v4/embeddings",
    RelayMode.IMAGES: "/api/paas/v4/images/generations",
}


class ZhipuV4Adaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.ZHIPU_V4
    default_base_url: ClassVar[str] = "https://open.bigmodel.cn"
    paths: ClassVar[Mapping[RelayMode, str]] = ZHIPU_V4_PATHS
    models: ClassVar[tuple[str, ...]] = ("glm-4-plus", "glm-4-air", "glm-4-flash", "glm-4-long", "glm-4",
                                         "glm-4v-plus", "glm-4v", "glm-4v-flash", "embedding-3", "cogview-3-plus")

    def supports(self, mode: RelayMode) -> bool:
        return mode in ZHIPU_V4_PATHS

    def request_headers(self) -> dict[str, str]:
        return {}

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        key = self.meta.key

        async def sign() -> Credential:
            return zhipu.token(key, time.time())

        cache_key = "zhipu:" + hashlib.sha256(key.encode()).hexdigest()
        request.headers["Authorization"] = f"Bearer {await ctx.credentials.get(cache_key, sign)}"
