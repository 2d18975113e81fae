"""Video tasks converted for Jimeng (即梦, Volcengine's visual service; channel type 51, new-api's number).

Wire facts (Volcengine's 即梦AI pages under volcengine.com/docs/85621: 视频生成3.0 720P (文生视频,
图生视频-首帧), 1080P and 3.0 Pro; the signature per docs/6369/67269, api/upstream/signing/volc.py;
new-api's relay/channel/task/jimeng for the key and the model names):
- every call is `POST https://visual.volcengineapi.com/?Action=<action>&Version=2022-08-31` with a JSON
  body, signed with the key pair for region `cn-north-1` and service `cv` ("本服务固定值"); the channel's
  key is `AccessKey|SecretKey` (new-api's convention for its Jimeng channels, type 51);
- `CVSync2AsyncSubmitTask` `{req_key, prompt, frames: 121 | 241 (24 × seconds + 1: 5 or 10 s),
  aspect_ratio: 16:9 | 4:3 | 1:1 | 3:4 | 9:16 | 21:9 (text-to-video only), binary_data_base64 |
  image_urls: [one image]}`; the image is a JPEG or PNG of at most 4.7 MB (at most 4096 × 4096, its
  short side at least 320, its sides within 3:1: judged by Jimeng); the prompt at most 800 characters;
- `req_key` names the model: jimeng_t2v_v30 (720P text), jimeng_i2v_first_v30 (720P image),
  jimeng_t2v_v30_1080p and jimeng_i2v_first_v30_1080 (1080P), jimeng_ti2v_v30_pro (3.0 Pro, 1080P, text
  or image); new-api's names jimeng_v30, jimeng_v30_1080p and jimeng_v30_pro pick the text or image
  req_key as a request has an image or not (its resolveJimengReqKey);
- answers `{code, message, data, request_id, status, time_elapsed}`: code 10000 is success (a
  submission's `data.task_id`); 50411–50522 content checks (HTTP 400), 50429 "Request Has Reached API
  Limit" (QPS) and 50430 "… API Concurrent Limit" (HTTP 429: the channel is busy, another one takes
  the video), 50500 and 50501 internal errors (HTTP 500, retried); Volcengine's gateway refuses a bad
  signature or key with `{"ResponseMetadata": {…, "Error": {"CodeN": 100010, "Code":
  "SignatureDoesNotMatch", "Message": …}}}`: the channel's failure, never the client's;
- `CVSync2AsyncGetResult` `{req_key, task_id}` answers `data.status` in_queue | generating | done
  (succeeded or failed as the outer code says) | not_found (none, or older than 12 hours) | expired,
  and once done `data.video_url`: a URL carrying no credential of the channel, valid 1 hour.

OpenAI's `size` picks the aspect ratio and the resolution (which must be the model's), `seconds` the
frames. The task id kept is `<req_key>/<task_id>`: a poll names the req_key, and its answer does not
name its task (read here with the id that was asked, `read_fetched`).
"""
from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from api.upstream.base import UpstreamContext, UpstreamRequest
from api.upstream.errors import RelayError
from api.upstream.signing import volc
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskUpdate,
    VideoAdaptor,
    json_or_none,
    key_pair,
    mapped_status,
    not_json,
    text,
    upstream_request,
)

HOST = "https://visual.volcengineapi.com"
REGION, SERVICE, VERSION = "cn-north-1", "cv", "2022-08-31"
OK = 10000
BUSY = frozenset({50429, 50430})  # QPS and concurrency over the account's limit
RETRIED = frozenset({50500, 50501})  # "Internal Error", "Internal RPC Error": 可重试
URL_LIFETIME = 3600  # "生成的视频URL（有效期为 1 小时）"
FRAMES = {5: 121, 10: 241}
MAX_PROMPT = 800
MAX_IMAGE = 4_700_000  # "图片文件大小：最大 4.7MB"
IMAGE_TYPES = frozenset({"image/jpeg", "image/png"})
# OpenAI's size → Jimeng's aspect ratio and the resolution it is rendered at.
SIZES = {"1280x720": ("16:9", "720p"), "720x1280": ("9:16", "720p"), "960x720": ("4:3", "720p"),
         "720x960": ("3:4", "720p"), "720x720": ("1:1", "720p"), "1680x720": ("21:9", "720p"),
         "1920x1080": ("16:9", "1080p"), "1080x1920": ("9:16", "1080p"), "1440x1080": ("4:3", "1080p"),
         "1080x1440": ("3:4", "1080p"), "1080x1080": ("1:1", "1080p"), "2520x1080": ("21:9", "1080p")}
