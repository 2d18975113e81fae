"""Video tasks converted for Kling (Kuaishou's Kling AI API; channel type 50, new-api's number).

Wire facts (Kling's API reference, app.klingai.com/global/dev/document-api/apiReference/commonInfo and
…/model/textToVideo, …/model/imageToVideo; summarised in inference-sh/grid api/klingai/docs/00-general.md,
03-video-text2video.md, 04-video-image2video.md):
- auth: a JWT signed with the key pair (api/upstream/signing/kling.py), sent as `Authorization: Bearer
  <jwt>`; the channel's key is `accesskey|secretkey` (new-api's convention for its Kling channels, type 50);
- `POST /v1/videos/text2video` `{model_name, prompt, negative_prompt?, mode: std | pro, aspect_ratio:
  16:9 | 9:16 | 1:1, duration: "5" | "10", …}`; `POST /v1/videos/image2video` the same with `image` (a
  URL or base64 *without* a `data:` prefix; JPEG or PNG) and no `aspect_ratio` (the image's own);
- every answer is `{code, message, request_id, data}`: code 0 is success, others are errors with the HTTP
  status (1000–1004 auth 401, 1100–1102 account 429, 1200–1203 parameters 400/404, 1300–1301 content
  policy 400, 1302–1303 rate and concurrency 429, 5000–5002 server 5xx);
- a submission answers `data.task_id`, `data.task_status` submitted; `GET /v1/videos/{text2video |
  image2video}/{task_id}` answers `task_status` submitted | processing | succeed | failed (with
  `task_status_msg`) and, once done, `task_result.videos[].url` — a plain CDN URL needing no credential,
  kept 30 days ("Generated images/videos are deleted after 30 days").

OpenAI's `size` picks the aspect ratio and the mode (720p: std, 1080p: pro); `seconds` the duration.
The task id the poller keeps is `<endpoint>/<task_id>` so a poll asks the endpoint that made it (a query's
answer does not name its endpoint: its update is given under both, and only the kept one matches).
"""
from __future__ import annotations

import base64
import time
from typing import Any

import orjson

from api.upstream.base import UpstreamContext, UpstreamRequest
from api.upstream.masking import remember
from api.upstream.signing import kling
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskUpdate,
    VideoAdaptor,
    json_or_none,
    key_pair,
    not_json,
    text,
    upstream_request,
)

KLING_HOST = "https://api-singapore.klingai.com"
RETENTION = 30 * 86400  # Kling deletes a generated video after 30 days
# OpenAI's size → Kling's aspect ratio and mode (std renders 720p, pro 1080p).
SIZES = {"1280x720": ("16:9", "std"), "720x1280": ("9:16", "std"), "720x720": ("1:1", "std"),
         "1920x1080": ("16:9", "pro"), "1080x1920": ("9:16", "pro"), "1080x1080": ("1:1", "pro")}
ENDPOINTS = ("text2video", "image2video")
IMAGE_TYPES = frozenset({"image/jpeg", "image/png"})  # ".jpg / .jpeg / .png"
MAX_IMAGE = 10 * 1024 * 1024  # "Max size: 10MB"
MAX_PROMPT = 2500
PARALLEL_LIMIT = 1303  # "parallel task over resource pack limit": the account's concurrency is used up
_STATUSES = {"submitted": "QUEUED", "processing": "IN_PROGRESS", "succeed": SUCCESS, "failed": FAILURE}


class KlingUnfit(ValueError):
    """A request Kling cannot take (a size, a duration or an image it has not): the client's 400."""

    def __init__(self, param: str, problem: str) -> None:
        super().__init__(problem)
        self.param = param


def durations(model: str) -> frozenset[int]:
    """Kling 3 renders 3 to 15 seconds; the models before it 5 or 10."""
    return frozenset(range(3, 16)) if model.startswith("kling-v3") else frozenset({5, 10})


