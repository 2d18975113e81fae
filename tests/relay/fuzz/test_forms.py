"""Fuzzed multipart bodies read by api.relay.forms.read_form: a form is read, or refused with a 400
of the gateway's own; never another exception (which would be a 500); what is read is within its
route's shape (api/relay/form_shape.py)."""
from __future__ import annotations

import asyncio
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.bodies import MAX_BODY
from api.relay.form_shape import TRANSCRIPTION, TRANSLATION, FormShape
from api.relay.forms import read_form
from api.relay.image_edit_form import EDIT_FORM
from api.relay.tasks.video_shape import VIDEO_FORM
from api.upstream.errors import RelayError
from tests.relay.fuzz.strategies import forms

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              # aiohttp warns about a client's malformed Content-Disposition (and reads no name from it)
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionHeader"),
              pytest.mark.filterwarnings("ignore::aiohttp.multipart.BadContentDispositionParam")]
FUZZ = settings(max_examples=300, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

async def read(content_type: bytes, body: bytes, shape: FormShape) -> None:
    payload = StreamReader(mock.Mock(), 2**16, loop=asyncio.get_running_loop())
    payload.feed_data(body)
    payload.feed_eof()
    headers = {"Content-Type": content_type.decode("utf-8", "surrogateescape")}
    request = make_mocked_request("POST", "/v1/audio/transcriptions", headers=headers, payload=payload,
                                  client_max_size=MAX_BODY)
    try:
        fields, form = await read_form(request, shape)
    except RelayError as err:
        assert err.status == 400 and err.local, err
        return
    except web.HTTPRequestEntityTooLarge:  # shaped by the route's error middleware
        return
    assert form.files or not shape.file_required
    assert len(fields) + len(form.files) <= shape.max_parts
    assert set(fields) <= shape.fields and {f[0] for f in form.files} <= shape.files
    for name, value in fields.items():
        (name + value).encode()  # what travels upstream is text: encodable, no undecodable bytes


@FUZZ
@given(form=forms(), shape=st.sampled_from([TRANSCRIPTION, TRANSLATION, EDIT_FORM, VIDEO_FORM]))
async def test_a_form_is_read_or_refused(form: tuple[bytes, bytes], shape: FormShape) -> None:
    await read(*form, shape)
