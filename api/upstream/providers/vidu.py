"""Video tasks converted for Vidu (Shengshu's Vidu API; new-api's channel type 52).

Wire facts (platform.vidu.com/docs/text-to-video, /docs/image-to-video, /docs/get-generation,
/docs/error-code; the Chinese edition at platform.vidu.cn/docs is the same API at api.vidu.cn):
- auth `Authorization: Token <api key>`; JSON bodies;
- `POST {base}/ent/v2/text2video` `{model, prompt, duration, aspect_ratio, resolution}` and
  `POST {base}/ent/v2/img2video` `{model, images: [<URL or data URL>], prompt, duration, resolution}`
  (one start-frame image; no aspect ratio: the image's own) answer `{task_id, state: "created", model,
  prompt, duration, seed, aspect_ratio, resolution, …, created_at}`;
- `GET {base}/ent/v2/tasks/{id}/creations` answers `{id, state: created | queueing | processing |
  success | failed, err_code, credits, creations: [{id, url, cover_url, watermarked_url}]}`; each URL
  is a signed link valid 24 hours that needs no key, so the content is fetched without the key under
  the media policy (or handed out in redirect mode);
- errors: the HTTP status and `{"code", "reason": <error code, e.g. FieldInvalid, CreditInsufficient>,
  "message", "metadata"}` (error codes per /docs/error-code); a 429 (QuotaExceeded: "Exceeded concurrency
  limit", TooManyRequests, SystemThrottling) is a busy channel: another one takes the video;
- an image sent as base64 decodes to under 10 MB (/docs/image-to-video).

What each model renders (the same pages): text-to-video viduq3-pro and viduq3-turbo 1 to 16 seconds,
viduq2 1 to 10, at 540p, 720p or 1080p; viduq1 5 seconds at 1080p; aspect ratios 16:9, 9:16, 1:1 (and
4:3, 3:4 for q2 and q3 only). Image-to-video viduq1 5 seconds at 1080p; vidu2.0 and vidu1.5 4 seconds
at 360p, 720p or 1080p, or 8 seconds at 720p. A known model asked for what it does not render is the
client's 400 before anything is sent; a model not listed here goes as asked, and Vidu judges it.
"""
from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson

from api.upstream.base import UpstreamRequest
from api.upstream.errors import RelayError
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskUpdate,
    VideoAdaptor,
    json_or_none,
    keepable_id,
    mapped_status,
    not_json,
    text,
    upstream_request,
)

HOST = "https://api.vidu.com"
URL_LIFETIME = 24 * 3600  # "valid for 24 hours" (docs/get-generation)
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # "The length of the base64 decode must be under 10MB" (docs/image-to-video)
# OpenAI's size → Vidu's aspect ratio and resolution.
SIZES = {"1280x720": ("16:9", "720p"), "720x1280": ("9:16", "720p"), "1920x1080": ("16:9", "1080p"),
         "1080x1920": ("9:16", "1080p"), "960x540": ("16:9", "540p"), "540x960": ("9:16", "540p"),
         "640x360": ("16:9", "360p"), "360x640": ("9:16", "360p"), "720x720": ("1:1", "720p"),
         "1080x1080": ("1:1", "1080p"), "960x720": ("4:3", "720p"), "720x960": ("3:4", "720p")}
_STATES = {"created": "QUEUED", "queueing": "QUEUED", "processing": "IN_PROGRESS", "success": SUCCESS,
           "failed": FAILURE}
_WIDE = frozenset({"16:9", "9:16", "1:1", "4:3", "3:4"})
_SQUARE = frozenset({"16:9", "9:16", "1:1"})


@dataclass(frozen=True, slots=True)
class Renders:
    """What one model renders: (seconds, resolutions) pairs, and the aspect ratios of text-to-video."""

    lengths: tuple[tuple[frozenset[int], frozenset[str]], ...]
    ratios: frozenset[str]


_Q3 = Renders(((frozenset(range(1, 17)), frozenset({"540p", "720p", "1080p"})),), _WIDE)
TEXT_MODELS = {
    "viduq3-pro": _Q3, "viduq3-turbo": _Q3,
    "viduq2": Renders(((frozenset(range(1, 11)), frozenset({"540p", "720p", "1080p"})),), _WIDE),
    "viduq1": Renders(((frozenset({5}), frozenset({"1080p"})),), _SQUARE),
}
_V2 = Renders(((frozenset({4}), frozenset({"360p", "720p", "1080p"})), (frozenset({8}), frozenset({"720p"}))),
              _SQUARE)
