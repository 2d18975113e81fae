"""Soft limits' alerts (see api.services.budgets.alerts).

    budget.alert(user_id, owner_kind, owner_id, identity, window_start, measure, amount, claim)
    budget.webhook(body)
    budget.sweep(sent_at, sender)

`budget.alert` claims one limit's alert in its window and sends its mails (mail.send) and its webhook
(budget.webhook); the settlement worker sends it for the windows it just added to
(`after_settlement`), the scheduler's budget.sweep for any crossing left unclaimed in an open window.

`budget.webhook` POSTs the alert to BudgetWebhookUrl with its signature, under the policy of
user-supplied URLs (api.upstream.media: http or https, every address of the host public unless
MediaFetchPrivateEnabled, the connection pinned to the addresses checked, no redirect followed),
within WEBHOOK_TIMEOUT seconds; the answer's body is not read. Anything but a 2xx is retried with
Dramatiq's back-off, each attempt signed with its own timestamp.
"""
from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Iterable
from urllib.parse import urlsplit

import aiohttp
import dramatiq
from dramatiq import Retry

from api.resources import Resources
from api.services.budgets import alerts, durable
from api.services.queues import Queue
from api.upstream import media
from api.upstream.errors import RelayError
from workers.context import ctx

log = logging.getLogger(__name__)
WEBHOOK_TIMEOUT = 10.0  # seconds an attempt may take, connection included
_soft_limits = alerts.SoftLimits()  # the process's cache of owners' soft limits (the settlement hook)


def new_claim() -> str:
    return secrets.token_hex(8)


async def send_due(resources: Resources, found: Iterable[alerts.Due]) -> int:
    """One budget.alert per due alert, each with a claim of its own."""
    count = 0
    for due in found:
        await resources.jobs.send("budget.alert", *due.args(), new_claim())
        count += 1
    return count


async def after_settlement(resources: Resources, windows: set[durable.Window]) -> None:
    """The settlement worker's check, once its transaction is committed: the alerts due in the
    windows it added to. A failure here is left to the sweep (the settlement itself is done)."""
    try:
        await send_due(resources, await alerts.due(windows, resources.options.get("GroupLimits") or "",
                                                   _soft_limits))
    except Exception:
        log.exception("budget alerts of %d window(s) not checked (left to budget.sweep)", len(windows))


async def raise_alert(user_id: int, owner_kind: str, owner_id: str, identity: str, window_start: int,
                      measure: str, amount: int, claim: str) -> None:
    """The actor's body (tests call it directly)."""
    context = ctx()
    found = alerts.Due(int(user_id), owner_kind, owner_id, identity, int(window_start), measure, int(amount))
    alert = await alerts.prepare(context.options, found, claim)
    if alert is None:
        return
    for to, subject, text in alert.mails:
        await context.jobs.send("mail.send", to, subject, text)
    if context.options.get("BudgetWebhookUrl"):
        await context.jobs.send("budget.webhook", alert.body)


async def post(url: str, body: bytes, headers: dict[str, str], allow_private: bool) -> int:
    """POST under the URL policy; the answer's status. RelayError when the policy refuses the URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise media.refuse("only http and https URLs can be used")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    async with asyncio.timeout(WEBHOOK_TIMEOUT):
        checked = await media.checked_addresses(parts.hostname, port, allow_private)
        connector = aiohttp.TCPConnector(resolver=media.PinnedResolver(checked), use_dns_cache=False,
                                         force_close=True)
        async with aiohttp.ClientSession(connector=connector) as http, \
                http.post(url, data=body, headers=headers, allow_redirects=False) as resp:
            return resp.status


async def deliver_webhook(body: str) -> None:
    """The actor's body (tests call it directly): one signed attempt; Retry on any failure."""
    options = ctx().options
    url = options.get("BudgetWebhookUrl")
    if not url:
        log.info("budget webhook dropped: BudgetWebhookUrl is not set")
        return
    raw = body.encode()
    headers = alerts.signed_headers(options.get("BudgetWebhookSecret"), int(alerts.clock()), raw)
    host = urlsplit(url).hostname or "?"
    try:
        status = await post(url, raw, headers, options.get_bool("MediaFetchPrivateEnabled"))
    except RelayError as exc:
        why = str(exc.message).removeprefix("image URL refused: ")
        log.warning("budget webhook to %s refused (%s); retrying", host, why)
        raise Retry() from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        log.warning("budget webhook to %s failed (%s); retrying", host, type(exc).__name__)
        raise Retry() from None
    if not 200 <= status < 300:
        log.warning("budget webhook to %s answered %d; retrying", host, status)
        raise Retry() from None


async def sweep_alerts(sent_at: float = 0, sender: str = "") -> int:
    """The actor's body: every crossing left unclaimed in an open window gets its budget.alert."""
    context = ctx()
    return await send_due(context, await alerts.sweep(context.options.get("GroupLimits") or "", alerts.clock()))


alert = dramatiq.actor(actor_name="budget.alert", queue_name=Queue.BUDGET, max_retries=5, min_backoff=1_000,
                       max_backoff=60_000)(raise_alert)
# 11 attempts over roughly 15 to 25 minutes (1 s, 2 s, 4 s … with jitter, at most 5 minutes apart), within the
# broker's one-hour age limit.
webhook = dramatiq.actor(actor_name="budget.webhook", queue_name=Queue.BUDGET, max_retries=10, min_backoff=1_000,
                         max_backoff=300_000)(deliver_webhook)
sweep = dramatiq.actor(actor_name="budget.sweep", queue_name=Queue.BUDGET, max_retries=0)(sweep_alerts)
