"""OpenAI-format providers that need more than a catalogue row: a rerank endpoint beside OpenAI's,
a balance endpoint of their own, or URLs built from the channel's settings. The plain ones (their
own base URL, paths or endpoints, nothing else) are rows of api/upstream/catalogue.py."""

from __future__ import annotations

from typing import Any, ClassVar

from api.upstream.balance import BalanceMixin, BalanceQueryError, Fetch, balance_number
from api.upstream.base import RelayMode
from api.upstream.endpoints import RerankMixin
from api.upstream.providers.openai import OpenAIAdaptor


class RerankingAdaptor(RerankMixin, OpenAIAdaptor):
    """OpenAI's format plus a `/v1/rerank` endpoint (Jina's and Cohere's `results` shape)."""


class SiliconFlowAdaptor(RerankingAdaptor):
    async def query_balance(self, fetch: Fetch) -> float:
        data = await fetch(self.get(f"{self.base_url}/v1/user/info"))
        return balance_number((data.get("data") or {}).get("totalBalance"), "totalBalance")


# The reference's resellers: OpenAI's format, each with its own balance endpoint.


class AIProxyBalanceMixin(BalanceMixin):
    """AIProxy's account overview (its OpenAI-compatible API and its knowledge-base API share it)."""

    balance_base_url: ClassVar[str] = "https://aiproxy.io"

    async def query_balance(self: Any, fetch: Fetch) -> float:
        base = self.meta.base_url.rstrip("/") or self.balance_base_url
        data = await fetch(self.get(f"{base}/api/report/getUserOverview", {"Api-Key": self.meta.key}))
        if not data.get("success"):
            raise BalanceQueryError(str(data.get("message") or "failed"))
        return balance_number((data.get("data") or {}).get("totalPoints"), "totalPoints")


class AIProxyAdaptor(AIProxyBalanceMixin, OpenAIAdaptor):
    pass


class API2GPTAdaptor(OpenAIAdaptor):
    remaining_field: ClassVar[str] = "total_remaining"

    async def query_balance(self, fetch: Fetch) -> float:
        data = await fetch(self.get(f"{self.base_url}/dashboard/billing/credit_grants"))
        return balance_number(data.get(self.remaining_field), self.remaining_field)


class AIGC2DAdaptor(API2GPTAdaptor):
    remaining_field: ClassVar[str] = "total_available"


class CloudflareAdaptor(OpenAIAdaptor):
    """Cloudflare Workers AI (type 39): OpenAI's format at
    `/client/v4/accounts/{account id}/ai/v1/…`; the account id is the channel's `other`."""

    def request_url(self, mode: RelayMode | None = None) -> str:
        task = "embeddings" if (mode or self.meta.mode) == RelayMode.EMBEDDINGS else "chat/completions"
        return f"{self.base_url}/client/v4/accounts/{self.meta.other.strip()}/ai/v1/{task}"
