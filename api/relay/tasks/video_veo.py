"""Video tasks converted for Google's Veo: on the Gemini API (channel type 24) and on Vertex AI (41).

Both take a long-running prediction (googleapis/python-genai, google/genai/models.py
`generate_videos`; ai.google.dev/gemini-api/docs/video; cloud.google.com/vertex-ai/generative-ai/docs/
model-reference/veo-video-generation): `POST …/models/{model}:predictLongRunning` with
`{"instances": [{"prompt", "image": {"bytesBase64Encoded", "mimeType"}}], "parameters":
{"aspectRatio": "16:9" | "9:16", "resolution": "720p" | "1080p", "durationSeconds", "sampleCount"}}`
answers an operation `{"name": …}`; the operation, once `done`, holds `error: {code, message}` or the
videos. OpenAI's `size` becomes the aspect ratio and resolution (SIZES); `seconds` the duration.

- Gemini API: `x-goog-api-key: <key>`; `GET /v1beta/{operation name}` polls; the answer is
  `response.generateVideoResponse.generatedSamples[].video.uri`, a file URI that needs the key
  (`raiMediaFilteredCount`/`raiMediaFilteredReasons` when the safety filters took the videos).
  The content is always proxied: the URI is only ever asked with the key, and only on the channel's
  own origin.
- Vertex AI: the channel's credential as api/upstream/providers/vertex/adaptor.py sends it (a
  service-account key exchanged for an access token, or an express-mode API key); the operation is
  polled with `POST …/models/{model}:fetchPredictOperation {"operationName": …}`; without a
  `storageUri` the videos come inline, `response.videos[].bytesBase64Encoded` (with `mimeType`), so
  the content is the operation fetched again and decoded.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from api.relay.tasks.base import FAILURE, SUCCESS, Submitted, TaskUpdate, Upstream, text
from api.relay.tasks.video_adaptor import VideoAdaptor, json_or_none, not_json
from api.upstream.credentials import Credential, process_credentials
from api.upstream.providers.vertex import checks
from api.upstream.signing import google

GEMINI_HOST = "https://generativelanguage.googleapis.com"
EXPRESS_HOST = "https://aiplatform.googleapis.com"
# OpenAI's size → Veo's aspect ratio and resolution (the sizes Veo renders: 720p and 1080p, landscape or portrait).
SIZES = {"1280x720": ("16:9", "720p"), "720x1280": ("9:16", "720p"),
         "1920x1080": ("16:9", "1080p"), "1080x1920": ("9:16", "1080p")}
_VERTEX_OPERATION = re.compile(
    r"^(?:projects/[^/]+/locations/[^/]+/)?publishers/google/models/([^/:]+)/operations/[^/]+$")


class VeoUnfit(ValueError):
    """A request Veo cannot take (a size or a duration it has not): the client's 400."""


def durations(model: str) -> frozenset[int]:
    """The clip lengths a Veo model renders: Veo 2 five to eight seconds, Veo 3 four, six or eight."""
    return frozenset(range(5, 9)) if model.startswith("veo-2") else frozenset({4, 6, 8})


def veo_body(body: dict[str, Any], vertex: bool) -> dict[str, Any]:
    """The client's request (api/relay/tasks/video_shape.py) as Veo's prediction request."""
    fit = SIZES.get(body["size"])
    if fit is None:
        raise VeoUnfit(f"size {body['size']} is not one of {', '.join(SIZES)}")
    if body["seconds"] not in durations(body["model"]):
        raise VeoUnfit(f"{body['model']} renders {', '.join(map(str, sorted(durations(body['model']))))} seconds")
    instance: dict[str, Any] = {"prompt": body["prompt"]}
    image = body.get("image")
    if image:
        instance["image"] = {"bytesBase64Encoded": base64.b64encode(image["data"]).decode(), "mimeType": image["mime"]}
    parameters: dict[str, Any] = {"aspectRatio": fit[0], "resolution": fit[1], "durationSeconds": body["seconds"]}
    if vertex:
        parameters["sampleCount"] = 1
    return {"instances": [instance], "parameters": parameters}


