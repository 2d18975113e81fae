"""Fakes of the video upstreams, speaking their real formats; tests set a video's state as the
upstream would report it (`finish`, `fail`) and read what the fake received in `seen`.

FakeOpenAIVideos — OpenAI's video API as another gateway or a compatible vendor serves it
(openai-python openai/resources/videos.py, openai/types/video*.py). Strict where the API is:
- `Authorization: Bearer <key>`, else 401 `invalid_api_key` (platform.openai.com/docs/api-reference/authentication);
- `POST /v1/videos` takes the multipart form the SDK sends (resources/videos.py: "multipart/form-data");
  `prompt` required; `seconds` one of "4", "8", "12" (types/video_seconds.py); `size` one of 720x1280,
  1280x720, 1024x1792, 1792x1024 (types/video_size.py); a field it does not know is refused
  (types/video_create_params.py lists them); `input_reference` an image (JPEG, PNG or WebP: the API
  reference of `input_reference`); each refusal a 400 `invalid_request_error` naming the param;
- `GET /v1/videos/{id}` and `/content` answer 404 for an id it never made; content before completion
  is a 400 (the API answers "Video is not ready yet"); `variant` is video, thumbnail or spritesheet
  (types/video_download_content_params.py);
- `DELETE /v1/videos/{id}` answers `{id, object: "video.deleted", deleted: true}` (types/
  video_delete_response.py) and the video is gone: 404 afterwards, as for an id it never made.

FakeVeoGemini — Veo on the Gemini API (ai.google.dev/gemini-api/docs/video; googleapis/python-genai
google/genai/models.py `_GenerateVideosParameters_to_mldev`, google/genai/operations.py):
- the key in `x-goog-api-key` (or `?key=`), else 403 PERMISSION_DENIED; an unknown one 400
  INVALID_ARGUMENT "API key not valid" (cloud.google.com/docs/authentication/api-keys-use);
- `POST /v1beta/models/{model}:predictLongRunning`, one instance with a `prompt`, an `image` only as
  `bytesBase64Encoded` + `mimeType` (python-genai raises on `gcsUri` for the Gemini API); parameters
  only those the SDK sends (aspectRatio 16:9 | 9:16, resolution 720p | 1080p, durationSeconds,
  negativePrompt, personGeneration, sampleCount, seed); `generateAudio` and `storageUri` are Vertex
  only (python-genai: "not supported in Gemini API"); Veo 3 durations 4, 6, 8 (ai.google.dev video
  docs, "durationSeconds"); errors `{"error": {"code", "message", "status"}}`;
- `GET /v1beta/{operation name}` answers the operation; done: `response.generateVideoResponse.
  generatedSamples[].video.uri`, a file URI `…/v1beta/files/{id}:download?alt=media` that needs the key;
  with `redirect_downloads` it answers a redirect to a signed URL without the key, as the real one may
  (the Gemini video docs' REST example downloads it with `curl -L`).

FakeVeoVertex — Veo on Vertex AI (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/
veo-video-generation): the token endpoint of FakeVertex (service accounts) or an express API key;
`…/publishers/google/models/{model}:predictLongRunning` and `:fetchPredictOperation` with
`{"operationName"}` naming an operation of that model (else 400 INVALID_ARGUMENT); parameters as
documented (sampleCount 1 to 4, durationSeconds 4, 6, 8 for Veo 3); without `storageUri` the videos
come back inline as `bytesBase64Encoded`.
"""
from __future__ import annotations

import asyncio
import base64
import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase
from tests.upstream.providers.vertex.fake_vertex import API_KEY as VERTEX_API_KEY
from tests.upstream.providers.vertex.fake_vertex import FakeVertex, api_key_of
from tests.upstream.providers.vertex.fake_vertex import error as google_error

