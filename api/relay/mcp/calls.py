"""One MCP tool call's bill, through the relay's own reservation path (docs/billing.md): the
server's price per call reserved before the call is sent, together with the rate limits (a call
counts against the key's, user's and group's requests per minute) in the pre-charge script of
api.services.billing.quota; then settled at the price with a settlement record (the workers write
its consume log row and the key's, user's and hourly totals) when the server answered a result, or
refunded in full when it did not (an error, a timeout, a cancellation, a result the tool marked
`isError`, an answer too large), with an error log row. The reservation is renewed by this
process while the call runs; if the process dies, the sweep closes it as a refund (no output was
checkpointed): a call is charged once or refunded, never both.

The log row's `other.mcp` says what was called: server, tool, status, duration_ms, price, and,
with McpLogBodiesEnabled, the arguments and the result masked and cut to LOG_BODY_BYTES each.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from api import keys
from api.mcp.access import Grant
from api.relay.admission import limits_of
from api.relay.auth import TokenInfo, UserInfo
from api.relay.budgets import rules_for, time_zone_of, windows_for
from api.relay.failure_log import NOT_LOGGED_CODES
from api.relay.quota_refusals import PRE_CHARGE_REFUSALS, refusal_of
from api.relay.settling import SETTLE_RETRY_FOR
from api.relay.state import RelayState
from api.services.billing.quota import Charge
from api.services.billing.records import TokenUsage, encode_reservation, encode_settlement
from api.services.billing.request_facts import RequestFacts, new_settlement_id
from api.services.error_logs import SEND, SEND_DELAY_MS, ErrorLogQueue, ErrorRow
from api.services.mcp_names import prefixed
from api.services.model_name import ModelName
from api.upstream.masking import mask_secrets

log = logging.getLogger("api.relay.mcp")
LOG_BODY_BYTES = 4096


class CallRefused(Exception):
    """The pre-charge refused the call: `reason` (rate_limited, budget_exceeded, user_insufficient, key_insufficient,
    key_exhausted, user_in_flight, key_in_flight, balance_unavailable) and what the client is told."""

    def __init__(self, reason: str, message_key: str, retry_after: int = 0, **params: object) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message_key = message_key
        self.retry_after = retry_after
        self.params = params


@dataclass(slots=True)
class ToolCall:
    """One admitted call: who, what, the reservation, and what the log row will say."""

    state: RelayState
    user: UserInfo
    token: TokenInfo
    group: str
    grant: Grant
    tool: str
    arguments: dict[str, Any]
    facts: RequestFacts
    charge: Charge
    client_request_id: str
    started: float = field(default_factory=time.monotonic)

    @property
    def price(self) -> int:
        return self.grant.server.price

    def _mcp(self, status: str, result: Any = None) -> dict[str, Any]:
        server = self.grant.server
        info: dict[str, Any] = {"server": server.name, "server_id": server.id, "tool": self.tool, "status": status,
                                "duration_ms": int((time.monotonic() - self.started) * 1000), "price": self.price}
        if self.state.options.get_bool("McpLogBodiesEnabled"):
            info["arguments"] = self._body(self.arguments)
            if result is not None:
                info["result"] = self._body(result)
        return info

    def _body(self, value: Any) -> str:
        text = orjson.dumps(value).decode(errors="replace")
        masked = mask_secrets(text[: LOG_BODY_BYTES * 2], self.grant.server.secrets, self.grant.server.url)
        return masked[:LOG_BODY_BYTES] + ("…" if len(masked) > LOG_BODY_BYTES else "")

    async def succeeded(self, result: dict[str, Any]) -> None:
        """Charge the price (user and key), record the call (one consume log row)."""
        self.facts.routing = {"mcp": self._mcp("ok", result)}
        record = encode_settlement(self.facts, self.price, TokenUsage())
        await self._settle(self.price, record)
        self.state.metrics.mcp_call(self.grant.server.name, "ok")

    async def failed(self, status: str, message: str, http_status: int = 502, result: Any = None) -> None:
        """Refund the reservation in full and queue the call's error log row."""
        await self._settle(0, None)
        self.state.metrics.mcp_call(self.grant.server.name, status)
        row = ErrorRow(
            request_id=self.facts.request_id, user_id=self.user.id, username=self.user.username,
            token_id=self.token.id, token_name=self.token.name, model=self.facts.model, group=self.group,
            status=http_status, message=mask_secrets(message, self.grant.server.secrets, self.grant.server.url),
            error_type="mcp_error", error_code=f"mcp_{status}",
            use_time=int(time.monotonic() - self.started), path="/mcp", client_request_id=self.client_request_id,
            mcp=self._mcp(status, result))
        self.state.spawn(queue_error_row(self.state, row))

    async def _settle(self, final: int, record: bytes | None) -> None:
        state = self.state
        try:
            await state.quota.settle(self.charge, final, record, 0)
        except Exception as exc:  # Redis away: sent again in the background, else the sweep refunds it
            log.warning("MCP call %s not settled (%r): sent again until Redis answers", self.facts.request_id, exc)
            state.spawn(self._settle_later(final, record))
            return
        state.keeper.release(self.facts.request_id)
        if record is not None:
            state.settlements.mark(self.charge.user_id)

    async def _settle_later(self, final: int, record: bytes | None) -> None:
        delay, deadline = 0.25, time.monotonic() + SETTLE_RETRY_FOR
        while time.monotonic() < deadline:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 15.0)
            try:
                await self.state.quota.settle(self.charge, final, record, 0)
            except Exception:
                continue
            self.state.keeper.release(self.facts.request_id)
            if record is not None:
                self.state.settlements.mark(self.charge.user_id)
            return
        log.error("MCP call %s still not settled: left to the sweep", self.facts.request_id)


