"""A fake of Vidu's API (Shengshu), speaking its real format; tests set a task's state as Vidu would
report it (`finish`, `fail`) and read what the fake received in `seen`.

Sources: platform.vidu.com/docs/text-to-video, /docs/image-to-video, /docs/get-generation,
/docs/error-code. Strict where the API is:
- `Authorization: Token <api key>` ("Replace {} with your API key"), else 401 Unauthorized;
- `POST /ent/v2/text2video`: `model` (viduq3-pro, viduq3-turbo, viduq2, viduq1) and `prompt` required
  (FieldLacking), prompt at most 5000 characters; `duration` q3 1-16, q2 1-10, q1 5; `resolution` q2/q3
  540p, 720p, 1080p, q1 1080p; `aspect_ratio` 16:9, 9:16, 1:1, and 4:3, 3:4 for q2/q3 only (FieldInvalid);
- `POST /ent/v2/img2video`: `model` viduq1, vidu2.0, vidu1.5; `images` exactly one (FieldItemCountOutOfRange),
  a URL or a data URL with its content type ("it must include an appropriate content type string"), PNG,
  JPEG or WebP (ImageFormatInvalid); prompt at most 1500 characters; viduq1 5 s at 1080p, vidu2.0/1.5
  4 s at 360p/720p/1080p or 8 s at 720p; no `aspect_ratio` (not a field of the endpoint: FieldUnwanted);
- a field neither page lists is FieldUnwanted;
- both answer `{task_id, state: "created", model, prompt, duration, seed, aspect_ratio, resolution,
  movement_amplitude, created_at}`;
- `GET /ent/v2/tasks/{id}/creations`: `{id, state, err_code, credits, payload, creations: [{id, url,
  cover_url, watermarked_url}]}`; an unknown id 404 TaskNotFound; each URL a signed link valid 24 hours
  that needs no key (served here under /media/, refusing a request that carries the key or a bad signature);
- at the account's concurrency limit: 429 QuotaExceeded ("Exceeded concurrency limit", /docs/error-code);
- errors: the HTTP status and `{"code", "reason", "message", "metadata"}` (the error-code table's
  codes and messages).
"""
from __future__ import annotations

import base64
import binascii
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.upstream.providers.kit import FakeBase

VIDU_KEY = "vda_0123456789abcdef0123456789abcdef"
MP4 = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 3
_ids = itertools.count(880_000_000_000_000_001)
_HD = {"540p", "720p", "1080p"}
TEXT = {"viduq3-pro": (range(1, 17), {d: _HD for d in range(1, 17)}),
        "viduq3-turbo": (range(1, 17), {d: _HD for d in range(1, 17)}),
        "viduq2": (range(1, 11), {d: _HD for d in range(1, 11)}),
        "viduq1": (range(5, 6), {5: {"1080p"}})}
IMAGE = {"viduq1": (range(5, 6), {5: {"1080p"}}),
         "vidu2.0": ((4, 8), {4: {"360p", "720p", "1080p"}, 8: {"720p"}}),
         "vidu1.5": ((4, 8), {4: {"360p", "720p", "1080p"}, 8: {"720p"}})}
TEXT_FIELDS = {"model", "style", "prompt", "duration", "seed", "aspect_ratio", "resolution", "movement_amplitude",
               "bgm", "payload", "off_peak", "watermark", "callback_url", "audio"}
IMAGE_FIELDS = {"model", "images", "prompt", "duration", "seed", "resolution", "movement_amplitude", "bgm", "payload",
                "off_peak", "watermark", "callback_url", "audio"}
_DATA_URL = re.compile(r"^data:(image/(?:png|jpeg|jpg|webp));base64,(.+)$", re.S)


def vidu_error(status: int, reason: str, message: str) -> web.Response:
    return web.json_response({"code": status, "reason": reason, "message": message, "metadata": {}}, status=status)


def _invalid(name: str) -> web.Response:
    return vidu_error(400, "FieldInvalid", f"invalid field: {name}")