OPENAI_KEY = "sk-video-upstream-secret"
GEMINI_KEY = "AIzaSyVideoVideoVideoVideoVideo0000000"
MP4 = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 4  # a video's first bytes, then filler
_ids = itertools.count(1)
SIZES = {"720x1280", "1280x720", "1024x1792", "1792x1024"}
SECONDS = {"4", "8", "12"}
OPENAI_FIELDS = {"prompt", "model", "seconds", "size", "input_reference"}
IMAGE_TYPES = {"image/jpeg", "image/png", "image/webp"}
VEO_GEMINI_PARAMETERS = {"aspectRatio", "resolution", "durationSeconds", "negativePrompt", "personGeneration",
                         "sampleCount", "seed"}
VEO_VERTEX_PARAMETERS = VEO_GEMINI_PARAMETERS | {"generateAudio", "storageUri", "enhancePrompt", "compressionQuality"}


def openai_error(status: int, message: str, param: str | None = None, code: str | None = None,
                 kind: str = "invalid_request_error") -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "param": param, "code": code}},
                             status=status)


@dataclass
class FakeOpenAIVideos(FakeBase):
    videos: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    fetch_gate: asyncio.Event | None = None  # a retrieve waits for it (a poll held mid-batch)
    fetch_started: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/videos", self.create)
        app.router.add_get("/v1/videos/{id}", self.retrieve)
        app.router.add_get("/v1/videos/{id}/content", self.content)
        app.router.add_delete("/v1/videos/{id}", self.delete)
        return app

    def finish(self, video_id: str) -> None:
        self.videos[video_id].update(status="completed", progress=100, completed_at=1_790_000_000,
                                     expires_at=1_790_086_400)

    def fail(self, video_id: str, message: str = "the video was blocked by moderation") -> None:
        self.videos[video_id].update(status="failed", error={"code": "moderation_blocked", "message": message})

    async def create(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        if not request.content_type.startswith("multipart/form-data"):
            return openai_error(400, "Expected a multipart/form-data body.")
        form = await request.post()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        image = form.get("input_reference")
        self.seen.append({**fields, "image": None if image is None or isinstance(image, str) else
                          (image.content_type, image.file.read())})
        unknown = set(form) - OPENAI_FIELDS
        if unknown:
            return openai_error(400, f"Unknown parameter: '{sorted(unknown)[0]}'.", sorted(unknown)[0],
                                "unknown_parameter")
        if not fields.get("prompt"):
            return openai_error(400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter")
        if fields.get("seconds", "4") not in SECONDS:
            return openai_error(400, "Invalid value for 'seconds'.", "seconds", "invalid_value")
        if fields.get("size", "720x1280") not in SIZES:
            return openai_error(400, "Invalid value for 'size'.", "size", "invalid_value")
        if image is not None and (isinstance(image, str) or image.content_type not in IMAGE_TYPES):
            return openai_error(400, "input_reference must be a JPEG, PNG or WebP image.", "input_reference")
        video_id = f"video_up{next(_ids):06d}"
        self.videos[video_id] = {"id": video_id, "object": "video", "model": fields.get("model", "sora-2"),
                                 "status": "queued", "progress": 0, "created_at": 1_789_999_000,
                                 "completed_at": None, "expires_at": None, "prompt": fields["prompt"],
                                 "seconds": fields.get("seconds", "4"), "size": fields.get("size", "720x1280"),
                                 "remixed_from_video_id": None, "error": None}
        return web.json_response(self.videos[video_id])

    def _known(self, request: web.Request) -> dict[str, Any] | web.Response:
        if request.headers.get("Authorization") != f"Bearer {OPENAI_KEY}":
            return openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        video = self.videos.get(request.match_info["id"])
        if video is None:
            return openai_error(404, "Video not found.", code="not_found")
        return video

    async def retrieve(self, request: web.Request) -> web.Response:
        video = self._known(request)
        if isinstance(video, web.Response):
            return video
        self.fetches.append(video["id"])
        self.fetch_started.set()
        if self.fetch_gate is not None:
            await self.fetch_gate.wait()
        return web.json_response(video)

    async def delete(self, request: web.Request) -> web.Response:
        video = self._known(request)
        if isinstance(video, web.Response):
            return video
        del self.videos[video["id"]]
        self.deleted.append(video["id"])
        return web.json_response({"id": video["id"], "object": "video.deleted", "deleted": True})

    async def content(self, request: web.Request) -> web.Response:
        video = self._known(request)
        if isinstance(video, web.Response):
            return video
        variant = request.query.get("variant", "video")
        if variant not in ("video", "thumbnail", "spritesheet"):
            return openai_error(400, "Invalid value for 'variant'.", "variant", "invalid_value")
        if video["status"] != "completed":
            return openai_error(400, "Video is not ready yet.", code="video_not_ready")
        if variant == "thumbnail":
            return web.Response(body=b"\x89PNGthumb", content_type="image/png")
        return web.Response(body=MP4, content_type="video/mp4")


def _veo_problem(body: Any, parameters: set[str], vertex: bool) -> str | None:
    """What Veo refuses in a prediction request (None: nothing)."""
    if not isinstance(body, dict) or set(body) - {"instances", "parameters"}:
        return "Invalid JSON payload received."
    instances = body.get("instances")
    if not isinstance(instances, list) or len(instances) != 1 or not isinstance(instances[0], dict):
        return "instances must hold one instance"
    instance = instances[0]
    if not isinstance(instance.get("prompt"), str) or not instance["prompt"]:
        return "The prompt is required."
    image = instance.get("image")
    if image is not None:
        if not vertex and "gcsUri" in image:
            return "gcsUri is not supported in Gemini API."
        if set(image) != {"bytesBase64Encoded", "mimeType"} or image["mimeType"] not in IMAGE_TYPES:
            return "image needs bytesBase64Encoded and an image mimeType"
        base64.b64decode(image["bytesBase64Encoded"], validate=True)
    params = body.get("parameters") or {}
    unknown = set(params) - parameters
    if unknown:
        return f'Invalid JSON payload received. Unknown name "{sorted(unknown)[0]}" at \'parameters\'.'
    if params.get("aspectRatio", "16:9") not in ("16:9", "9:16"):
        return "aspectRatio must be 16:9 or 9:16"
    if params.get("resolution", "720p") not in ("720p", "1080p"):
        return "resolution must be 720p or 1080p"
    if params.get("durationSeconds", 8) not in (4, 6, 8):
        return "The number value for `durationSeconds` is out of bound. Please provide a value between 4 and 8."
    if vertex and not 1 <= params.get("sampleCount", 1) <= 4:
        return "sampleCount must be 1 to 4"
    return None


@dataclass
class FakeVeoGemini(FakeBase):
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    redirect_downloads: bool = False
    signed_hits: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1beta/models/{target}", self.predict)
        app.router.add_get("/v1beta/files/{target}", self.download)
        app.router.add_get("/signed/{file}", self.signed)
        app.router.add_get("/v1beta/models/{model}/operations/{op}", self.operation)
        return app

    def _key_problem(self, request: web.Request) -> web.Response | None:
        key = api_key_of(request)
        if not key:
            return google_error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers "
                                "without established identity). Please use API Key or other form of API consumer "
                                "identity to call this API.")
        if key != GEMINI_KEY:
            return google_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                                "API_KEY_INVALID")
        return None

    def finish(self, name: str) -> None:
        file_id = name.rsplit("/", 1)[-1]
        self.operations[name] = {"name": name, "done": True, "response": {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
            "generateVideoResponse": {"generatedSamples": [
                {"video": {"uri": f"{self.url}/v1beta/files/{file_id}:download?alt=media"}}]}}}

    def fail(self, name: str, message: str = "The prompt could not be submitted.") -> None:
        self.operations[name] = {"name": name, "done": True, "error": {"code": 3, "message": message}}

    async def predict(self, request: web.Request) -> web.Response:
        problem = self._key_problem(request)
        if problem is not None:
            return problem
        model, _, action = request.match_info["target"].partition(":")
        if action != "predictLongRunning" or not model.startswith("veo-"):
            return google_error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta")
        body = await request.json()
        self.seen.append({"model": model, **body})
        why = _veo_problem(body, VEO_GEMINI_PARAMETERS, vertex=False)
        if why:
            return google_error(400, "INVALID_ARGUMENT", why)
        name = f"models/{model}/operations/op{next(_ids):06d}"
        self.operations[name] = {"name": name}
        return web.json_response({"name": name})

    async def operation(self, request: web.Request) -> web.Response:
        problem = self._key_problem(request)
        if problem is not None:
            return problem
        name = f"models/{request.match_info['model']}/operations/{request.match_info['op']}"
        if name not in self.operations:
            return google_error(404, "NOT_FOUND", "Operation not found")
        return web.json_response(self.operations[name])

    async def download(self, request: web.Request) -> web.Response:
        problem = self._key_problem(request)
        if problem is not None:
            return problem
        file_id, _, action = request.match_info["target"].partition(":")
        if action != "download" or request.query.get("alt") != "media":
            return google_error(400, "INVALID_ARGUMENT", "Only alt=media downloads are served")
        self.downloads.append(file_id)
        if self.redirect_downloads:
            raise web.HTTPFound(f"{self.url}/signed/{file_id}.mp4?Expires=1790000000&Signature=s1g")
        return web.Response(body=MP4, content_type="video/mp4")

    async def signed(self, request: web.Request) -> web.Response:
        if api_key_of(request) or request.query.get("Signature") != "s1g":  # signed: no key is needed, nor sent
            return web.Response(status=403, text="Forbidden")
        self.signed_hits += 1
        return web.Response(body=MP4, content_type="video/mp4")


