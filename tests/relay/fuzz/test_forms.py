"""Fuzzed multipart bodies read by api.relay.forms.read_form: a form is read, or refused with a 400
of the gateway's own; never another exception (which would be a 500)."""
from __future__ import annotations

import asyncio
from unittest import mock

import pytest
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request
from hypothesis import HealthCheck, given, settings

from api.relay.form_shape import TRANSCRIPTION
from api.relay.forms import read_form
from api.upstream.errors import RelayError
from tests.relay.fuzz.strategies import forms

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              # aiohttp warns about a client's malformed Content-Disposition (and reads no name from it)
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionHeader"),
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionParam")]
FUZZ = settings(max_examples=300, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

async def read(content_type: bytes, body: bytes) -> None:
    payload = StreamReader(mock.Mock(), 2**16, loop=asyncio.get_running_loop())
    payload.feed_data(body)
    payload.feed_eof()
    headers = {"Content-Type": content_type.decode("utf-8", "surrogateescape")}
    request = make_mocked_request("POST", "/v1/audio/transcriptions", headers=headers, payload=payload)
    try:
        fields, form = await read_form(request, TRANSCRIPTION)
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