_queues: dict[int, ErrorLogQueue] = {}


async def queue_error_row(state: RelayState, row: ErrorRow) -> None:
    if row.error_code in NOT_LOGGED_CODES:
        return
    store = state.quota.store
    queue = _queues.get(id(store))
    if queue is None:
        queue = _queues[id(store)] = ErrorLogQueue(store)
    try:
        if await queue.push(row) == SEND:
            if state.jobs is not None:
                await state.jobs.send("logs.write_errors", delay_ms=SEND_DELAY_MS)
    except Exception as exc:  # Redis away: the client has its answer; the row is not kept
        log.warning("error log row of MCP call %s not queued: %r", row.request_id, exc)


async def admit(request: web.Request, state: RelayState, user: UserInfo, token: TokenInfo, group: str,
                grant: Grant, tool: str, arguments: dict[str, Any]) -> ToolCall:
    """Reserve the call's price and count it against the rate limits, in one Redis call."""
    server = grant.server
    per_unit = state.options.get_int("QuotaPerUnit") or 1
    facts = RequestFacts(
        request_id=new_settlement_id(request.get(keys.REQUEST_ID, "")), user_id=user.id, username=user.username,
        token_id=token.id, token_name=token.name, token_limited=not token.unlimited, group=group,
        name=ModelName(prefixed(server.name, tool)), mode="mcp", model_price=server.price / per_unit,
        started=time.time(), inbound="mcp")
    # the limits over time of key, user and group count the call too (its model: `<server>__<tool>`)
    rules = rules_for(state.options, token, user, prefixed(server.name, tool))
    windows = windows_for(state.quota, user.id, rules, time_zone_of(state.options)) if rules else []
    try:
        charge = await state.quota.pre_charge(
            settlement_id=facts.request_id, user_id=user.id, token_id=token.id, token_limited=not token.unlimited,
            pre=server.price, group=group, limits=limits_of(state.options),
            reservation=encode_reservation(facts, server.price, 0, [w.wire() for w in windows]), windows=windows)
        facts.windows = [w.wire() for w in charge.windows]
    except PRE_CHARGE_REFUSALS as exc:
        refusal = refusal_of(exc, state.quota, state.metrics, state.options, token, user)
        raise CallRefused(refusal.reason, refusal.message_key, refusal.retry_after, **refusal.params) from None
    state.keeper.hold(facts.request_id, user.id, lambda: (0, 0))
    return ToolCall(state, user, token, group, grant, tool, arguments, facts, charge,
                    request.get(keys.REQUEST_ID, ""))
