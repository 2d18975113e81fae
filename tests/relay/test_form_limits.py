# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Multipart forms held to their route's shape as they are read (api/relay/forms.py): parts past the
route's count, part headers past their bounds, a preamble, a nested form and a field the route does not
know are refused at the part that carries them, in OpenAI's shape, nothing charged; reading gives the
event loop turns; the numbers of a form or a query that int() cannot take are a 400 naming them."""
from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from typing import Any
from unittest import mock

import aiohttp
import pytest
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request

from api.bodies import MAX_BODY
from api.relay.form_shape import TRANSCRIPTION
from api.relay.forms import TURN_EVERY, read_form
from api.relay.image_edit_form import EDIT_FORM
from api.upstream.errors import RelayError
from models import Token, User
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    gateway,
    headers_for,
    live_balance,
    make_key,
    rich_user,
    upstreams,
)
from tests.upstream.providers.fake_tasks import PNG
from tests.upstream.providers.openai.fake_images import KEY, FakeImages

START = 10_000_000
BOUNDARY = b"gw"


def part(name: str, value: bytes, filename: str = "", headers: bytes = b"") -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    head = b"--" + BOUNDARY + b"\r\nContent-Disposition: " + disposition.encode() + headers
    return head + b"\r\n\r\n" + value + b"\r\n"


def form(*parts: bytes, preamble: bytes = b"") -> bytes:
    return preamble + b"".join(parts) + b"--" + BOUNDARY + b"--\r\n"


EDIT = (part("model", b"gpt-image-1.5"), part("prompt", b"a hat"), part("image", PNG, "a.png", b"\r\nContent-Type: "
                                                                        b"image/png"))
CONTENT_TYPE = "multipart/form-data; boundary=" + BOUNDARY.decode()


def mocked(path: str, body: bytes, eof: bool = True) -> tuple[aiohttp.web.Request, StreamReader]:
    payload = StreamReader(mock.Mock(), 2**16, loop=asyncio.get_running_loop())
    payload.feed_data(body)
    if eof:
        payload.feed_eof()
    request = make_mocked_request("POST", path, headers={"Content-Type": CONTENT_TYPE}, payload=payload,
                                  client_max_size=MAX_BODY)
    return request, payload


# -- the reader ---------------------------------------------------------------------------------------


async def test_parts_past_the_count_are_refused_unread() -> None:
    """20,000 one-byte fields (1.2 MiB): refused at the 65th part, the rest left unread."""
    body = form(*[part("prompt", b"x")] * 20_000)
    request, payload = mocked("/v1/images/edits", body)
    with pytest.raises(RelayError) as refused:
        await read_form(request, EDIT_FORM)
    assert refused.value.status == 400 and refused.value.param == "form"
    assert "at most 64 parts" in refused.value.message
    assert len(payload.read_nowait(-1)) > 0.9 * len(body)


async def test_an_unknown_field_is_refused_at_its_part() -> None:
    """The part is refused as it comes: what would follow it (here: nothing yet, the body not ended) is
    not waited for."""
    request, _ = mocked("/v1/audio/transcriptions", part("bogus", b"1") + part("file", b"x" * 1000, "a.wav"),
                        eof=False)
    with pytest.raises(RelayError) as refused:
        await asyncio.wait_for(read_form(request, TRANSCRIPTION), 30)  # a hang guard: it answers at once
    assert refused.value.status == 400 and refused.value.param == "bogus"
    assert "unknown parameter" in refused.value.message


async def test_reading_many_parts_gives_the_loop_turns() -> None:
    """Parts that arrived together are not read in one go: the loop runs other work between them."""
    loop = asyncio.get_running_loop()
    iterations = 0
    done = False

    def count() -> None:
        nonlocal iterations
        iterations += 1
        if not done:
            loop.call_soon(count)

    request, _ = mocked("/v1/images/edits", form(*[part("image[]", PNG, "a.png")] * 16, *EDIT))
    loop.call_soon(count)
    await read_form(request, EDIT_FORM)
    done = True
    assert iterations >= 19 // TURN_EVERY


# -- through the gateway: OpenAI's shape, nothing charged --------------------------------------------


@dataclass
class Edits:
    gateway: Any
    fake: FakeImages
    user: User
    token: Token

    async def post(self, body: bytes, path: str = "/v1/images/edits") -> tuple[int, dict]:
        resp = await self.gateway.post(path, data=io.BytesIO(body), headers={**headers_for(self.token),
                                                                 "Content-Type": CONTENT_TYPE})
        return resp.status, await resp.json()

    async def unchanged(self) -> bool:
        return self.fake.seen == [] and await live_balance(self.gateway, self.user.id) in (None, START)


@pytest.fixture
async def edits(gateway, aiohttp_server) -> Edits:
    fake = FakeImages()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, fake, models="gpt-image-1.5", key=KEY)
    user = await rich_user(quota=START)
    return Edits(gateway, fake, user, await make_key(user))


async def test_an_edit_form_within_its_bounds_is_relayed(edits: Edits) -> None:
    status, body = await edits.post(form(*EDIT, *[part("image[]", PNG, "b.png")] * 15,
                                    preamble=b"a preamble line\r\n"))
    assert status == 200, body
    assert len(edits.fake.seen) == 1


@pytest.mark.parametrize(("body", "param", "words"), [
    (form(*EDIT, *[part("prompt", b"x")] * 62), "form", "at most 64 parts"),
    (form(*EDIT, part("user", b"u", headers=b"\r\nX-Filler: a" * 8)), "form", "headers"),
    (form(*EDIT, part("user", b"u", headers=b"\r\nX-Filler: " + b"a" * 5000)), "form", "headers"),
    (form(part("image", PNG, "a" * 5000 + ".png"), *EDIT[:2]), "form", "headers"),
    (form(*EDIT, part("user", form(part("user", b"u")), headers=b"\r\nContent-Type: multipart/mixed; boundary=gw")),
     "form", "multipart"),
    (form(*EDIT, part("n", "²".encode())), "n", "integer"),
    (form(*EDIT, part("n", b"--5")), "n", "integer"),
    (form(*EDIT, part("bogus", b"1")), "bogus", "unknown parameter"),
])
async def test_an_edit_form_past_its_bounds_is_400_and_changes_nothing(edits: Edits, body: bytes, param: str,
                                                                         words: str) -> None:
    status, answer = await edits.post(body)
    assert status == 400, answer
    error = answer["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and words in error["message"], error
    assert await edits.unchanged()


async def test_a_long_preamble_is_refused(edits: Edits) -> None:
    status, answer = await edits.post(form(*EDIT, preamble=b"\r\n" * 10_000))
    assert status == 400 and answer["error"]["type"] == "invalid_request_error", answer
    assert await edits.unchanged()


async def test_audio_forms_take_openais_fields_and_refuse_others(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="whisper-1")
    token = await make_key(await rich_user())
    audio = part("file", b"WAVfake", "a.wav", b"\r\nContent-Type: audio/wav")
    fields = [part("model", b"whisper-1"), part("language", b"en"), part("temperature", b"0"),
              part("response_format", b"verbose_json"), part("timestamp_granularities[]", b"word"),
              part("timestamp_granularities[]", b"segment"), part("include[]", b"logprobs")]
    headers = {**headers_for(token), "Content-Type": CONTENT_TYPE}
    resp = await gateway.post("/v1/audio/transcriptions", data=form(*fields, audio), headers=headers)
    assert resp.status == 200, await resp.text()
    for path in ("/v1/audio/transcriptions", "/v1/audio/translations"):
        resp = await gateway.post(path, data=form(fields[0], part("diarize", b"1"), audio), headers=headers)
        error = (await resp.json())["error"]
        assert resp.status == 400 and error["param"] == "diarize" and "unknown parameter" in error["message"]
    resp = await gateway.post("/v1/audio/translations", data=form(fields[0], fields[1], audio), headers=headers)
    assert resp.status == 400 and (await resp.json())["error"]["param"] == "language"  # a transcription's only
    resp = await gateway.post("/v1/audio/transcriptions", data=form(fields[0], *[audio] * 40), headers=headers)
    assert resp.status == 400 and "at most 32 parts" in (await resp.json())["error"]["message"]
    assert len(fake.seen) == 1


# -- videos: the form and the numbers -----------------------------------------------------------------


async def test_video_numbers_int_cannot_take_are_400_naming_them(gateway) -> None:
    token = await make_key(await rich_user())
    headers = headers_for(token)
    huge = "9" * 5000  # past Python's int-string conversion limit
    for seconds in (huge, "²", "٣"):
        resp = await gateway.post("/v1/videos", json={"prompt": "a fox", "model": "m", "seconds": seconds},
                                  headers=headers)
        error = (await resp.json())["error"]
        assert resp.status == 400 and error["param"] == "seconds", error
    resp = await gateway.post("/v1/videos", data=form(part("prompt", b"a fox"), part("model", b"m"),
                                                       part("seconds", huge.encode())),
                              headers={**headers, "Content-Type": CONTENT_TYPE})
    assert resp.status == 400 and (await resp.json())["error"]["param"] == "seconds"
    for limit in (huge, "²"):
        resp = await gateway.get("/v1/videos", params={"limit": limit}, headers=headers)
        assert resp.status == 400, await resp.text()


async def test_video_forms_are_held_to_their_shape(gateway) -> None:
    token = await make_key(await rich_user())
    headers = {**headers_for(token), "Content-Type": CONTENT_TYPE}
    resp = await gateway.post("/v1/videos", data=io.BytesIO(form(*[part("prompt", b"a fox")] * 20_000)),
                              headers=headers)
    error = (await resp.json())["error"]
    assert resp.status == 400 and error["param"] == "form" and "at most 16 parts" in error["message"], error
    resp = await gateway.post("/v1/videos", data=form(part("bogus", b"1"), part("prompt", b"a fox")), headers=headers)
    assert resp.status == 400 and (await resp.json())["error"]["param"] == "bogus"
    two = [part("input_reference", PNG, "a.png", b"\r\nContent-Type: image/png")] * 2
    resp = await gateway.post("/v1/videos", data=form(part("prompt", b"a fox"), part("model", b"m"), *two),
                              headers=headers)
    assert resp.status == 400 and (await resp.json())["error"]["param"] == "input_reference"
