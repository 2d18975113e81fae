"""Veo on Vertex AI (channel type 41): the prediction request of api/upstream/providers/gemini/veo.py,
sent with the channel's credential as api/upstream/providers/vertex/adaptor.py sends it (a
service-account key exchanged for an access token, or an express-mode API key); the operation is
polled with `POST …/models/{model}:fetchPredictOperation {"operationName": …}`; without a `storageUri`
the videos come inline, `response.videos[].bytesBase64Encoded` (with `mimeType`), so the content is the
operation fetched again and decoded (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/
veo-video-generation).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
import time
from typing import Any

from api.upstream.base import UpstreamContext, UpstreamRequest
from api.upstream.credentials import Credential
from api.upstream.providers.gemini.veo import VeoAdaptor, veo_body
from api.upstream.providers.vertex import checks
from api.upstream.signing import google
from api.upstream.task_base import json_or_none, upstream_request

EXPRESS_HOST = "https://aiplatform.googleapis.com"
_VERTEX_OPERATION = re.compile(
    r"^(?:projects/[^/]+/locations/[^/]+/)?publishers/google/models/([^/:]+)/operations/[^/]+$")


class VeoVertexAdaptor(VeoAdaptor):
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

    def submit(self, path: str, body: dict[str, Any]) -> UpstreamRequest:
        return upstream_request("POST", self._url(body["model"], "predictLongRunning"), self._headers(),
                        veo_body(body, vertex=True))

    def fetch(self, task_ids: list[str]) -> UpstreamRequest:
        [name] = task_ids
        match = _VERTEX_OPERATION.match(name)
        if match is None:
            raise ValueError("not a Vertex AI operation name")
        return upstream_request("POST", self._url(match.group(1), "fetchPredictOperation"), self._headers(),
                        {"operationName": name})

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        if self.express:
            return
        account = google.parse_service_account(self.key)

        async def exchange() -> Credential:
            return await google.exchange(ctx.http, account, time.time())

        cache_key = "vertex:" + hashlib.sha256(self.key.encode()).hexdigest()  # the chat adaptor's entry too
        request.headers["Authorization"] = f"Bearer {await ctx.credentials.get(cache_key, exchange)}"

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
