"""A fake of Jimeng's video API (即梦, Volcengine's visual service; volcengine.com/docs/85621, the 视频生成3.0
720P, 1080P and 3.0 Pro pages), strict where the API is:

- every call is `POST /?Action=CVSync2AsyncSubmitTask|CVSync2AsyncGetResult&Version=2022-08-31` with a JSON
  body ("Content-Type: application/json"), signed for region cn-north-1 and service cv; the signature is
  recomputed here from the request with the secret key (docs/6369/67269: canonical request, string to
  sign, key derivation), written out independently of the gateway's signer; an unknown access key is
  401 InvalidAccessKey (CodeN 100009), any other mismatch 401 SignatureDoesNotMatch (CodeN 100010), in
  the gateway's `ResponseMetadata.Error` shape (Volcengine's public error codes, as clients quote them);
- a submission names a documented req_key; text-to-video (jimeng_t2v_v30, jimeng_t2v_v30_1080p) takes
  `prompt` (required, at most 800 characters), `seed`, `frames` 121 | 241, `aspect_ratio` 16:9 | 4:3 |
  1:1 | 3:4 | 9:16 | 21:9; image-to-video (jimeng_i2v_first_v30, jimeng_i2v_first_v30_1080) the same
  without `aspect_ratio` and with exactly one image in `binary_data_base64` (a JPEG or PNG of at most
  4.7 MB) or `image_urls`; jimeng_ti2v_v30_pro either. What the pages refuse is refused here with HTTP
  400 and code 50400 (the pages list no code for a refused parameter: the fake's choice);
- `full`: the account's concurrency is used up: 429 code 50430 "Request Has Reached API Concurrent
  Limit, Please Try Later"; `poll_busy`: the same answer to a query;
- a query `{req_key, task_id}` answers `data.status`: in_queue until `start`, generating, done with
  `video_url` (served at /cdn/…, no credential taken) after `finish`; `fail` answers the task's content
  check refusal (HTTP 400, code 50516 "Post Video Risk Not Pass", data null); `expire` answers expired;
  a task unknown, or asked with another req_key, not_found.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson
from aiohttp import web

from tests.upstream.providers.fake_videos import MP4
from tests.upstream.providers.kit import FakeBase

ACCESS_KEY = "AKLTjimengAccess0123456789"
SECRET_KEY = "SkJimengSecretValue0123456789abcdef=="
KEY = f"{ACCESS_KEY}|{SECRET_KEY}"
TEXT_KEYS = {"jimeng_t2v_v30", "jimeng_t2v_v30_1080p"}
IMAGE_KEYS = {"jimeng_i2v_first_v30", "jimeng_i2v_first_v30_1080"}
BOTH_KEYS = {"jimeng_ti2v_v30_pro"}
COMMON = {"req_key", "prompt", "seed", "frames"}
RATIOS = {"16:9", "4:3", "1:1", "3:4", "9:16", "21:9"}
_AUTH = re.compile(r"^HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/request, "
                   r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")
_ids = itertools.count(7392616336519610409)


def gateway_error(status: int, code: str, code_n: int, message: str) -> web.Response:
    return web.json_response({"ResponseMetadata": {"RequestId": "req-fake", "Service": "cv", "Region": "cn-north-1",
                                                   "Error": {"CodeN": code_n, "Code": code, "Message": message}}},
                             status=status)


def jimeng_answer(code: int, message: str, data: Any, status: int = 200) -> web.Response:
    return web.json_response({"code": code, "message": message, "data": data, "request_id": "req-fake",
                              "status": code, "time_elapsed": "1ms"}, status=status)


def refused(message: str) -> web.Response:
    return jimeng_answer(50400, message, None, status=400)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signature_problem(request: web.Request, body: bytes) -> web.Response | None:
    """Volcengine's refusal of the request's signature (None: signed with SECRET_KEY for cv in cn-north-1)."""
    match = _AUTH.match(request.headers.get("Authorization", ""))
    if match is None:
        return gateway_error(401, "SignatureDoesNotMatch", 100010, "the request is not signed")
    access, date, region, service, signed, signature = match.groups()
    if access != ACCESS_KEY:
        return gateway_error(401, "InvalidAccessKey", 100009, "The specified access key is invalid")
    x_date = request.headers.get("X-Date", "")
    names = signed.split(";")
    payload = hashlib.sha256(body).hexdigest()
    if (region, service) != ("cn-north-1", "cv") or x_date[:8] != date or not {"host", "x-date"} <= set(names) \
            or request.headers.get("X-Content-Sha256", payload) != payload:
        return gateway_error(401, "SignatureDoesNotMatch", 100010, "The request signature we calculated does not "
                             "match the signature you provided.")
    query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(request.query.items()))
    headers = "".join(f"{name}:{request.headers.get(name, '').strip()}\n" for name in names)
    canonical = "\n".join([request.method, request.path, query, headers, signed, payload])
    key = SECRET_KEY.encode()
    for part in (date, region, service, "request"):
        key = _hmac(key, part)
    to_sign = "\n".join(["HMAC-SHA256", x_date, f"{date}/{region}/{service}/request",
                         hashlib.sha256(canonical.encode()).hexdigest()])
    if not hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), signature):
        return gateway_error(401, "SignatureDoesNotMatch", 100010, "The request signature we calculated does not "
                             "match the signature you provided.")
    return None


@dataclass
class FakeJimeng(FakeBase):
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    polls: list[tuple[str, str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # the gateway's refusals (signature, key)
    downloads: int = 0
    full: bool = False
    poll_busy: bool = False

    def app(self) -> web.Application:
        app = web.Application(client_max_size=20 * 1024 * 1024)
        app.router.add_post("/", self.call)
        app.router.add_get("/cdn/{name}", self.cdn)
        return app

    def start(self, task_id: str) -> None:
        self.tasks[task_id]["status"] = "generating"

    def finish(self, task_id: str) -> None:
        self.tasks[task_id].update(status="done", video_url=f"{self.url}/cdn/{task_id}.mp4?x-expires=3600")

    def fail(self, task_id: str, message: str = "Post Video Risk Not Pass") -> None:
        self.tasks[task_id].update(status="done", code=50516, message=message)

    def expire(self, task_id: str) -> None:
        self.tasks[task_id]["status"] = "expired"

    async def call(self, request: web.Request) -> web.Response:
        raw = await request.read()
        problem = signature_problem(request, raw)
        if problem is not None:
            self.refusals.append(request.headers.get("Authorization", ""))
            return problem
        action, version = request.query.get("Action"), request.query.get("Version")
        if version != "2022-08-31" or action not in ("CVSync2AsyncSubmitTask", "CVSync2AsyncGetResult"):
            return gateway_error(404, "InvalidActionOrVersion", 100008, f"{action} {version} is not an action")
        if request.headers.get("Content-Type") != "application/json":
            return refused("the body must be application/json")
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return refused("the body is not JSON")
        if not isinstance(body, dict):
            return refused("the body is not an object")
        return self.submit(body) if action == "CVSync2AsyncSubmitTask" else self.query(body)

    def submit(self, body: dict[str, Any]) -> web.Response:
        self.seen.append(body)
        why = _problem(body)
        if why is not None:
            return refused(why)
        if self.full:
            return jimeng_answer(50430, "Request Has Reached API Concurrent Limit, Please Try Later", None, 429)
        task_id = str(next(_ids))
        self.tasks[task_id] = {"req_key": body["req_key"], "status": "in_queue", "code": 10000, "message": "Success"}
        return jimeng_answer(10000, "Success", {"task_id": task_id})

    def query(self, body: dict[str, Any]) -> web.Response:
        if set(body) - {"req_key", "task_id", "req_json"} or not isinstance(body.get("task_id"), str):
            return refused("a query takes req_key, task_id and req_json")
        self.polls.append((str(body.get("req_key")), body["task_id"]))
        if self.poll_busy:
            return jimeng_answer(50430, "Request Has Reached API Concurrent Limit, Please Try Later", None, 429)
        task = self.tasks.get(body["task_id"])
        if task is None or task["req_key"] != body.get("req_key"):
            return jimeng_answer(10000, "Success", {"status": "not_found", "video_url": ""})
        if task["code"] != 10000:
            return jimeng_answer(task["code"], task["message"], None, status=400)
        return jimeng_answer(10000, "Success", {"status": task["status"], "video_url": task.get("video_url", ""),
                                                "aigc_meta_tagged": False})

    async def cdn(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization"):  # nothing of the channel's travels to the CDN
            return web.Response(status=400, text="unexpected credential")
        if request.match_info["name"].removesuffix(".mp4") not in self.tasks:
            return web.Response(status=404)
        self.downloads += 1
        return web.Response(body=MP4, content_type="video/mp4")


def _problem(body: dict[str, Any]) -> str | None:
    """What Jimeng refuses in a submission (None: nothing)."""
    req_key = body.get("req_key")
    if req_key not in TEXT_KEYS | IMAGE_KEYS | BOTH_KEYS:
        return f"Invalid req_key: {req_key}"
    allowed = COMMON | ({"aspect_ratio"} if req_key not in IMAGE_KEYS else set()) \
        | ({"binary_data_base64", "image_urls"} if req_key not in TEXT_KEYS else set())
    unknown = sorted(set(body) - allowed)
    if unknown:
        return f"Invalid parameter: {unknown[0]}"
    prompt = body.get("prompt")
    if (req_key not in BOTH_KEYS or not body.get("binary_data_base64")) and (not isinstance(prompt, str) or not prompt):
        return "prompt is required"
    if isinstance(prompt, str) and len(prompt) > 800:
        return "prompt is longer than 800 characters"
    if body.get("frames", 121) not in (121, 241):
        return "frames must be 121 or 241"
    if body.get("aspect_ratio", "16:9") not in RATIOS:
        return "aspect_ratio is not one of 16:9, 4:3, 1:1, 3:4, 9:16, 21:9"
    images = body.get("binary_data_base64")
    if req_key in IMAGE_KEYS and images is None and body.get("image_urls") is None:
        return "binary_data_base64 or image_urls is required"
    if images is not None:
        if not isinstance(images, list) or len(images) != 1 or not isinstance(images[0], str):
            return "binary_data_base64 takes one image"
        try:
            data = base64.b64decode(images[0], validate=True)
        except (binascii.Error, ValueError):
            return "binary_data_base64 is not base64"
        if not (data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8")) or len(data) > 4_700_000:
            return "the image must be a JPEG or PNG of at most 4.7MB"
    return None
