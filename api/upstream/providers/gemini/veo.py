"""Video tasks converted for Google's Veo: on the Gemini API (channel type 24) here, and on Vertex AI (41)
in api/upstream/providers/vertex/veo.py.

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
import time
from typing import Any
from urllib.parse import urlsplit

import orjson

from api.upstream.base import UpstreamRequest
from api.upstream.task_base import (
    FAILURE,
    SUCCESS,
    Submitted,
    TaskUpdate,
    VideoAdaptor,
    json_or_none,
    not_json,
    text,
    upstream_request,
)

GEMINI_HOST = "https://generativelanguage.googleapis.com"
# OpenAI's size → Veo's aspect ratio and resolution (the sizes Veo renders: 720p and 1080p, landscape or portrait).
SIZES = {"1280x720": ("16:9", "720p"), "720x1280": ("9:16", "720p"),
         "1920x1080": ("16:9", "1080p"), "1080x1920": ("9:16", "1080p")}


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


class VeoAdaptor(VideoAdaptor):
    """What Veo reads alike on both APIs: the operation a submission answers, and the operation polled."""

    vertex = False

    @classmethod
    def unfit(cls, body: dict[str, Any]) -> tuple[str, str] | None:
        try:
            veo_body(body, vertex=cls.vertex)
        except VeoUnfit as unfit:
            return "size", str(unfit)
        return None

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
            reasons = (response.get("raiMediaFilteredReasons") or
                       (response.get("generateVideoResponse") or {}).get("raiMediaFilteredReasons"))
            reason = "; ".join(map(str, reasons)) if isinstance(reasons, list) and reasons else "no video was made"
            return [TaskUpdate(op["name"], FAILURE, {"status": FAILURE, "fail_reason": self.mask(text(reason, 1000))})]
        fields = {"status": SUCCESS, "finish_time": int(time.time()), "data": orjson.dumps(data).decode()}
        return [TaskUpdate(op["name"], SUCCESS, fields)]

    def result(self, response: dict[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError


class VeoGeminiAdaptor(VeoAdaptor):
    """Veo on the Gemini API."""

    def _base(self) -> str:
        return self.base_url or GEMINI_HOST

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.key, "Content-Type": "application/json"}

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        return upstream_request("POST", f"{self._base()}/v1beta/models/{body['model']}:predictLongRunning",
                                self._headers(), veo_body(body, vertex=False))

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [name] = task_ids
        return upstream_request("GET", f"{self._base()}/v1beta/{name}", {"x-goog-api-key": self.key})

    def result(self, response: dict[str, Any]) -> dict[str, Any] | None:
        samples = (response.get("generateVideoResponse") or {}).get("generatedSamples")
        if not isinstance(samples, list) or not samples or not isinstance(samples[0], dict):
            return None
        uri = (samples[0].get("video") or {}).get("uri")
        return {"kind": "veo", "uri": uri} if isinstance(uri, str) and uri else None

    def content(self, data: dict[str, Any]) -> UpstreamRequest | None:
        """The video file, asked with the key — only of the channel's own origin (None: elsewhere)."""
        uri = str(data.get("uri") or "")
        mine, there = urlsplit(self._base()), urlsplit(uri)
        if (there.scheme, there.netloc) != (mine.scheme, mine.netloc):
            return None
        return upstream_request("GET", uri, {"x-goog-api-key": self.key})
