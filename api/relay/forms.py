"""A multipart request body (image edits, audio transcriptions and translations, videos) read and
checked before anything is counted, priced or charged: a form aiohttp cannot parse (no boundary, cut
short, a part compressed or encoded wrongly), a text field that is not text in its charset (or in a
charset nobody knows), or a name the upstream request could not carry is refused with 400
`invalid_request_error`; file parts are forwarded untouched.

Each route says what its form may carry (api/relay/form_shape.py: its text fields, its file parts,
how many parts in all), and the form is held to it as it is read, part by part: a part of a name the route
does not know is refused when it comes, not after the last one; one part past the route's count is
refused without reading further; a part's headers are bounded (a few lines, each of a few KiB); a
nested multipart part is refused. Reading gives the event loop a turn every few parts (parts that
arrived together are otherwise read in one go, every other request waiting)."""
from __future__ import annotations

import asyncio
import zlib
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from api.bodies import check_inflated
from api.relay.form_shape import FormShape
from api.relay.job import Form
from api.relay.refusals import refuse

# What parsing a malformed form raises: aiohttp's own ValueErrors (boundary missed, reading after
# EOF; UnicodeDecodeError and binascii.Error are ValueErrors too), a part's headers it cannot parse
# or that pass their bounds (HttpProcessingError: LineTooLong, BadHttpMessage), an unknown charset
# (LookupError), a part whose Content-Encoding does not decode (zlib.error), or one it has no decoder
# for (RuntimeError), a broken invariant of the reader on a body it did not expect (AssertionError).
# Only the parsing of the client's bytes is covered by this.
MALFORMED = (ValueError, HttpProcessingError, LookupError, zlib.error, RuntimeError, AssertionError)

CHUNK = 256 * 1024
PLAIN_ENCODINGS = frozenset({"", "identity", "binary", "7bit", "8bit"})
PART_HEADERS = 8  # header lines of one part: Content-Disposition, Content-Type and a few more
PART_HEADER_LINE = 4096  # bytes in one of them (a long file name included)
PREAMBLE_LINES = 16  # lines before the first boundary (no client sends any)
TURN_EVERY = 8  # parts read between two turns of the event loop
SHOWN_NAME = 64  # characters of an unknown name quoted back


class _Reader(aiohttp.MultipartReader):
    """aiohttp's reader, its lines outside the parts' headers and contents counted: the preamble
    before the first boundary is read line by line without bound otherwise. (`_readline` reads the
    preamble, each boundary and the epilogue's two lines; the parts' headers are read apart, within
    `max_headers` lines of `max_field_size` bytes.)"""

    multipart_reader_cls = aiohttp.MultipartReader  # a nested form: refused before it is read

    def __init__(self, request: web.Request, lines: int) -> None:
        super().__init__(request.headers, request.content, client_max_size=request.client_max_size,
                         max_field_size=PART_HEADER_LINE, max_headers=PART_HEADERS,
                         max_size_error_cls=web.HTTPRequestEntityTooLarge)
        self._lines_left = lines

    async def _readline(self) -> bytes:
        self._lines_left -= 1
        if self._lines_left < 0:
            raise ValueError("too many lines outside the parts")
        return await super()._readline()


def _utf8(text: str) -> bool:
    """Whether `text` can travel in the upstream request (no undecodable bytes kept as surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


async def _bounded(request: web.Request, part: aiohttp.BodyPartReader) -> bytes:
    """A part's bytes as sent, read while the request's whole body stays within its route's bound
    (a multipart body is streamed, not read by api.bodies.read_body: the bound is kept here)."""
    chunks: list[bytes] = []
    while chunk := await part.read_chunk(CHUNK):
        check_inflated(request, request.content.total_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def _invalid(request: web.Request, param: str, problem: str) -> Exception:
    err = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error", param=param,
                 problem=problem)
    err.param = param
    return err


def _unreadable(request: web.Request, shape: FormShape) -> Exception:
    if shape.file_required:
        return refuse(request, 400, "relay_invalid_form", "invalid_request_body", "invalid_request_error")
    return _invalid(request, "form", "not a multipart/form-data body that can be read")


async def read_form(request: web.Request, shape: FormShape) -> tuple[dict[str, Any], Form]:
    """(the text fields, the form) of a multipart request held to its route's `shape`."""
    if not request.content_type.startswith("multipart/"):
        raise _unreadable(request, shape)
    fields: dict[str, str] = {}
    files: list[tuple[str, str, str, bytes]] = []
    parts = 0
    try:
        reader = _Reader(request, shape.max_parts + PREAMBLE_LINES)
        while (part := await reader.next()) is not None:
            parts += 1
            if parts > shape.max_parts:
                raise _invalid(request, "form", f"at most {shape.max_parts} parts")
            if parts % TURN_EVERY == 0:
                await asyncio.sleep(0)
            if not isinstance(part, aiohttp.BodyPartReader):
                raise _invalid(request, "form", "a part is itself a multipart body")
            name = part.name
            if not name:
                continue
            if not _utf8(name):
                raise _invalid(request, "form", "a field name is not UTF-8")
            if name not in (shape.files if part.filename else shape.fields):
                problem = "unknown file parameter" if part.filename else "unknown parameter"
                raise _invalid(request, name[:SHOWN_NAME], problem)
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
    except HttpProcessingError:
        raise _invalid(request, "form", f"a part's headers cannot be read (at most {PART_HEADERS} lines, "
                                        f"each within {PART_HEADER_LINE} bytes)") from None
    except MALFORMED:
        raise _unreadable(request, shape) from None
    if shape.file_required and not files:
        raise _unreadable(request, shape)
    return dict(fields), Form(fields, files)