def kling_body(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(endpoint, request) of the client's request (api/relay/tasks/video_shape.py); raises KlingUnfit."""
    fit = SIZES.get(body["size"])
    if fit is None:
        raise KlingUnfit("size", f"size {body['size']} is not one of {', '.join(SIZES)}")
    if body["seconds"] not in durations(body["model"]):
        allowed = ", ".join(map(str, sorted(durations(body["model"]))))
        raise KlingUnfit("seconds", f"{body['model']} renders {allowed} seconds")
    if len(body["prompt"]) > MAX_PROMPT:
        raise KlingUnfit("prompt", f"Kling takes at most {MAX_PROMPT} characters of prompt")
    out: dict[str, Any] = {"model_name": body["model"], "prompt": body["prompt"], "mode": fit[1],
                           "duration": str(body["seconds"])}
    image = body.get("image")
    if not image:
        return "text2video", {**out, "aspect_ratio": fit[0]}
    if image["mime"] not in IMAGE_TYPES or len(image["data"]) > MAX_IMAGE:
        raise KlingUnfit("input_reference", "Kling takes a JPEG or PNG image of at most 10 MB")
    return "image2video", {**out, "image": base64.b64encode(image["data"]).decode()}


class KlingAdaptor(VideoAdaptor):
    endpoint = "text2video"  # the endpoint of this adaptor's submission (one adaptor per attempt)

    @classmethod
    def unfit(cls, body: dict[str, Any]) -> tuple[str, str] | None:
        try:
            kling_body(body)
        except KlingUnfit as unfit:
            return unfit.param, str(unfit)
        return None

    def _base(self) -> str:
        return self.base_url or KLING_HOST

    def _pair(self) -> tuple[str, str]:
        return key_pair(self.key, "Kling", "accesskey|secretkey")

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        """The key pair's JWT (api/upstream/signing/kling.py), signed for each call."""
        access, secret = self._pair()
        token, expires = kling.token(access, secret, time.time())
        remember(token, expires)  # masked in any upstream text while it is valid
        request.headers["Authorization"] = f"Bearer {token}"

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        endpoint, request = kling_body(body)
        self._pair()  # a key that is not a pair fails here, before anything is sent
        self.endpoint = endpoint
        return upstream_request("POST", f"{self._base()}/v1/videos/{endpoint}", {"Content-Type": "application/json"},
                                request)

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        answer = self.mask(body)
        data = body.get("data")
        task_id = data.get("task_id") if isinstance(data, dict) else None
        if status != 200 or body.get("code") != 0 or not isinstance(task_id, str) or not task_id:
            reason = text(answer.get("message") or f"HTTP {status}", 1000)
            return Submitted(False, answer=answer, reason=reason, retry_elsewhere=status >= 500 or status == 429,
                             busy=body.get("code") == PARALLEL_LIMIT)
        if len(task_id) > 150 or "/" in task_id or "\x00" in task_id:
            return Submitted(False, answer=answer, reason="the upstream answered a task id that cannot be kept")
        return Submitted(True, task_id=f"{self.endpoint}/{task_id}", answer=answer)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [task_id] = task_ids
        endpoint, _, upstream_id = task_id.partition("/")
        if endpoint not in ENDPOINTS or not upstream_id:
            raise ValueError("not a Kling task id")
        self._pair()
        return upstream_request("GET", f"{self._base()}/v1/videos/{endpoint}/{upstream_id}", {})

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        body = json_or_none(raw)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, dict) or body.get("code") != 0 or not isinstance(data.get("task_id"), str):
            raise ValueError(f"not a Kling task: {str(self.mask(body))[:200]}")
        status, fields = self._state(data)
        return [TaskUpdate(f"{endpoint}/{data['task_id']}", status, fields) for endpoint in ENDPOINTS]

    def _state(self, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        status = _STATUSES.get(str(data.get("task_status")), "QUEUED")
        if status == FAILURE:
            return FAILURE, {"status": FAILURE,
                             "fail_reason": self.mask(text(data.get("task_status_msg") or "the video failed", 1000))}
        if status != SUCCESS:
            return status, {"status": status}
        videos = (data.get("task_result") or {}).get("videos")
        url = videos[0].get("url") if isinstance(videos, list) and videos and isinstance(videos[0], dict) else None
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return FAILURE, {"status": FAILURE, "fail_reason": "no video was made"}
        now = int(time.time())
        result = {"kind": "kling", "url": url, "expires_at": now + RETENTION}
        return SUCCESS, {"status": SUCCESS, "finish_time": now, "data": orjson.dumps(result).decode()}

    def content_url(self, data: dict[str, Any]) -> str | None:
        """The finished video's CDN URL (it needs no credential: fetched keyless, or handed out)."""
        url = data.get("url")
        ok = data.get("kind") == "kling" and isinstance(url, str) and url.startswith(("https://", "http://"))
        return url if ok else None
