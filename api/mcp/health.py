"""The health of the registered MCP servers, checked with the channel monitor's periodic run
(workers.actors.channel `channel.test_all`): each server that is not disabled by hand lists its
tools; one that fails is marked down (status 3, the masked reason kept) when
AutomaticDisableChannelEnabled is on, and one marked down that answers again is brought back when
AutomaticEnableChannelEnabled is on — as channels are. Every change is logged and told to all
processes (an `mcp_server` event)."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from api.mcp import admin
from api.mcp.client import McpClient
from api.mcp.registry import server_info
from api.mcp.wire import McpError
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from models import McpServer
from models.enums import ChannelStatus

log = logging.getLogger(__name__)
CONCURRENCY = 5


@dataclass
class HealthSummary:
    checked: int = 0
    failed: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    enabled: list[str] = field(default_factory=list)


async def check_server(client: McpClient, events: EventBus | None, options: OptionsService, row: McpServer,
                       summary: HealthSummary) -> None:
    info = server_info(row)
    started = time.monotonic()
    reason = ""
    count = 0
    try:
        count = len(await client.list_tools(info))
    except McpError as exc:
        reason = f"{exc.kind}: {exc.message}"[:500]
    elapsed = int((time.monotonic() - started) * 1000)
    summary.checked += 1
    update: dict[str, object] = {"test_time": int(time.time()), "response_time": elapsed}
    if reason:
        summary.failed.append(row.name)
        if row.status == ChannelStatus.ENABLED and options.get_bool("AutomaticDisableChannelEnabled"):
            update.update(status=int(ChannelStatus.AUTO_DISABLED), status_reason=reason)
            summary.disabled.append(row.name)
            log.warning("MCP server %s (#%d) is down, disabled: %s", row.name, row.id, reason)
        else:
            log.info("MCP server %s (#%d) failed its check: %s", row.name, row.id, reason)
    else:
        update["tool_count"] = count
        if row.status == ChannelStatus.AUTO_DISABLED and options.get_bool("AutomaticEnableChannelEnabled"):
            update.update(status=int(ChannelStatus.ENABLED), status_reason="")
            summary.enabled.append(row.name)
            log.warning("MCP server %s (#%d) answers again (%d tools), enabled", row.name, row.id, count)
    changed = await McpServer.filter(id=row.id, status=row.status).update(**update)
    if changed and "status" in update and events is not None:
        await admin.announce(events, row.id)


async def check_all(options: OptionsService, events: EventBus | None, client: McpClient | None = None) -> HealthSummary:
    """Check every server not disabled by hand (CONCURRENCY at a time)."""
    own = client is None
    client = client or McpClient(options)
    summary = HealthSummary()
    try:
        rows = await McpServer.exclude(status=int(ChannelStatus.MANUALLY_DISABLED))
        semaphore = asyncio.Semaphore(CONCURRENCY)

        async def one(row: McpServer) -> None:
            async with semaphore:
                await check_server(client, events, options, row, summary)

        await asyncio.gather(*(one(row) for row in rows))
    finally:
        if own:
            await client.close()
    return summary