class _Veo(VideoAdaptor):
    vertex = False

    def read_submit(self, status: int, raw: bytes) -> Submitted:
        body = json_or_none(raw)
        if not isinstance(body, dict):
            return not_json(status)
        answer = self.mask(body)
        name = body.get("name")
        if status != 200 or not isinstance(name, str) or not name:
            error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
            return Submitted(False, answer=answer, reason=str(error.get("message") or f"HTTP {status}"),
                             retry_elsewhere=status >= 500 or status == 429)
        if len(name) > 191 or "\x00" in name:
            return Submitted(False, answer=answer, reason="the upstream answered an operation name too long to keep")
        return Submitted(True, task_id=name, answer=answer)

    def read_fetch(self, raw: bytes) -> list[TaskUpdate]:
        op = json_or_none(raw)
        if not isinstance(op, dict) or not isinstance(op.get("name"), str):
            raise ValueError(f"not an operation: {str(self.mask(op))[:200]}")
        if not op.get("done"):
            return [TaskUpdate(op["name"], "IN_PROGRESS", {"status": "IN_PROGRESS"})]
        error = op.get("error")
        if isinstance(error, dict):
            reason = self.mask(text(error.get("message") or error.get("status") or "the video failed", 1000))
            return [TaskUpdate(op["name"], FAILURE, {"status": FAILURE, "fail_reason": reason})]
        response: dict[str, Any] = op["response"] if isinstance(op.get("response"), dict) else {}
        data = self.result(response)
        if data is None:
            reasons = response.get("raiMediaFilteredReasons") or \
                (response.get("generateVideoResponse") or {}).get("raiMediaFilteredReasons")
            reason = "; ".join(map(str, reasons)) if isinstance(reasons, list) and reasons else "no video was made"
            return [TaskUpdate(op["name"], FAILURE, {"status": FAILURE, "fail_reason": self.mask(text(reason, 1000))})]
        fields = {"status": SUCCESS, "finish_time": int(time.time()), "data": orjson.dumps(data).decode()}
        return [TaskUpdate(op["name"], SUCCESS, fields)]

    def result(self, response: dict[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError


class VeoGeminiAdaptor(_Veo):
    """Veo on the Gemini API."""

    def _base(self) -> str:
        return self.base_url or GEMINI_HOST

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.key, "Content-Type": "application/json"}

    def submit(self, path: str, body: dict[str, Any]) -> Upstream:
        return Upstream("POST", f"{self._base()}/v1beta/models/{body['model']}:predictLongRunning", self._headers(),
                        veo_body(body, vertex=False))

    def fetch(self, task_ids: list[str]) -> Upstream:
        [name] = task_ids
        return Upstream("GET", f"{self._base()}/v1beta/{name}", {"x-goog-api-key": self.key})

    def result(self, response: dict[str, Any]) -> dict[str, Any] | None:
        samples = (response.get("generateVideoResponse") or {}).get("generatedSamples")
        if not isinstance(samples, list) or not samples or not isinstance(samples[0], dict):
            return None
        uri = (samples[0].get("video") or {}).get("uri")
        return {"kind": "veo", "uri": uri} if isinstance(uri, str) and uri else None

    def content(self, data: dict[str, Any]) -> Upstream | None:
        """The video file, asked with the key — only of the channel's own origin (None: elsewhere)."""
        uri = str(data.get("uri") or "")
        mine, there = urlsplit(self._base()), urlsplit(uri)
        if (there.scheme, there.netloc) != (mine.scheme, mine.netloc):
            return None
        return Upstream("GET", uri, {"x-goog-api-key": self.key})


class VeoVertexAdaptor(_Veo):
    """Veo on Vertex AI (a service-account key or an express-mode API key)."""

    vertex = True
    answer_limit = 256 * 1024 * 1024  # the operation carries the video inline, in base64
    fetch_timeout = 120.0  # and a finished one is read whole

    @property
    def express(self) -> bool:
        return checks.is_api_key(self.key)

    def _host(self, region: str) -> str:
        if self.base_url:
            return self.base_url
        return EXPRESS_HOST if self.express or region == "global" else f"https://{region}-aiplatform.googleapis.com"

    def _model_path(self, model: str) -> str:
        if self.express:
            return f"publishers/google/models/{model}"
        account = google.parse_service_account(self.key)
        region = checks.region_for(self.other, model)
        return f"projects/{account.project_id}/locations/{region}/publishers/google/models/{model}"

    def _url(self, model: str, action: str) -> str:
        region = "global" if self.express else checks.region_for(self.other, model)
        return f"{self._host(region)}/v1/{self._model_path(model)}:{action}"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        return {**headers, "x-goog-api-key": self.key.strip()} if self.express else headers

    def submit(self, path: str, body: dict[str, Any]) -> Upstream:
        return Upstream("POST", self._url(body["model"], "predictLongRunning"), self._headers(),
                        veo_body(body, vertex=True))

    def fetch(self, task_ids: list[str]) -> Upstream:
        [name] = task_ids
        match = _VERTEX_OPERATION.match(name)
        if match is None:
            raise ValueError("not a Vertex AI operation name")
        return Upstream("POST", self._url(match.group(1), "fetchPredictOperation"), self._headers(),
                        {"operationName": name})

    async def authorize(self, up: Upstream, http: aiohttp.ClientSession) -> Upstream:
        if self.express:
            return up
        account = google.parse_service_account(self.key)

        async def exchange() -> Credential:
            return await google.exchange(http, account, time.time())

        cache_key = "vertex:" + hashlib.sha256(self.key.encode()).hexdigest()  # the chat adaptor's entry too
        token = await process_credentials().get(cache_key, exchange)
        return Upstream(up.method, up.url, {**up.headers, "Authorization": f"Bearer {token}"}, up.body, up.raw)

    def result(self, response: dict[str, Any]) -> dict[str, Any] | None:
        videos = response.get("videos")
        if not isinstance(videos, list) or not videos or not isinstance(videos[0], dict):
            return None
        first = videos[0]
        mime = first.get("mimeType") if isinstance(first.get("mimeType"), str) else "video/mp4"
        if isinstance(first.get("bytesBase64Encoded"), str):
            return {"kind": "vertex", "inline": True, "mimeType": mime}
        if isinstance(first.get("gcsUri"), str):
            return {"kind": "vertex", "gcsUri": first["gcsUri"], "mimeType": mime}
        return None


def inline_video(raw: bytes) -> tuple[str, bytes] | None:
    """(mime type, bytes) of the first video a finished Vertex operation carries inline."""
    op = json_or_none(raw)
    videos = ((op or {}).get("response") or {}).get("videos") if isinstance(op, dict) else None
    if not isinstance(videos, list) or not videos or not isinstance(videos[0], dict):
        return None
    try:
        data = base64.b64decode(str(videos[0].get("bytesBase64Encoded") or ""), validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = videos[0].get("mimeType")
    return (mime if isinstance(mime, str) and mime.startswith("video/") else "video/mp4"), data