IMAGE_MODELS = {"viduq1": Renders(((frozenset({5}), frozenset({"1080p"})),), _SQUARE), "vidu2.0": _V2,
                "vidu1.5": _V2}


class ViduUnfit(RelayError):
    """A request the model cannot render: the client's 400, before anything is sent or charged."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(400, message, "invalid_request_error", "invalid_value", param, local=True)


def vidu_body(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(path, Vidu's request) of the client's request (api/relay/tasks/video_shape.py); raises ViduUnfit."""
    fit = SIZES.get(body["size"])
    if fit is None:
        raise ViduUnfit("size", f"size {body['size']} is not one of {', '.join(SIZES)}")
    ratio, resolution = fit
    model, seconds, image = body["model"], body["seconds"], body.get("image")
    renders = (IMAGE_MODELS if image else TEXT_MODELS).get(model)
    if renders is not None:
        if not any(seconds in lengths for lengths, _ in renders.lengths):
            allowed = sorted(s for lengths, _ in renders.lengths for s in lengths)
            raise ViduUnfit("seconds", f"{model} renders {allowed[0]} to {allowed[-1]} seconds"
                            if len(allowed) > 2 else f"{model} renders {' or '.join(map(str, allowed))} seconds")
        if not any(seconds in lengths and resolution in sizes for lengths, sizes in renders.lengths):
            raise ViduUnfit("size", f"{model} does not render {resolution} at {seconds} seconds")
        if not image and ratio not in renders.ratios:
            raise ViduUnfit("size", f"{model} does not render the aspect ratio {ratio}")
    if image and len(image["data"]) >= MAX_IMAGE_BYTES:
        raise ViduUnfit("input_reference", "Vidu takes an image under 10 MB")
    out: dict[str, Any] = {"model": model, "prompt": body["prompt"], "duration": seconds, "resolution": resolution}
    if image:
        out["images"] = [f"data:{image['mime']};base64,{_b64(image['data'])}"]
        return "/ent/v2/img2video", out
    out["aspect_ratio"] = ratio
    return "/ent/v2/text2video", out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class ViduAdaptor(VideoAdaptor):
    def _base(self) -> str:
        return self.base_url or HOST

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.key}"}

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        where, out = vidu_body(body)
        return upstream_request("POST", self._base() + where, {**self._auth(), "Content-Type": "application/json"}, out)

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        answer = self.mask(body)
        task_id = body.get("task_id")
        if status != 200 or not isinstance(task_id, str) or not task_id:
            reason = " ".join(str(answer.get(k)) for k in ("reason", "message") if answer.get(k)) or f"HTTP {status}"
            return Submitted(False, answer=answer, reason=text(reason, 1000), retry_elsewhere=status >= 500,
                             busy=status == 429)
        if not keepable_id(task_id):
            return Submitted(False, answer=answer, reason="the upstream answered a task id too long to keep")
        return Submitted(True, task_id=task_id, answer=answer)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [task_id] = task_ids
        return upstream_request("GET", f"{self._base()}/ent/v2/tasks/{quote(task_id, safe='')}/creations", self._auth())

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        body = json_or_none(raw)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise ValueError(f"not a Vidu task: {str(self.mask(body))[:200]}")
        status = mapped_status(_STATES, body.get("state"), "Vidu state")
        fields: dict[str, Any] = {"status": status}
        if status == FAILURE:
            fields["fail_reason"] = self.mask(text(body.get("err_code") or "the video failed", 1000))
        elif status == SUCCESS:
            creations = body.get("creations")
            first = creations[0] if isinstance(creations, list) and creations else None
            url = first.get("url") if isinstance(first, dict) else None
            now = int(time.time())
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                return [TaskUpdate(body["id"], FAILURE, {"status": FAILURE, "fail_reason": "no video was made"})]
            fields["finish_time"] = now
            fields["data"] = orjson.dumps({"kind": "vidu", "url": url, "expires_at": now + URL_LIFETIME}).decode()
        return [TaskUpdate(body["id"], status, fields)]

    @staticmethod
    def content_url(data: dict[str, Any]) -> str | None:
        """The finished video's signed URL (no key needed), or None."""
        url = data.get("url")
        return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None
