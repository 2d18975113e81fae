"""Request bodies: how large each route's may be once inflated, which encodings are taken, and how a
body is read so that a bad one is a clear 400 or 413 in the route's own shape.

aiohttp inflates a `Content-Encoding: gzip|deflate` body in its HTTP parser as the handler reads it
(flow-controlled: what nobody reads is not inflated), and `request.read()` refuses a body whose
inflated size passes the request's `client_max_size`. What is added here:

- each route has its bound (`body_limit`): the console's bodies are small, the relay's may be large
  (and are read only once the key was checked); a request outside the relay gets a clone of itself
  bounded to its route's size, so `request.read()` stops inflating as soon as the bound is passed;
- a compressed body may inflate to at most MAX_RATIO times what came compressed (past RATIO_FLOOR):
  bounded by its route alone, 64 KB of gzip would make 63 MB to inflate and parse, with a key;
- a body its handler did not read to the end is not inflated after the answer. aiohttp drains what
  a handler left unread ("lingering", up to 10 s) and draining a compressed body means inflating all
  of it in one go, the event loop blocked: a 64 KB gzip body of 63 MB costs ~0.15 s of CPU even when
  it was refused unread. The drain ends at once instead and the connection is closed;
- `read_body` refuses an unknown encoding, a body that does not inflate and a body over the bound
  with an HTTPException whose reason says why: the console's and the relay's error middlewares
  shape those (envelope; OpenAI, Anthropic or Google error) — aiohttp's own decoding error would be
  a 500.
"""
from __future__ import annotations

import asyncio
import weakref

from aiohttp import hdrs, web
from aiohttp.compression_utils import HAS_BROTLI, HAS_ZSTD
from aiohttp.typedefs import Handler

from api.i18n import language
from api.static import API_ROOTS

MIB = 1024 * 1024
MAX_BODY = 64 * MIB  # the relay: audio uploads, images in base64, long prompts
# Token counts (free): Anthropic's own bound on a Messages request.
COUNT_MAX_BODY = 32 * MIB
COUNT_PATHS = ("/messages/count_tokens", ":countTokens")
CONSOLE_MAX_BODY = 1 * MIB  # any console form; a login or a registration is far smaller
# Console bodies that carry what an administrator pastes: channel keys in bulk, option values (the
# sensitive words, the model ratios of every model).
LARGE_CONSOLE_BODIES = {"/api/channel/": 4 * MIB, "/api/option/": 4 * MIB}
MCP_MAX_BODY = 4 * MIB  # one JSON-RPC message to /mcp: a tool's arguments
OTHER_MAX_BODY = 64 * 1024  # pages, health checks, metrics: no body is read
YIELD_EVERY = MIB  # a body being read gives the event loop a turn every MiB
LARGE_BODY = MIB  # a body this large takes turns with others to be parsed
# Inflated / compressed. Real bodies stay far below: JSON and source text compress 3-4 times with
# gzip (measured: 1.7 MB of prompt, 3.8), a long conversation repeating itself 15 times with zstd,
# media in base64 1.3 times, audio and image files not at all; gzip's limit is about 1030 and what
# reaches it is a run of one byte. Past the floor a body may inflate to no more than a hundred times
# what the client sent: 64 KB of gzip make 6.4 MB to parse at most, not 63.
MAX_RATIO = 100
RATIO_FLOOR = MIB  # what any body may inflate to, whatever its ratio
# Objects and arrays (`{` and `[`, counted in the bytes as they arrive, strings included) a body may
# hold. Parsing and then walking a body costs about 0.25 µs a container on the event loop: 63 MB of
# `[{},{},…]` stalled a process 5 s. Real bodies hold far fewer: a long agent conversation some
# thousands, a megabyte of source code pasted into a prompt some tens of thousands, base64 media none.
MAX_CONTAINERS = 1_000_000
RELAY_ROOTS = API_ROOTS - {"api"}  # the first path segments of the relay's routes

# What aiohttp's parser inflates (brotli and zstd with their libraries, both in requirements.txt:
# without them aiohttp itself would refuse such a request with a 400 before any handler runs).
ENCODINGS = frozenset({"identity", "gzip", "deflate"} | ({"br"} if HAS_BROTLI else set())
                      | ({"zstd"} if HAS_ZSTD else set()))

MESSAGES: dict[str, tuple[str, str]] = {
    "too_large": ("The request body is larger than {limit} once decompressed",
                  "请求体（解压后）超过 {limit}"),
    "too_compressed": (
        "The request body decompresses to more than {ratio} times its compressed size: send it uncompressed",
        "请求体解压后超过其压缩大小的 {ratio} 倍：请发送未压缩的请求体"),
    "too_many_containers": ("The request body holds more than {limit:,} JSON objects and arrays",
                            "请求体包含超过 {limit:,} 个 JSON 对象和数组"),
    "encoding_unsupported": (
        "Unsupported Content-Encoding {encoding}: send the body uncompressed, gzip, deflate, br or zstd",
        "不支持的 Content-Encoding {encoding}：请发送未压缩、gzip、deflate、br 或 zstd 的请求体"),
    "encoding_corrupt": ("The request body cannot be decompressed as {encoding}",
                         "请求体无法按 {encoding} 解压"),
    "charset_unsupported": ("Unsupported charset {charset}: send the body as UTF-8",
                            "不支持的字符集 {charset}：请以 UTF-8 发送请求体"),
    "not_utf8": ("The request body is not valid UTF-8", "请求体不是有效的 UTF-8 文本"),
}


