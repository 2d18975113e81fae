"""A recording pass-through in front of a fake upstream: the gateway's channel points here, every
request and the upstream's whole answer (JSON or event stream, bytes as sent) are kept, so the tests
read what the provider received and what it emitted in the provider's own terms, whichever fake
plays the provider."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web

# Headers that belong to one connection (or that would let the answer come back compressed).
HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "accept-encoding",
                         "keep-alive"})


@dataclass
class Exchange:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int
    content_type: str
    raw: bytes

    @property
    def streamed(self) -> bool:
        return self.content_type.startswith("text/event-stream")

    def payloads(self) -> list[dict[str, Any]]:
        """The answer's JSON objects: the one body, or every `data:` frame of a stream (not [DONE])."""
        if not self.streamed:
            return [orjson.loads(self.raw)]
        found = []
        for line in self.raw.decode().splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                found.append(orjson.loads(line[5:].strip()))
        return found


@dataclass
class Recorder:
    target: str  # the fake's root URL
    exchanges: list[Exchange] = field(default_factory=list)
    session: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.forward)
        return app

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    async def forward(self, request: web.Request) -> web.Response:
        if self.session is None:
            self.session = aiohttp.ClientSession(auto_decompress=False)
        raw_request = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        async with self.session.request(request.method, self.target + request.path_qs, data=raw_request,
                                        headers=headers) as upstream:
            raw = await upstream.read()
            content_type = upstream.headers.get("Content-Type", "application/json")
        body = orjson.loads(raw_request) if raw_request else None
        self.exchanges.append(Exchange(request.path, dict(request.query), dict(request.headers), body,
                                       upstream.status, content_type, raw))
        return web.Response(body=raw, status=upstream.status, headers={"Content-Type": content_type})

    def turns(self) -> list[Exchange]:
        """The conversation's exchanges (embedding, token-count and model-list calls left out)."""
        return [e for e in self.exchanges if isinstance(e.body, dict) and e.path.rsplit(":", 1)[-1] not in (
            "countTokens", "batchEmbedContents")]
