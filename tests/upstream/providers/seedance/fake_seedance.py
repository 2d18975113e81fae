"""A fake of Volcengine Ark's video generation tasks (Seedance), speaking its real format; tests set a
task's state as Ark would report it (`finish`, `fail`) and read what the fake received in `seen`.

Strict where Ark is (Ark API reference: "创建视频生成任务 API" volcengine.com/docs/82379/1520757, "查询视频生成任务
API" volcengine.com/docs/82379/1521309; errors `{"error": {"code", "message", "param", "type"}}` as the
Ark endpoints answer them, e.g. w4n9H/autocoder-nano#3 `InvalidEndpoint.NotFound`/`NotFound`):
- `Authorization: Bearer <Ark API key>`, else 401 `AuthenticationError` (the reference's 鉴权说明: API Key
  authentication only);
- `POST /api/v3/contents/generations/tasks`: `model` one Ark serves (else 404
  `InvalidEndpointOrModel.NotFound`); `content` a list with one `text` item (the prompt: "文本提示词（必填）")
  and `image_url` items whose `url` is an http(s) URL or `data:image/<format, lower case>;base64,…`
  (formats jpeg, png, webp, bmp, tiff, gif; under 30 MB; width and height in (300, 6000); width/height
  in (0.4, 2.5): "传入图片需要满足以下条件"); one image is the first frame (`role` absent or
  `first_frame`); a text-to-video model (`…-t2v`) takes no image, an image-to-video one (`…-i2v`) needs
  one; `resolution` 480p | 720p | 1080p; `ratio` 16:9 | 4:3 | 1:1 | 3:4 | 9:16 | 21:9 | adaptive;
  `duration` 3 to 12 seconds on Seedance 1.0 ("Seedance 支持 3~12 秒"), 4 to 12 on 1.5 pro (UCloudDoc-Team/
  modelverse api_doc/video_api/doubao-seedance-1-5-pro-251215.md: "`4~12` 秒"), 4 to 15 on 2.0 (Ark's
  Seedance 2.0 skill, skills.volces.com byted-ark-seedance-skill: "支持 4-15 秒"); each refusal a 400 `InvalidParameter`
  naming the param; answers `{"id": "cgt-…"}`;
- `GET /api/v3/contents/generations/tasks/{id}`: 404 `ResourceNotFound` for an id it never made; else
  `{id, model, status, error, content: {video_url}, usage, created_at, updated_at, resolution, ratio,
  duration}`; a finished task's `video_url` is a TOS URL signed in its query (`X-Tos-Expires=86400`) that
  refuses a request carrying an `Authorization` header besides its signature (TOS presigned URLs: one
  authentication per request).
"""
from __future__ import annotations

import base64
import binascii
import itertools
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

ARK_KEY = "ark-0123456789abcdef-seedance-secret"
MP4 = b"\x00\x00\x00\x18ftypisom" + bytes(range(256)) * 4
MODELS = {"doubao-seedance-2-0-260128", "doubao-seedance-2-0-fast-260128", "doubao-seedance-1-5-pro-251215",
          "doubao-seedance-1-0-pro-250528", "doubao-seedance-1-0-pro-fast-251015",
          "doubao-seedance-1-0-lite-t2v-250428", "doubao-seedance-1-0-lite-i2v-250428"}
RESOLUTIONS = {"480p", "720p", "1080p"}
RATIOS = {"16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"}
IMAGE_FORMATS = {"jpeg", "png", "webp", "bmp", "tiff", "gif"}
_DATA_URL = re.compile(r"^data:image/([a-z]+);base64,(.+)$", re.S)
_ids = itertools.count(1)


