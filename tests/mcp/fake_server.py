"""A strict fake MCP server of the tests' own, built with the official SDK (`mcp` 2.x, MCPServer),
served on a local port by uvicorn over Streamable HTTP (`/mcp`) or the old HTTP+SSE transport
(`/sse`). It refuses (401) any request without the credential header the gateway must send, and
remembers the headers of every request (the client's `sk-` key must never reach it)."""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

from tests.helpers import free_port

CREDENTIAL = ("x-upstream-token", "upstream-secret-123456")


@dataclass
class FakeState:
    seen: list[dict[str, str]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    slow_started: asyncio.Event = field(default_factory=asyncio.Event)
    slow_cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    release_slow: asyncio.Event = field(default_factory=asyncio.Event)


def build(state: FakeState) -> MCPServer:
    server = MCPServer("fake")

    @server.tool(description="Add two numbers, reporting progress half-way")
    async def add(a: int, b: int, ctx: Context) -> str:
        state.calls.append(("add", {"a": a, "b": b}))
        await ctx.report_progress(50, 100, "half-way")
        return str(a + b)

    @server.tool(description="Echo a text")
    def echo(text: str) -> str:
        state.calls.append(("echo", {"text": text}))
        return text

    @server.tool(description="Always fails")
    def broken() -> str:
        state.calls.append(("broken", {}))
        raise ValueError(f"broken on purpose, credential {CREDENTIAL[1]}")

    @server.tool(description="Waits until released or cancelled")
    async def slow() -> str:
        state.calls.append(("slow", {}))
        state.slow_started.set()
        try:
            await state.release_slow.wait()
        except asyncio.CancelledError:
            state.slow_cancelled.set()
            raise
        return "released"

    @server.tool(description="Answers more than a small bound")
    def big(size: int) -> str:
        return "x" * size

    @server.resource("memo://hello", description="A greeting")
    def hello() -> str:
        return "hello from the fake"

    @server.prompt(description="Greets someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


class RequireCredential:
    """ASGI middleware: 401 without the credential header; every request's headers remembered."""

    def __init__(self, app: Any, state: FakeState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.state.seen.append(headers)
            if headers.get(CREDENTIAL[0]) != CREDENTIAL[1]:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing credential"})
                return
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def serve(transport: str = "streamable_http") -> AsyncIterator[tuple[str, FakeState]]:
    """(the server's URL, its state) while it runs on a free local port."""
    state = FakeState()
    server = build(state)
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    port = free_port()
    config = uvicorn.Config(RequireCredential(app, state), host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on")
    runner = uvicorn.Server(config)
    runner.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]  # pytest keeps its own
    task = asyncio.create_task(runner.serve())
    while not runner.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    path = "/sse" if transport == "sse" else "/mcp"
    try:
        yield f"http://127.0.0.1:{port}{path}", state
    finally:
        state.release_slow.set()
        runner.should_exit = runner.force_exit = True  # the gateway may still hold an SSE stream open
        await task