_STATUSES = {"in_queue": "QUEUED", "processing": "QUEUED", "generating": "IN_PROGRESS", "done": SUCCESS,
             "not_found": FAILURE, "expired": FAILURE}
_LOST = {"not_found": "Jimeng has no such task (it keeps a task 12 hours)", "expired": "the task expired at Jimeng"}


@dataclass(frozen=True, slots=True)
class Model:
    """A model's req_key from text and from an image (None: it takes no such request), its resolution."""

    text: str | None
    image: str | None
    resolution: str


MODELS = {
    "jimeng_v30": Model("jimeng_t2v_v30", "jimeng_i2v_first_v30", "720p"),
    "jimeng_v30_1080p": Model("jimeng_t2v_v30_1080p", "jimeng_i2v_first_v30_1080", "1080p"),
    "jimeng_v30_pro": Model("jimeng_ti2v_v30_pro", "jimeng_ti2v_v30_pro", "1080p"),
    "jimeng_t2v_v30": Model("jimeng_t2v_v30", None, "720p"),
    "jimeng_i2v_first_v30": Model(None, "jimeng_i2v_first_v30", "720p"),
    "jimeng_t2v_v30_1080p": Model("jimeng_t2v_v30_1080p", None, "1080p"),
    "jimeng_i2v_first_v30_1080": Model(None, "jimeng_i2v_first_v30_1080", "1080p"),
    "jimeng_ti2v_v30_pro": Model("jimeng_ti2v_v30_pro", "jimeng_ti2v_v30_pro", "1080p"),
}


class JimengUnfit(RelayError):
    """A request Jimeng cannot take (a size, a duration, an image): the client's 400, nothing sent or kept."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(400, message, "invalid_request_error", "invalid_value", param, local=True)


def _req_key(model: str, image: bool, resolution: str) -> str:
    """The req_key of `model` for a request with or without an image; a model not listed goes as it is."""
    known = MODELS.get(model)
    if known is None:
        return model
    req_key = known.image if image else known.text
    if req_key is None:
        raise JimengUnfit("input_reference", f"{model} makes a video from text only: use jimeng_v30 or "
                                             "jimeng_i2v_first_v30 with an image" if image else
                          f"{model} makes a video from an image: send input_reference")
    if resolution != known.resolution:
        sizes = ", ".join(size for size, (_, tier) in SIZES.items() if tier == known.resolution)
        raise JimengUnfit("size", f"{model} renders {known.resolution}: size {sizes}")
    return req_key


def jimeng_body(body: dict[str, Any]) -> dict[str, Any]:
    """Jimeng's submission of the client's request (api/relay/tasks/video_shape.py); raises JimengUnfit."""
    fit = SIZES.get(body["size"])
    if fit is None:
        raise JimengUnfit("size", f"size {body['size']} is not one of {', '.join(SIZES)}")
    if body["seconds"] not in FRAMES:
        raise JimengUnfit("seconds", "Jimeng renders 5 or 10 seconds")
    if len(body["prompt"]) > MAX_PROMPT:
        raise JimengUnfit("prompt", f"Jimeng takes at most {MAX_PROMPT} characters of prompt")
    image = body.get("image")
    out: dict[str, Any] = {"req_key": _req_key(body["model"], bool(image), fit[1]), "prompt": body["prompt"],
                           "frames": FRAMES[body["seconds"]]}
    if not image:
        return {**out, "aspect_ratio": fit[0]}
    if image["mime"] not in IMAGE_TYPES or len(image["data"]) > MAX_IMAGE:
        raise JimengUnfit("input_reference", "Jimeng takes a JPEG or PNG image of at most 4.7 MB")
    return {**out, "binary_data_base64": [base64.b64encode(image["data"]).decode()]}


def _gateway_error(body: dict[str, Any]) -> str | None:
    """Volcengine's gateway refusal (signature, key, account), `Code: Message`; None for another answer."""
    meta = body.get("ResponseMetadata")
    error = meta.get("Error") if isinstance(meta, dict) else None
    if not isinstance(error, dict):
        return None
    return f"{error.get('Code') or error.get('CodeN') or 'refused'}: {error.get('Message') or ''}".strip()