def png(width: int, height: int) -> bytes:
    """A real PNG of that size (one grey row repeated): what a client sends as the first frame."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = (b"\x00" + b"\x80" * width) * height
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def ark_error(status: int, code: str, message: str, param: str = "", kind: str = "BadRequest") -> web.Response:
    return web.json_response({"error": {"code": code, "message": message, "param": param, "type": kind}},
                             status=status)


def _durations(model: str) -> range:
    if "seedance-2" in model:
        return range(4, 16)
    return range(4, 13) if "seedance-1-5" in model else range(3, 13)


def _image_problem(item: dict[str, Any]) -> str | None:
    url = (item.get("image_url") or {}).get("url") if isinstance(item.get("image_url"), dict) else None
    if not isinstance(url, str) or not url:
        return "image_url.url is required"
    if url.startswith(("http://", "https://")):
        return None
    match = _DATA_URL.match(url)
    if match is None or match.group(1) not in IMAGE_FORMATS:
        return "image_url.url must be an image URL or data:image/<format>;base64,<data>"
    try:
        data = base64.b64decode(match.group(2), validate=True)
    except (binascii.Error, ValueError):
        return "the image's base64 is invalid"
    if len(data) >= 30 * 1024 * 1024:
        return "the image must be smaller than 30MB"
    if match.group(1) == "png":
        if not data.startswith(b"\x89PNG\r\n\x1a\n") or data[12:16] != b"IHDR":
            return "the image cannot be decoded"
        width, height = struct.unpack(">II", data[16:24])
        if not (300 < width < 6000 and 300 < height < 6000):
            return f"the image's width and height must be within (300, 6000) px, got {width}x{height}"
        if not 0.4 < width / height < 2.5:
            return "the image's aspect ratio (width/height) must be within (0.4, 2.5)"
    if item.get("role", "first_frame") != "first_frame":
        return "one image is the first frame (role first_frame)"
    return None


def _problem(body: Any) -> tuple[str, str] | None:
    """(param, message) of what Ark refuses in a task creation request (None: nothing)."""
    if not isinstance(body, dict):
        return "", "The request body is not a JSON object."
    content = body.get("content")
    if not isinstance(content, list) or not content or not all(isinstance(i, dict) for i in content):
        return "content", "content is required"
    texts = [i for i in content if i.get("type") == "text"]
    images = [i for i in content if i.get("type") == "image_url"]
    if len(texts) + len(images) != len(content):
        return "content.type", "content.type must be text or image_url"
    if len(texts) != 1 or not isinstance(texts[0].get("text"), str) or not texts[0]["text"].strip():
        return "content.text", "one text item with the prompt is required"
    model = str(body["model"])
    if len(images) > 1:
        return "content", "one first-frame image at most"
    if images:
        if model.endswith("-t2v-250428"):
            return "content", f"{model} is a text-to-video model: it takes no image"
        problem = _image_problem(images[0])
        if problem:
            return "content.image_url", problem
    elif model.endswith("-i2v-250428"):
        return "content", f"{model} is an image-to-video model: a first-frame image is required"
    if body.get("resolution", "720p") not in RESOLUTIONS:
        return "resolution", "resolution must be 480p, 720p or 1080p"
    if body.get("ratio", "16:9") not in RATIOS:
        return "ratio", f"ratio must be one of {', '.join(sorted(RATIOS))}"
    duration = body.get("duration", 5)
    allowed = _durations(model)
    if not isinstance(duration, int) or isinstance(duration, bool) or duration not in allowed:
        return "duration", f"duration must be {allowed.start} to {allowed.stop - 1} for {model}"
    return None


@dataclass
class FakeSeedance(FakeBase):
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    polls: list[str] = field(default_factory=list)
    downloads: list[dict[str, str]] = field(default_factory=list)  # the headers of each video download

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/v3/contents/generations/tasks", self.create)
        app.router.add_get("/api/v3/contents/generations/tasks/{id}", self.retrieve)
        app.router.add_get("/tos/{name}", self.download)
        return app

    def finish(self, task_id: str) -> None:
        query = "X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Date=20261127T100000Z&X-Tos-Expires=86400&X-Tos-Signature=f00d"
        self.tasks[task_id].update(status="succeeded", updated_at=1_795_000_000,
                                   content={"video_url": f"{self.url}/tos/{task_id}.mp4?{query}"},
                                   usage={"completion_tokens": 108_900, "total_tokens": 108_900})

    def fail(self, task_id: str, message: str = "The output video may contain sensitive information.") -> None:
        self.tasks[task_id].update(status="failed", updated_at=1_795_000_000,
                                   error={"code": "OutputVideoSensitiveContentDetected", "message": message})

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {ARK_KEY}"

    async def create(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return ark_error(401, "AuthenticationError", "The API key in the request is missing or invalid.",
                             kind="Unauthorized")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return ark_error(400, "InvalidParameter", "The request body is not valid JSON.")
        self.seen.append(body)
        if not isinstance(body, dict) or body.get("model") not in MODELS:
            model = body.get("model") if isinstance(body, dict) else None
            return ark_error(404, "InvalidEndpointOrModel.NotFound",
                             f"The model or endpoint {model} does not exist or you do not have access to it.",
                             kind="NotFound")
        problem = _problem(body)
        if problem is not None:
            return ark_error(400, "InvalidParameter", f"The parameter `{problem[0]}` specified in the request is "
                             f"not valid: {problem[1]}.", problem[0])
        task_id = f"cgt-20261127{next(_ids):06d}-abcde"
        self.tasks[task_id] = {"id": task_id, "model": body["model"], "status": "queued", "error": None,
                               "content": None, "created_at": 1_794_999_000, "updated_at": 1_794_999_000,
                               "resolution": body.get("resolution", "720p"), "ratio": body.get("ratio", "16:9"),
                               "duration": body.get("duration", 5), "framespersecond": 24, "seed": 10}
        return web.json_response({"id": task_id})

    async def retrieve(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return ark_error(401, "AuthenticationError", "The API key in the request is missing or invalid.",
                             kind="Unauthorized")
        task = self.tasks.get(request.match_info["id"])
        if task is None:
            return ark_error(404, "ResourceNotFound", "The specified task is not found.", "id", "NotFound")
        self.polls.append(task["id"])
        if task["status"] == "queued" and len([p for p in self.polls if p == task["id"]]) > 1:
            task["status"] = "running"
        return web.json_response(task)

    async def download(self, request: web.Request) -> web.Response:
        self.downloads.append(dict(request.headers))
        if "Authorization" in request.headers:  # a presigned URL is its own authentication
            return web.Response(status=400, text="<Error><Code>InvalidArgument</Code></Error>",
                                content_type="application/xml")
        task_id = request.match_info["name"].removesuffix(".mp4")
        task = self.tasks.get(task_id)
        if task is None or task["status"] != "succeeded" or request.query.get("X-Tos-Signature") != "f00d":
            return web.Response(status=403, text="<Error><Code>AccessDenied</Code></Error>",
                                content_type="application/xml")
        return web.Response(body=MP4, content_type="video/mp4")