@dataclass
class FakeVidu(FakeBase):
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    polls: list[str] = field(default_factory=list)
    downloads: int = 0
    auth_seen: list[str] = field(default_factory=list)
    expired: set[str] = field(default_factory=set)  # tasks whose links are past their 24 hours
    busy: bool = False  # the account is at its concurrency limit

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/ent/v2/text2video", self.text2video)
        app.router.add_post("/ent/v2/img2video", self.img2video)
        app.router.add_get("/ent/v2/tasks/{id}/creations", self.creations)
        app.router.add_get("/media/{file}", self.media)
        return app

    def finish(self, task_id: str) -> None:
        self.tasks[task_id].update(state="success", credits=20, creations=[{
            "id": f"cr{task_id}", "url": f"{self.url}/media/{task_id}.mp4?Expires=1790086400&Signature=s1g",
            "cover_url": f"{self.url}/media/{task_id}.jpg?Expires=1790086400&Signature=s1g",
            "watermarked_url": f"{self.url}/media/{task_id}-wm.mp4?Expires=1790086400&Signature=s1g"}])

    def fail(self, task_id: str, err_code: str = "CreationPolicyViolation") -> None:
        self.tasks[task_id].update(state="failed", err_code=err_code)

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        self.auth_seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != f"Token {VIDU_KEY}":
            return vidu_error(401, "Unauthorized", "unauthorized")
        return None

    async def _body(self, request: web.Request, kind: str) -> dict[str, Any] | web.Response:
        problem = self._unauthorized(request)
        if problem is not None:
            return problem
        try:
            body = await request.json()
        except ValueError:
            return vidu_error(400, "BadRequest", "bad request")
        if not isinstance(body, dict):
            return vidu_error(400, "BadRequest", "bad request")
        self.seen.append((kind, body))
        if self.busy:  # error-code: 429 QuotaExceeded "Exceeded concurrency limit"
            return vidu_error(429, "QuotaExceeded", "quota exceeded")
        return body

    async def text2video(self, request: web.Request) -> web.Response:
        body = await self._body(request, "text2video")
        if isinstance(body, web.Response):
            return body
        unwanted = sorted(set(body) - TEXT_FIELDS)
        if unwanted:
            return vidu_error(400, "FieldUnwanted", f"unwanted field: {unwanted[0]}")
        for name in ("model", "prompt"):
            if not body.get(name):
                return vidu_error(400, "FieldLacking", f"field is missing or empty: {name}")
        if body["model"] not in TEXT:
            return vidu_error(400, "ModelUnavailable", "model unavailable")
        if len(body["prompt"]) > 5000:
            return _invalid("prompt")
        problem = _lengths(body, TEXT[body["model"]], default_resolution="1080p" if body["model"] == "viduq1" else
                           "720p")
        if problem is not None:
            return problem
        ratios = {"16:9", "9:16", "1:1"} | ({"4:3", "3:4"} if body["model"] != "viduq1" else set())
        if body.get("aspect_ratio", "16:9") not in ratios:
            return _invalid("aspect_ratio")
        return self._created("text2video", body)

    async def img2video(self, request: web.Request) -> web.Response:
        body = await self._body(request, "img2video")
        if isinstance(body, web.Response):
            return body
        unwanted = sorted(set(body) - IMAGE_FIELDS)
        if unwanted:
            return vidu_error(400, "FieldUnwanted", f"unwanted field: {unwanted[0]}")
        for name in ("model", "images"):
            if not body.get(name):
                return vidu_error(400, "FieldLacking", f"field is missing or empty: {name}")
        if body["model"] not in IMAGE:
            return vidu_error(400, "ModelUnavailable", "model unavailable")
        images = body["images"]
        if not isinstance(images, list) or len(images) != 1:
            return vidu_error(400, "FieldItemCountOutOfRange", "field item count out of range: images")
        image = images[0]
        if not isinstance(image, str):
            return _invalid("images")
        if not image.startswith(("https://", "http://")):
            match = _DATA_URL.match(image)
            if match is None:
                return vidu_error(400, "ImageFormatInvalid", "invalid image format")
            try:
                if len(base64.b64decode(match.group(2), validate=True)) >= 10 * 1024 * 1024:
                    return vidu_error(400, "PageSizeOutOfRange", "page size out of range")
            except (binascii.Error, ValueError):
                return vidu_error(400, "ImageFormatInvalid", "invalid image format")
        if len(str(body.get("prompt") or "")) > 1500:
            return _invalid("prompt")
        default = "1080p" if body["model"] == "viduq1" else ("720p" if body.get("duration") == 8 else "360p")
        problem = _lengths(body, IMAGE[body["model"]], default_resolution=default)
        if problem is not None:
            return problem
        return self._created("img2video", body)

    def _created(self, kind: str, body: dict[str, Any]) -> web.Response:
        task_id = str(next(_ids))
        self.tasks[task_id] = {"id": task_id, "state": "created", "err_code": "", "credits": 0, "payload": "",
                               "bgm": False, "off_peak": False, "creations": []}
        return web.json_response({"task_id": task_id, "type": kind, "state": "created", "model": body["model"],
                                  "prompt": body.get("prompt", ""), "duration": body.get("duration"), "seed": 1234,
                                  "aspect_ratio": body.get("aspect_ratio", "16:9"),
                                  "resolution": body.get("resolution"), "movement_amplitude": "auto",
                                  "created_at": "2026-11-27T14:00:00.000000000Z"})

    async def creations(self, request: web.Request) -> web.Response:
        problem = self._unauthorized(request)
        if problem is not None:
            return problem
        task = self.tasks.get(request.match_info["id"])
        if task is None:
            return vidu_error(404, "TaskNotFound", "task not found")
        self.polls.append(task["id"])
        if task["state"] == "created":  # the next look finds it further along
            task["state"] = "queueing"
        elif task["state"] == "queueing":
            task["state"] = "processing"
        return web.json_response(task)

    async def media(self, request: web.Request) -> web.Response:
        # A signed link: no key needed, none sent (get-generation: "URL ... valid for 24 hours").
        if request.headers.get("Authorization") or request.query.get("Signature") != "s1g" \
                or request.match_info["file"].split(".")[0] in self.expired:
            return web.Response(status=403, text="AccessDenied")
        self.downloads += 1
        return web.Response(body=MP4, content_type="video/mp4")


def _lengths(body: dict[str, Any], renders: tuple[Any, dict[int, set[str]]], default_resolution: str
             ) -> web.Response | None:
    durations, resolutions = renders
    duration = body.get("duration", durations[0])
    if not isinstance(duration, int) or isinstance(duration, bool) or duration not in durations:
        return _invalid("duration")
    if body.get("resolution", default_resolution) not in resolutions[duration]:
        return _invalid("resolution")
    return None
