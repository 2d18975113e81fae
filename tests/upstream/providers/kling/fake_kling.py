"""A fake of Kling's video API (Kuaishou's Kling AI; app.klingai.com/global/dev/document-api/apiReference/
commonInfo, …/model/textToVideo, …/model/imageToVideo; as summarised in inference-sh/grid
api/klingai/docs/00-general.md, 03-video-text2video.md and 04-video-image2video.md). Strict where the API is:

- auth: `Authorization: Bearer <jwt>`, an HS256 JWT whose `iss` is the access key, signed with the secret key,
  valid between `nbf` and `exp` (commonInfo, "Step 2: Generate JWT Token"); none: 401 code 1001
  "Authorization empty"; a bad signature, issuer or shape: 401 code 1002 "Authorization invalid"; not yet
  valid: 1003; expired: 1004 (commonInfo, error codes);
- every answer `{code, message, request_id, data}`; a refused parameter is 400 code 1201 "Invalid param
  value", an unknown model 404 code 1203 (ibid.);
- `POST /v1/videos/text2video`: `prompt` required and at most 2500 characters, `model_name` one of the
  documented models, `mode` std | pro, `aspect_ratio` 16:9 | 9:16 | 1:1, `duration` "5" | "10"
  (03-video-text2video.md, request parameters and "Gotchas": "Only 5 or 10 seconds supported");
- `POST /v1/videos/image2video`: `image` required, a URL or base64 without a `data:` prefix, a JPEG or PNG
  (04-video-image2video.md, "Image Requirements"); no `aspect_ratio` (it is not a parameter there);
- `GET /v1/videos/{text2video|image2video}/{task_id}`: the task (`task_status` submitted, processing,
  succeed, failed with `task_status_msg`); a task of another endpoint or unknown: 404 code 1203; done,
  `task_result.videos[].url` is a CDN URL that needs no credential (served here at /cdn/…).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.fake_videos import MP4
from tests.upstream.providers.kit import FakeBase

ACCESS_KEY = "AkKlingAccess0123456789"
SECRET_KEY = "SkKlingSecretValue0123456789abcdef"
KEY = f"{ACCESS_KEY}|{SECRET_KEY}"
MODELS = {"kling-v1", "kling-v1-5", "kling-v1-6", "kling-v2-master", "kling-v2-1", "kling-v2-1-master",
          "kling-v2-5-turbo", "kling-v2-6"}
COMMON = {"model_name", "prompt", "negative_prompt", "cfg_scale", "mode", "camera_control", "duration",
          "callback_url", "external_task_id", "sound"}
TEXT_FIELDS = COMMON | {"aspect_ratio"}
IMAGE_FIELDS = COMMON | {"image", "image_tail", "static_mask", "dynamic_masks", "voice_list"}
_ids = itertools.count(1)


def kling_error(status: int, code: int, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message, "request_id": "req-fake"}, status=status)


def _unb64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def token_problem(header: str, now: float) -> web.Response | None:
    """The refusal of an Authorization header (None: a valid token)."""
    if not header:
        return kling_error(401, 1001, "Authorization is empty")
    if not header.startswith("Bearer "):
        return kling_error(401, 1002, "Authorization is invalid")
    parts = header[len("Bearer "):].split(".")
    try:
        head, claims = orjson.loads(_unb64(parts[0])), orjson.loads(_unb64(parts[1]))
        signature = _unb64(parts[2])
    except (IndexError, ValueError, binascii.Error, orjson.JSONDecodeError):
        return kling_error(401, 1002, "Authorization is invalid")
    want = hmac.new(SECRET_KEY.encode(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if head.get("alg") != "HS256" or claims.get("iss") != ACCESS_KEY or not hmac.compare_digest(signature, want):
        return kling_error(401, 1002, "Authorization is invalid")
    if not isinstance(claims.get("nbf"), int) or claims["nbf"] > now:
        return kling_error(401, 1003, "Authorization is not yet valid")
    if not isinstance(claims.get("exp"), int) or claims["exp"] <= now:
        return kling_error(401, 1004, "Authorization has expired")
    return None


@dataclass
class FakeKling(FakeBase):
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    endpoints: dict[str, str] = field(default_factory=dict)  # task id → the endpoint that made it
    seen: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    polls: list[str] = field(default_factory=list)
    downloads: int = 0
    full: bool = False  # the account's concurrent tasks are all taken

    def app(self) -> web.Application:
        app = web.Application(client_max_size=20 * 1024 * 1024)
        app.router.add_post("/v1/videos/{endpoint}", self.create)
        app.router.add_get("/v1/videos/{endpoint}/{task_id}", self.query)
        app.router.add_get("/cdn/{name}", self.cdn)
        return app

    def finish(self, task_id: str) -> None:
        self.tasks[task_id].update(task_status="succeed", task_result={"videos": [
            {"id": f"vid-{task_id}", "url": f"{self.url}/cdn/{task_id}.mp4", "duration": "5"}]})

    def fail(self, task_id: str, message: str = "Failure to pass the risk control system") -> None:
        self.tasks[task_id].update(task_status="failed", task_status_msg=message)

    def _auth(self, request: web.Request) -> web.Response | None:
        header = request.headers.get("Authorization", "")
        self.tokens.append(header)
        return token_problem(header, time.time())

    async def create(self, request: web.Request) -> web.Response:
        problem = self._auth(request)
        if problem is not None:
            return problem
        endpoint = request.match_info["endpoint"]
        if endpoint not in ("text2video", "image2video"):
            return kling_error(404, 1202, "Invalid request method")
        body = await request.json()
        self.seen.append({"endpoint": endpoint, **body})
        why = _problem(endpoint, body)
        if why is not None:
            return why
        if self.full:  # 00-general.md, "Over-limit Error"
            return kling_error(429, 1303, "parallel task over resource pack limit")
        task_id = f"Ckl{next(_ids):08d}"
        now = int(time.time() * 1000)
        self.tasks[task_id] = {"task_id": task_id, "task_status": "submitted", "task_status_msg": "",
                               "created_at": now, "updated_at": now}
        self.endpoints[task_id] = endpoint
        return web.json_response({"code": 0, "message": "SUCCEED", "request_id": "req-fake",
                                  "data": {"task_id": task_id, "task_status": "submitted", "created_at": now,
                                           "updated_at": now}})

    async def query(self, request: web.Request) -> web.Response:
        problem = self._auth(request)
        if problem is not None:
            return problem
        task_id = request.match_info["task_id"]
        self.polls.append(f"{request.match_info['endpoint']}/{task_id}")
        if self.endpoints.get(task_id) != request.match_info["endpoint"]:
            return kling_error(404, 1203, "task not found")
        task = self.tasks[task_id]
        if task["task_status"] == "submitted":  # a second look finds it running
            task["task_status"] = "processing"
            return web.json_response({"code": 0, "message": "SUCCEED", "request_id": "req-fake",
                                      "data": {**task, "task_status": "submitted"}})
        return web.json_response({"code": 0, "message": "SUCCEED", "request_id": "req-fake", "data": task})

    async def cdn(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization"):  # nothing of the channel's travels to the CDN
            return web.Response(status=400, text="unexpected credential")
        if request.match_info["name"].removesuffix(".mp4") not in self.tasks:
            return web.Response(status=404)
        self.downloads += 1
        return web.Response(body=MP4, content_type="video/mp4")


def _problem(endpoint: str, body: Any) -> web.Response | None:
    """What Kling refuses in a submission (None: nothing)."""
    if not isinstance(body, dict):
        return kling_error(400, 1200, "Invalid request parameters")
    allowed = TEXT_FIELDS if endpoint == "text2video" else IMAGE_FIELDS
    unknown = sorted(set(body) - allowed)
    if unknown:
        return kling_error(400, 1201, f"Invalid param: {unknown[0]}")
    if body.get("model_name", "kling-v1") not in MODELS:
        return kling_error(404, 1203, "model_name not found")
    prompt = body.get("prompt")
    if endpoint == "text2video" and (not isinstance(prompt, str) or not prompt):
        return kling_error(400, 1201, "prompt is required")
    if isinstance(prompt, str) and len(prompt) > 2500:
        return kling_error(400, 1201, "prompt cannot exceed 2500 characters")
    if body.get("mode", "std") not in ("std", "pro"):
        return kling_error(400, 1201, "mode must be std or pro")
    if body.get("duration", "5") not in ("5", "10"):
        return kling_error(400, 1201, "duration must be 5 or 10")
    if endpoint == "text2video" and body.get("aspect_ratio", "16:9") not in ("16:9", "9:16", "1:1"):
        return kling_error(400, 1201, "aspect_ratio must be 16:9, 9:16 or 1:1")
    if endpoint == "image2video":
        image = body.get("image")
        if not isinstance(image, str) or not image:
            return kling_error(400, 1201, "image is required")
        if image.startswith("data:"):
            return kling_error(400, 1201, "image base64 must not carry a data: prefix")
        if not image.startswith(("http://", "https://")):
            try:
                data = base64.b64decode(image, validate=True)
            except (binascii.Error, ValueError):
                return kling_error(400, 1201, "image is not valid base64")
            if not (data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8")) or len(data) > 10 * 1024 * 1024:
                return kling_error(400, 1201, "image must be a JPEG or PNG of at most 10MB")
    return None