class FakeVeoVertex(FakeVertex, FakeBase):
    """Vertex AI's Veo routes (both credentials) beside FakeVertex's token endpoint."""

    def __init__(self) -> None:
        super().__init__()
        self.operations: dict[str, dict[str, Any]] = {}
        self.veo_seen: list[dict[str, Any]] = []
        self.polls: list[str] = []

    @property
    def url(self) -> str:  # type: ignore[override]
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    @url.setter
    def url(self, value: str) -> None:  # FakeVertex sets it at start; the server says where it listens
        pass

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/token", self.token)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/google/models/{target}",
                            self.project_veo)
        app.router.add_post("/v1/publishers/google/models/{target}", self.express_veo)
        return app

    def finish(self, name: str) -> None:
        self.operations[name] = {"name": name, "done": True, "response": {
            "@type": "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse",
            "raiMediaFilteredCount": 0,
            "videos": [{"bytesBase64Encoded": base64.b64encode(MP4).decode(), "mimeType": "video/mp4"}]}}

    def filtered(self, name: str) -> None:
        self.operations[name] = {"name": name, "done": True, "response": {
            "@type": "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse",
            "raiMediaFilteredCount": 1, "raiMediaFilteredReasons": ["The prompt was blocked by the safety filters."]}}

    async def project_veo(self, request: web.Request) -> web.Response:
        if api_key_of(request) or not self.bearer_ok(request):
            return google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        prefix = f"projects/{request.match_info['project']}/locations/{request.match_info['region']}/"
        return await self._veo(request, prefix)

    async def express_veo(self, request: web.Request) -> web.Response:
        if api_key_of(request) != VERTEX_API_KEY:
            return google_error(401, "UNAUTHENTICATED", "Request is missing required authentication credential.",
                                "CREDENTIALS_MISSING")
        return await self._veo(request, "")

    async def _veo(self, request: web.Request, prefix: str) -> web.Response:
        model, _, action = request.match_info["target"].partition(":")
        body = orjson.loads(await request.read())
        if action == "predictLongRunning":
            self.veo_seen.append({"model": model, **body})
            why = _veo_problem(body, VEO_VERTEX_PARAMETERS, vertex=True)
            if why:
                return google_error(400, "INVALID_ARGUMENT", why)
            name = f"{prefix}publishers/google/models/{model}/operations/{next(_ids):06d}"
            self.operations[name] = {"name": name}
            return web.json_response({"name": name})
        if action == "fetchPredictOperation":
            name = body.get("operationName") if isinstance(body, dict) else None
            if set(body) != {"operationName"} or name not in self.operations or f"/models/{model}/" not in name:
                return google_error(400, "INVALID_ARGUMENT", "The operation name is not valid.")
            self.polls.append(name)
            return web.json_response(self.operations[name])
        return google_error(404, "NOT_FOUND", f"Unknown action {action}")
