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
            if part.filename:
                content_type = part.headers.get("Content-Type", "application/octet-stream")
                if not (_utf8(part.filename) and content_type.isascii()):
                    raise _invalid(request, name, "the file name or content type is not UTF-8")
                files.append((name, part.filename, content_type, bytes(await part.read())))
                continue
            try:
                fields[name] = await part.text()
            except (UnicodeDecodeError, LookupError):
                raise _invalid(request, name, "not text in its charset") from None
    except MALFORMED:
        raise refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error") from None
    if not files:
        raise refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error")
    return dict(fields), Form(fields, files)