class JimengAdaptor(VideoAdaptor):
    req_key = ""  # of this adaptor's submission (one adaptor per attempt)

    def _pair(self) -> tuple[str, str]:
        return key_pair(self.key, "Jimeng", "AccessKey|SecretKey")

    def _call(self, action: str, body: dict[str, Any]) -> UpstreamRequest:
        self._pair()  # a key that is not a pair fails here, before anything is sent
        url = f"{self.base_url or HOST}/?Action={action}&Version={VERSION}"
        return upstream_request("POST", url, {"Content-Type": "application/json"}, raw=orjson.dumps(body))

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        """Volcengine's signature of the call (api/upstream/signing/volc.py) with the key pair."""
        access, secret = self._pair()
        raw = request.body if isinstance(request.body, bytes) else b""
        request.headers = volc.sign(request.method, request.url, request.headers, raw, access_key=access,
                                    secret_key=secret, region=REGION, service=SERVICE, now=datetime.now(UTC))

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        request = jimeng_body(body)
        self.req_key = request["req_key"]
        return self._call("CVSync2AsyncSubmitTask", request)

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        refused = _gateway_error(body)
        if refused is not None:  # the channel's credentials or account: another channel may serve
            return Submitted(False, reason=self.mask(text(refused, 1000)), retry_elsewhere=True)
        answer = self.mask(body)
        code, data = body.get("code"), body.get("data")
        task_id = data.get("task_id") if isinstance(data, dict) else None
        if status != 200 or code != OK or not isinstance(task_id, str) or not task_id:
            reason = text(answer.get("message") or f"HTTP {status}", 990) + (f" ({code})" if code else "")
            return Submitted(False, answer=answer, reason=reason, busy=code in BUSY,
                             retry_elsewhere=status >= 500 or status == 429 or code in RETRIED)
        if len(task_id) > 120 or "/" in task_id or "\x00" in task_id or "/" in self.req_key:
            return Submitted(False, answer=answer, reason="the upstream answered a task id that cannot be kept")
        return Submitted(True, task_id=f"{self.req_key}/{task_id}", answer=answer)

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [task_id] = task_ids
        req_key, _, upstream_id = task_id.partition("/")
        if not req_key or not upstream_id:
            raise ValueError("not a Jimeng task id")
        return self._call("CVSync2AsyncGetResult", {"req_key": req_key, "task_id": upstream_id})

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        raise ValueError("a Jimeng answer does not name its task: read_fetched reads it")

    def read_fetched(self, task_ids: list[str], status: int, raw: bytes) -> list[TaskUpdate]:
        [task_id] = task_ids
        body = json_or_none(raw)
        if not isinstance(body, dict) or _gateway_error(body) is not None:  # tried again at the next poll
            raise ValueError(f"HTTP {status}: {str(self.mask(body))[:200]}")
        code, data = body.get("code"), body.get("data")
        if code != OK:
            if not isinstance(code, int) or code in BUSY or code in RETRIED or status >= 500:
                raise ValueError(f"HTTP {status}: {str(self.mask(body))[:200]}")
            reason = f"{body.get('message') or 'the video failed'} ({code})"  # a content check refused it
            return [TaskUpdate(task_id, FAILURE, {"status": FAILURE, "fail_reason": self.mask(text(reason, 1000))})]
        if not isinstance(data, dict):
            raise ValueError(f"not a Jimeng task: {str(self.mask(body))[:200]}")
        state = str(data.get("status"))
        upshot = mapped_status(_STATUSES, state, "Jimeng status")
        if upshot == FAILURE:
            return [TaskUpdate(task_id, FAILURE, {"status": FAILURE, "fail_reason": _LOST[state]})]
        if upshot != SUCCESS:
            return [TaskUpdate(task_id, upshot, {"status": upshot})]
        url = data.get("video_url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return [TaskUpdate(task_id, FAILURE, {"status": FAILURE, "fail_reason": "no video was made"})]
        now = int(time.time())
        result = {"kind": "jimeng", "url": url, "expires_at": now + URL_LIFETIME}
        return [TaskUpdate(task_id, SUCCESS, {"status": SUCCESS, "finish_time": now,
                                              "data": orjson.dumps(result).decode()})]

    def content_url(self, data: dict[str, Any]) -> str | None:
        """The finished video's URL (no credential of the channel: fetched keyless, or handed out);
        None for one that carries a part of the key."""
        url = data.get("url")
        if data.get("kind") != "jimeng" or not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return None
        parts = [part.strip() for part in self.key.split("|") if len(part.strip()) >= 4]
        return None if any(part in url for part in parts) else url
