"""Hypothesis strategies of relay request bodies: a valid request of each format with some of its
fields (at any depth) replaced by any JSON value, removed, or joined by fields the gateway reads."""
from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

Path = tuple[str | int, ...]

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.floats(allow_nan=False,
                                                                                       allow_infinity=False),
                    st.text(max_size=8), st.sampled_from(["", "text", "user", "auto", "image/png", "0", "{}"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["type", "text", "role", "content", "name", "a", "parts", "url"]) | st.text(max_size=4),
    inner, max_size=3), max_leaves=6)


def paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path inside a JSON value (the value itself excluded)."""
    if isinstance(value, Mapping):
        items: Sequence[tuple[str | int, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return
    for key, inner in items:
        yield (*prefix, key)
        yield from paths(inner, (*prefix, key))


def _set(body: Any, path: Path, value: Any, remove: bool) -> None:
    for key in path[:-1]:
        body = body[key]
    if remove:
        del body[path[-1]]
    else:
        body[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn, base: Mapping[str, Any], extra: Sequence[str] = (),
            values: st.SearchStrategy[Any] = JSON, max_changes: int = 3) -> dict[str, Any]:
    """`base` with up to `max_changes` changes, each a field replaced by any JSON value or removed (a
    top-level field as often as one at any depth), or a top-level field from `extra` added."""
    body = copy.deepcopy(dict(base))
    for _ in range(draw(st.integers(0, max_changes))):
        where = draw(st.sampled_from(("top", "any", "extra") if extra else ("top", "any")))
        if where == "extra":
            body[draw(st.sampled_from(extra))] = draw(values)
            continue
        found = [(key,) for key in body] if where == "top" else list(paths(body))
        if not found:
            break
        path = draw(st.sampled_from(found))
        _set(body, path, draw(values), remove=draw(st.integers(0, 4)) == 0)
    return body


# -- multipart forms and headers ---------------------------------------------------------------------

CHARSETS = st.sampled_from([b"", b"; charset=utf-8", b"; charset=latin-1", b"; charset=x-unknown", b"; charset=",
                            b"; charset=utf-16", b"; charset=\xff"])
ENCODINGS = st.sampled_from([b"", b"\r\nContent-Encoding: gzip", b"\r\nContent-Encoding: deflate",
                             b"\r\nContent-Encoding: br", b"\r\nContent-Encoding: x-made-up",
                             b"\r\nContent-Transfer-Encoding: base64",
                             b"\r\nContent-Transfer-Encoding: quoted-printable",
                             b"\r\nContent-Transfer-Encoding: x-made-up"])
NAMES = st.sampled_from([b"model", b"file", b"language", b"mo\xffdel", b"", b"a\"b", b"response_format", b"prompt",
                         b"image[]", b"seconds", b"input_reference", b"mo\x01del", b"a\x7fb", b"\x00", b"x\tb",
                         b"include[]"])
# Extra header lines of a part: none, a few, more than a part may have, longer than a line may be.
PART_HEADERS = st.sampled_from([0, 1, 7, 9, 130]).flatmap(
    lambda lines: st.sampled_from([8, 4000, 5000, 9000]).map(
        lambda length: b"".join(b"\r\nX-H%d: " % i + b"v" * length for i in range(lines))))
VALUES = st.binary(max_size=12) | st.sampled_from([b"whisper-1", b"\xff\xfe", b"H4sIAAAAAAAA", b"=FF=", b"text"])


@st.composite
def forms(draw: st.DrawFn) -> tuple[bytes, bytes]:
    boundary = draw(st.sampled_from([b"gw", b"x" * 70, b"a b"]))
    body = draw(st.sampled_from([b"", b"preamble\r\n", b"\r\n" * 40]))
    for _ in range(draw(st.integers(0, 4))):
        filename = draw(st.sampled_from([b"", b"; filename=\"a.mp3\"", b"; filename=\"\xff.mp3\"", b"; filename="]))
        content_type = draw(st.sampled_from([b"", b"\r\nContent-Type: text/plain", b"\r\nContent-Type: audio/mpeg",
                                             b"\r\nContent-Type: multipart/mixed; boundary=in",
                                             b"\r\nContent-Type: \xff"]))
        disposition = draw(st.sampled_from([b"form-data", b"attachment", b"\xff"]))
        one = (b"--" + boundary + b"\r\nContent-Disposition: " + disposition + b"; name=\"" + draw(NAMES) + b"\""
               + filename + content_type + draw(CHARSETS) + draw(ENCODINGS) + draw(PART_HEADERS) + b"\r\n\r\n"
               + draw(VALUES) + b"\r\n")
        repeats = draw(st.sampled_from([1, 1, 2, 17, 70, 2000]))  # the same part many times over (within 2 MiB)
        body += one * min(repeats, max(1, 2 * 1024 * 1024 // len(one)))
    body += b"--" + boundary + b"--\r\n"
    if draw(st.booleans()):
        body = body[:draw(st.integers(0, len(body)))]
    header = draw(st.sampled_from([b"multipart/form-data; boundary=" + boundary, b"multipart/form-data",
                                   b"multipart/form-data; boundary=other", b"multipart/mixed; boundary=" + boundary,
                                   b"multipart/form-data; boundary=\"" + boundary + b"\""]))
    return header, body


# Header values: any bytes an HTTP parser takes (no control characters), UTF-8 or not.
HEADER_VALUES = st.binary(max_size=16).map(lambda b: bytes(c for c in b if c >= 0x20 and c != 0x7f)) | st.sampled_from(
    [b"Bearer sk-\xff\xfe", b"sk-\xc3\x28", b"\xed\xa0\x80", b"Bearer ", b"sk-", b"sk-abc-\xb2", b"2023-06-01"])
