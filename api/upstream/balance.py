"""Channel balances: providers with a balance endpoint mix in `BalanceMixin`; its query builds GET
requests and has them sent through the seam by the caller's `fetch` (api/channels/queries.py)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from api.upstream.base import UpstreamRequest


class BalanceQueryError(Exception):
    """A balance query that failed; `message` is safe to show (no key)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# GET a JSON object through the seam (authorize, send, status and JSON checks); raises BalanceQueryError.
Fetch = Callable[[UpstreamRequest], Awaitable[dict[str, Any]]]


def balance_number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise BalanceQueryError(f"no {what} in the answer") from exc


class BalanceMixin:
    """The provider has a balance endpoint: `query_balance(fetch)` builds its GET requests (usually
    with `get`), has them sent by `fetch` and returns the remaining balance (USD for OpenAI's
    billing API, the provider's own unit otherwise). Whether it works today is the catalogue's
    `balance`."""

    def has_balance(self: Any) -> bool:
        return bool(self.provider and self.provider.balance)

    def get(self: Any, url: str, headers: Mapping[str, str] | None = None) -> UpstreamRequest:
        return UpstreamRequest(url, dict(self.request_headers() if headers is None else headers), None, "GET")

    async def query_balance(self, fetch: Fetch) -> float:
        raise NotImplementedError
