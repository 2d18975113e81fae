"""The bare aiohttp pass-through proxy: the ceiling of this stack for a relay.

`python -m bench.proxy --port P --upstream http://127.0.0.1:U` forwards every request to the same path
on the upstream through one shared keep-alive ClientSession and streams the answer back chunk by chunk.
No auth, no billing, no logs: whatever the gateway costs above this is the price of its features.
"""
from __future__ import annotations

import argparse
import logging

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

SESSION = web.AppKey("session", aiohttp.ClientSession)
UPSTREAM = web.AppKey("upstream", str)
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
              "transfer-encoding", "upgrade", "host", "content-length"}


async def session_ctx(app: web.Application):
    app[SESSION] = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=30, ttl_dns_cache=300),
        auto_decompress=False,  # pass bytes through untouched
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=300),
        skip_auto_headers=("User-Agent",))
    yield
    await app[SESSION].close()


async def proxy(request: web.Request) -> web.StreamResponse:
    headers = CIMultiDict((k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP)
    body = await request.read()
    async with request.app[SESSION].request(request.method, request.app[UPSTREAM] + request.path_qs, data=body,
                                            headers=headers) as up:
        resp = web.StreamResponse(status=up.status, reason=up.reason)
        for k, v in up.headers.items():
            if k.lower() not in HOP_BY_HOP:
                resp.headers.add(k, v)
        if up.content_length is not None:
            resp.content_length = up.content_length  # no chunked re-encoding for sized bodies
        try:
            await resp.prepare(request)
            async for chunk in up.content.iter_any():  # forwards SSE chunks as they arrive
                await resp.write(chunk)
            await resp.write_eof()
        except ConnectionResetError:  # the client went away: leaving the block closes the upstream
            pass
        return resp


def create_app(upstream: str) -> web.Application:
    app = web.Application(client_max_size=16 * 1024 * 1024)
    app[UPSTREAM] = upstream.rstrip("/")
    app.cleanup_ctx.append(session_ctx)
    app.router.add_route("*", "/{tail:.*}", proxy)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import uvloop

    uvloop.install()
    web.run_app(create_app(args.upstream), host=args.host, port=args.port, access_log=None, print=None,
                backlog=4096)


if __name__ == "__main__":
    main()
