"""Fuzzed multipart bodies read by api.relay.forms.read_form: a form is read, or refused with a 400
of the gateway's own; never another exception (which would be a 500)."""
from __future__ import annotations

import asyncio
from unittest import mock

import pytest
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.relay.errors import RelayError
from api.relay.forms import read_form

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              # aiohttp warns about a client's malformed Content-Disposition (and reads no name from it)
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionHeader"),
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionParam")]
FUZZ = settings(max_examples=300, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

CHARSETS = st.sampled_from([b"", b"; charset=utf-8", b"; charset=latin-1", b"; charset=x-unknown", b"; charset=",
                            b"; charset=utf-16", b"; charset=\xff"])
ENCODINGS = st.sampled_from([b"", b"\r\nContent-Encoding: gzip", b"\r\nContent-Encoding: deflate",
                             b"\r\nContent-Encoding: br", b"\r\nContent-Encoding: x-made-up",
                             b"\r\nContent-Transfer-Encoding: base64",
                             b"\r\nContent-Transfer-Encoding: quoted-printable",
                             b"\r\nContent-Transfer-Encoding: x-made-up"])
NAMES = st.sampled_from([b"model", b"file", b"language", b"mo\xffdel", b"", b"a\"b", b"response_format"])
VALUES = st.binary(max_size=12) | st.sampled_from([b"whisper-1", b"\xff\xfe", b"H4sIAAAAAAAA", b"=FF=", b"text"])


@st.composite
def forms(draw: st.DrawFn) -> tuple[bytes, bytes]:
    boundary = draw(st.sampled_from([b"gw", b"x" * 70, b"a b"]))
    body = b""
    for _ in range(draw(st.integers(0, 4))):
        filename = draw(st.sampled_from([b"", b"; filename=\"a.mp3\"", b"; filename=\"\xff.mp3\"", b"; filename="]))
        content_type = draw(st.sampled_from([b"", b"\r\nContent-Type: text/plain", b"\r\nContent-Type: audio/mpeg",
                                             b"\r\nContent-Type: multipart/mixed; boundary=in",
                                             b"\r\nContent-Type: \xff"]))
        disposition = draw(st.sampled_from([b"form-data", b"attachment", b"\xff"]))
        body += (b"--" + boundary + b"\r\nContent-Disposition: " + disposition + b"; name=\"" + draw(NAMES) + b"\""
                 + filename + content_type + draw(CHARSETS) + draw(ENCODINGS) + b"\r\n\r\n" + draw(VALUES) + b"\r\n")
    body += b"--" + boundary + b"--\r\n"
    if draw(st.booleans()):
        body = body[:draw(st.integers(0, len(body)))]
    header = draw(st.sampled_from([b"multipart/form-data; boundary=" + boundary, b"multipart/form-data",
                                   b"multipart/form-data; boundary=other", b"multipart/mixed; boundary=" + boundary,
                                   b"multipart/form-data; boundary=\"" + boundary + b"\""]))
    return header, body


async def read(content_type: bytes, body: bytes) -> None:
    payload = StreamReader(mock.Mock(), 2**16, loop=asyncio.get_running_loop())
    payload.feed_data(body)
    payload.feed_eof()
    headers = {"Content-Type": content_type.decode("utf-8", "surrogateescape")}
    request = make_mocked_request("POST", "/v1/audio/transcriptions", headers=headers, payload=payload)
    try:
        fields, form = await read_form(request)
    except RelayError as err:
        assert err.status == 400 and err.local, err
        return
    assert form.files
    for name, value in fields.items():
        (name + value).encode()  # what travels upstream is text: encodable, no undecodable bytes


@FUZZ
@given(form=forms())
async def test_a_form_is_read_or_refused(form: tuple[bytes, bytes]) -> None:
    await read(*form)