def body_limit(path: str) -> int:
    """The largest body, once inflated, that the route of `path` reads."""
    root = path.split("/", 2)[1]
    if root == "mcp":
        return MCP_MAX_BODY
    if root in RELAY_ROOTS:
        return COUNT_MAX_BODY if path.endswith(COUNT_PATHS) else MAX_BODY
    if root == "api":
        return LARGE_CONSOLE_BODIES.get(path, CONSOLE_MAX_BODY)
    return OTHER_MAX_BODY


def message(request: web.Request, key: str, **params: object) -> str:
    """One of MESSAGES in the request's language."""
    english, chinese = MESSAGES[key]
    return (chinese if language(request) == "zh" else english).format(**params)


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n // 1024} KiB"


def shown(value: str) -> str:
    """A header value an attacker chose, safe to put in a message: printable ASCII, short."""
    return repr("".join(c if " " <= c <= "~" else "?" for c in value[:40]))


def too_large(request: web.Request) -> web.HTTPRequestEntityTooLarge:
    limit = request.client_max_size
    return web.HTTPRequestEntityTooLarge(limit, reason=message(request, "too_large", limit=_size(limit)))


def check_inflated(request: web.Request, size: int) -> None:
    """`size` bytes of the body inflated so far: 413 past the route's bound, or past MAX_RATIO times
    the bytes that came compressed (once past RATIO_FLOOR; a body sent as it is never is)."""
    if size > request.client_max_size:
        raise too_large(request)
    if size > RATIO_FLOOR and size > MAX_RATIO * request.content.total_raw_bytes:
        raise web.HTTPRequestEntityTooLarge(request.client_max_size, size, reason=message(
            request, "too_compressed", ratio=MAX_RATIO))


async def read_body(request: web.Request) -> bytes:
    """The request's body, inflated, within its route's bound; `request.read()` gives the same
    bytes afterwards. Refusals are HTTPExceptions with a clear reason: 400 for an unknown encoding
    or a body that does not inflate, 413 past the bound or the ratio (check_inflated), or holding
    more than MAX_CONTAINERS objects and arrays.

    Read here rather than by `request.read()`, which raises the stream's buffer to the whole bound
    (measured with the relay's 64 MiB: 125 MiB inflated from 300 KB of gzip and 270 MB more resident
    before it refused): the parser inflates 64 KiB at a time as this reads, so no more than the
    bound and a chunk is inflated, and a long body gives the event loop a turn every MiB. A large
    body then waits for its turn (`_large_body_turn`) before it goes to its parser."""
    encoding = request.headers.get(hdrs.CONTENT_ENCODING, "")
    if encoding and encoding.strip().lower() not in ENCODINGS:
        raise web.HTTPBadRequest(reason=message(request, "encoding_unsupported", encoding=shown(encoding)))
    limit = request.client_max_size
    length = request.content_length
    if length is not None and length > limit:
        raise too_large(request)
    if request.content.at_eof():  # read before, or empty
        return await request.read()
    chunks: list[bytes] = []
    size = containers = 0
    turn = YIELD_EVERY
    try:
        while chunk := await request.content.readany():
            size += len(chunk)
            check_inflated(request, size)
            containers += chunk.count(b"{") + chunk.count(b"[")
            if containers > MAX_CONTAINERS:
                raise web.HTTPRequestEntityTooLarge(limit, size, reason=message(
                    request, "too_many_containers", limit=MAX_CONTAINERS))
            chunks.append(chunk)
            if size >= turn:
                turn += YIELD_EVERY
                await asyncio.sleep(0)
    except web.RequestPayloadError:
        if not encoding:
            raise
        raise web.HTTPBadRequest(reason=message(request, "encoding_corrupt", encoding=shown(encoding))) from None
    if size >= LARGE_BODY:
        await _large_body_turn()
    request._read_bytes = raw = b"".join(chunks)  # what request.read() answers from now on
    return raw


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


async def _large_body_turn() -> None:
    """One large body a loop iteration goes on to be parsed (JSON: ~14 ms for 11 MB, in the event
    loop). Bodies that arrive together would be parsed one after the other in one iteration, every
    other request waiting for all of them; taking turns, the loop polls its sockets between two."""
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    await lock.acquire()
    loop.call_soon(lock.release)  # next iteration: after this body's parse, which follows at once


def _stop_inflating(request: web.Request, answer: web.StreamResponse | None) -> None:
    """The answer is given and part of a compressed body is unread: the connection closes after it
    instead of aiohttp inflating the rest to drain it. The drain stops at once because it reads the
    body under a timeout and ends quietly on a TimeoutError (its lingering time being over)."""
    payload = request.content
    if payload.is_eof():
        return
    if answer is not None and not answer.prepared:
        answer.force_close()  # `Connection: close`: the client does not send a next request on it
    payload.set_exception(TimeoutError())


@web.middleware
async def bodies_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The route's bound on the inflated body; no inflating of what a handler left unread."""
    if not request.body_exists:
        return await handler(request)
    limit = body_limit(request.path)
    if limit != request.client_max_size:
        request = request.clone(client_max_size=limit)
    if hdrs.CONTENT_ENCODING not in request.headers:
        return await handler(request)
    answer: web.StreamResponse | None = None
    try:
        answer = await handler(request)
        return answer
    except web.HTTPException as exc:
        answer = exc
        raise
    finally:
        _stop_inflating(request, answer)


def setup_bodies(app: web.Application) -> None:
    app.middlewares.append(bodies_middleware)
