"""Response header values made of what a client or an upstream supplied, always sendable.

aiohttp refuses to write a header that holds a control character (CR and LF included), and a value
that is not UTF-8-encodable (an upstream's undecodable bytes) cannot be written at all: the answer
is then lost whole, after the upstream was called and the request charged. So a value that comes
from outside (a field name the client chose, an upstream's Content-Type) goes through here: every
byte outside printable ASCII is percent-encoded, and the value is bounded in length. The gateway's
own values (request ids, Retry-After, its fixed Content-Types) need none of it.
"""
from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

MAX_VALUE = 1024  # characters of one header value made of outside text
_PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))
_VALUE_SAFE = _PRINTABLE  # a value: printable ASCII as it is
_ITEM_SAFE = _PRINTABLE.replace("%", "").replace(",", "")  # an item of a list: its separator and '%' encoded too


def _encoded(text: str, safe: str) -> str:
    try:  # an upstream's undecodable bytes (read as surrogate escapes) encoded as the bytes they were
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte: '?'
        raw = b"".join(_char_bytes(c) for c in text)
    return quote(raw, safe=safe)


def _char_bytes(char: str) -> bytes:
    try:
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return b"?"


def _bounded(text: str, safe: str, limit: int) -> str:
    """`text` encoded, cut to `limit` characters between two of its characters (never inside an escape,
    nor inside a character's UTF-8 bytes)."""
    head = text[:limit]  # a character encodes to one output character at least
    value = _encoded(head, safe)
    if len(value) <= limit:
        return value
    kept: list[str] = []
    size = 0
    for char in head:
        piece = _encoded(char, safe)
        if size + len(piece) > limit:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept)


def header_value(text: str, limit: int = MAX_VALUE) -> str:
    """`text` as a header value: printable ASCII kept (so a safe value comes back unchanged), any other
    character percent-encoded as its UTF-8 bytes, at most `limit` characters."""
    return _bounded(text, _VALUE_SAFE, limit)


def header_item(text: str) -> str:
    """One item of a comma-separated header list: as header_value, with ',' and '%' encoded too, so
    the list splits back into its items and each decodes to what it was (urllib.parse.unquote)."""
    return _encoded(text, _ITEM_SAFE)


def header_list(items: Iterable[str], limit: int = MAX_VALUE) -> str:
    """Distinct `items` (header_item each) joined with ',', as many whole ones as fit in `limit`
    characters; when some are left out, the last item says how many (`+3 more`)."""
    encoded = [header_item(i) for i in dict.fromkeys(items)]
    kept: list[str] = []
    size = 0
    for n, item in enumerate(encoded):
        rest = len(encoded) - n - 1
        reserve = len(f",+{len(encoded)} more") if rest else 0  # room to say what did not fit
        if size + len(item) + (1 if kept else 0) + reserve > limit:
            kept.append(f"+{len(encoded) - n} more")
            break
        kept.append(item)
        size += len(item) + (1 if len(kept) > 1 else 0)
    return ",".join(kept)
