"""A multipart request body (audio transcriptions and translations) read and checked before anything
is counted, priced or charged: a form aiohttp cannot parse (no boundary, cut short, a part compressed
or encoded wrongly), a text field that is not text in its charset (or in a charset nobody knows), or
a name the upstream request could not carry is refused with 400 `invalid_request_error`; file parts
are forwarded untouched."""
from __future__ import annotations

import zlib
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from api.bodies import too_large
from api.relay.job import Form, refuse

# What parsing a malformed form raises: aiohttp's own ValueErrors (boundary missed, reading after
# EOF; UnicodeDecodeError and binascii.Error are ValueErrors too), a part's headers it cannot parse
# (HttpProcessingError), an unknown charset (LookupError), a part whose Content-Encoding does not
# decode (zlib.error), or one it has no decoder for (RuntimeError), a broken invariant of the reader on
# a body it did not expect (AssertionError). Only the parsing of the client's bytes is covered by this.
MALFORMED = (ValueError, HttpProcessingError, LookupError, zlib.error, RuntimeError, AssertionError)


def _utf8(text: str) -> bool:
    """Whether `text` can travel in the upstream request (no undecodable bytes kept as surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


CHUNK = 256 * 1024
PLAIN_ENCODINGS = frozenset({"", "identity", "binary", "7bit", "8bit"})


async def _bounded(request: web.Request, part: aiohttp.BodyPartReader) -> bytes:
    """A part's bytes as sent, read while the request's whole body stays within its route's bound
    (a multipart body is streamed, not read by api.bodies.read_body: the bound is kept here)."""
    chunks: list[bytes] = []
    while chunk := await part.read_chunk(CHUNK):
        if request.content.total_bytes > request.client_max_size:
            raise too_large(request)
        chunks.append(chunk)
    return b"".join(chunks)


def _invalid(request: web.Request, param: str, problem: str) -> Exception:
    err = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error", param=param,
                 problem=problem)
    err.param = param
    return err


async def read_form(request: web.Request) -> tuple[dict[str, Any], Form]:
    """(the text fields, the form) of a multipart request with at least one file part."""
    if not request.content_type.startswith("multipart/"):
        raise refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error")
    fields: dict[str, str] = {}
    files: list[tuple[str, str, str, bytes]] = []
    try:
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, aiohttp.BodyPartReader) or not part.name:
                continue
            name = part.name
            if not _utf8(name):
                raise _invalid(request, "form", "a field name is not UTF-8")
            encodings = {part.headers.get(h, "").strip().lower() for h in
                         ("Content-Encoding", "Content-Transfer-Encoding")}
            if not encodings <= PLAIN_ENCODINGS:  # nothing is inflated or decoded on the gateway's side
                raise _invalid(request, name, "a part's Content-Encoding is not supported")
            if part.filename:
                content_type = part.headers.get("Content-Type", "application/octet-stream")
                if not (_utf8(part.filename) and content_type.isascii()):
                    raise _invalid(request, name, "the file name or content type is not UTF-8")
                files.append((name, part.filename, content_type, await _bounded(request, part)))
                continue
            try:
                fields[name] = (await _bounded(request, part)).decode(part.get_charset(default="utf-8"))
            except (UnicodeDecodeError, LookupError):
                raise _invalid(request, name, "not text in its charset") from None
    except MALFORMED:
        raise refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error") from None
    if not files:
        raise refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error")
    return dict(fields), Form(fields, files)
