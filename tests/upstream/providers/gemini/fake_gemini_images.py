"""A fake of Google's image generation: Gemini's image models (`:generateContent`, `:streamGenerateContent`
with `alt=sse`, answering `inlineData` image parts) and Imagen (`:predict`), on the Gemini API
(`/{version}/models/{model}:{action}`, `x-goog-api-key`) and on Vertex AI (FakeVertexImages: the project
and express paths of tests/upstream/providers/vertex/fake_vertex.py, its credentials checked as there).

Strict where Google is (each rule cites where the refusal is documented or reported):
- the body's structure is judged by FakeGemini (tests/upstream/providers/gemini/fake_gemini.py: only the fields the API
  defines, thinking rules, …); `responseModalities` takes TEXT, IMAGE, AUDIO
  (ai.google.dev/api/generate-content#Modality); IMAGE on a model without image output is refused:
  "Model does not support the requested response modalities: text,image" (QuantumNous/new-api#866);
- `imageConfig` has `aspectRatio` (1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9, 21:9) and
  `imageSize` (1K, 2K, 4K) only (ai.google.dev/api/generate-content#ImageConfig; googleapis
  aiplatform v1 ImageConfig: "The following aspect ratios are supported");
- an image model gives one candidate: "Multiple candidates is not enabled for models/…"
  (google-gemini/gemini-cli#10370);
- a Gemini 3 image model validates the signatures of the images it drew strictly: an image part of a
  model turn without its `thoughtSignature` is refused (ai.google.dev/gemini-api/docs/thought-signatures,
  image generation and editing);
- Imagen `:predict` takes `instances` (one, with a `prompt`), `parameters` and `labels`
  (cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/predict);
  `parameters` holds the fields google-genai writes (google/genai/models.py
  `_GenerateImagesConfig_to_vertex`); `sampleCount` 1 to 4 and `aspectRatio` one of 1:1, 3:4, 4:3,
  9:16, 16:9 (ai.google.dev/gemini-api/docs/imagen); `sampleImageSize` 1K or 2K, not on the Fast model
  (same page: the size is not available on Imagen 4 Fast).
Answers: an image part per candidate (with a thoughtSignature on Gemini 3 models, as they sign image
parts: ai.google.dev/gemini-api/docs/thought-signatures), a text part when TEXT was asked for, and
usageMetadata with per-modality counts (input images included); Imagen
`predictions[].bytesBase64Encoded` (+ mimeType), the last `filtered` of them replaced by a
`raiFilteredReason` when `includeRaiReason` is set.
"""
from __future__ import annotations

import base64
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.gemini.fake_gemini import FakeGemini, canonical
from tests.upstream.providers.vertex.fake_vertex import FakeVertex, api_key_of, error

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")
PNG_B64 = base64.b64encode(PNG).decode()
TEXT = "Here is your picture."
IMAGE_TOKENS = 1290  # one 1024×1024 image of gemini-2.5-flash-image (ai.google.dev/gemini-api/docs/pricing)
PROMPT_TOKENS = 12
INPUT_IMAGE_TOKENS = 258  # an image of 384 px or less in a prompt (ai.google.dev/gemini-api/docs/tokens)
TEXT_TOKENS = 6
SIGNATURE = "c2lnbmVkLWltYWdl"
ASPECT_RATIOS = {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}
IMAGE_SIZES = {"1K", "2K", "4K"}
IMAGEN_RATIOS = {"1:1", "3:4", "4:3", "9:16", "16:9"}
IMAGEN_PARAMETERS = {"sampleCount", "aspectRatio", "sampleImageSize", "personGeneration", "includeRaiReason",
                     "includeSafetyAttributes", "outputOptions", "negativePrompt", "seed", "addWatermark",
                     "enhancePrompt", "language", "safetySetting", "guidanceScale", "storageUri"}
RAI_REASON = "Your current safety filter threshold filtered out 1 generated images."


def is_image_model(model: str) -> bool:
    return model.startswith("gemini-") and "-image" in model


def modality_problem(config: dict[str, Any], model: str) -> str | None:
    modalities = config.get("responseModalities") or []
    if any(m not in ("TEXT", "IMAGE", "AUDIO") for m in modalities):
        return f"Invalid value at 'generation_config.response_modalities': {modalities}"
    if "IMAGE" in modalities and not is_image_model(model):
        return "Model does not support the requested response modalities: " + ",".join(m.lower() for m in modalities)
    imaging = config.get("imageConfig") or {}
    for key in imaging:
        if key not in ("aspectRatio", "imageSize"):
            return f'Invalid JSON payload received. Unknown name "{key}" at \'generation_config.image_config\'.'
    if "aspectRatio" in imaging and imaging["aspectRatio"] not in ASPECT_RATIOS:
        return f"Unsupported aspect ratio: {imaging['aspectRatio']}"
    if "imageSize" in imaging and imaging["imageSize"] not in IMAGE_SIZES:
        return f"Unsupported image size: {imaging['imageSize']}"
    if is_image_model(model) and int(config.get("candidateCount") or 1) > 1:
        return f"Multiple candidates is not enabled for models/{model}"
    return None


def image_signature_problem(body: dict[str, Any], model: str) -> str | None:
    if not (is_image_model(model) and model.startswith("gemini-3")):
        return None
    for content in body.get("contents") or ():
        for part in content.get("parts") or () if content.get("role") == "model" else ():
            if "inlineData" in part and not part.get("thoughtSignature"):
                return "Image part is missing a thought_signature in content position " \
                       f"{body['contents'].index(content) + 1}."
    return None


def imagen_problem(body: dict[str, Any], model: str) -> str | None:
    for key in body:
        if key not in ("instances", "parameters", "labels"):
            return f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
    instances = body.get("instances")
    if not isinstance(instances, list) or len(instances) != 1 or not isinstance(instances[0].get("prompt"), str):
        return "instances must hold one instance with a prompt."
    parameters = body.get("parameters") or {}
    for key in parameters:
        if key not in IMAGEN_PARAMETERS:
            return f'Invalid JSON payload received. Unknown name "{key}" at \'parameters\'.'
    count = parameters.get("sampleCount", 4)
    if not isinstance(count, int) or not 1 <= count <= 4:
        return f"Number of images {count} is out of range [1, 4]."
    if parameters.get("aspectRatio", "1:1") not in IMAGEN_RATIOS:
        return f"Unsupported aspect ratio: {parameters['aspectRatio']}"
    size = parameters.get("sampleImageSize")
    if size is not None and (size not in ("1K", "2K") or "fast" in model):
        return f"Unsupported image size {size} for model {model}."
    return None


class FakeGeminiImages:
    """Gemini image models and Imagen on the Gemini API; `handle_*` are shared with FakeVertexImages."""

    def __init__(self, key: str = "AIza-upstream", filtered: int = 0) -> None:
        self.key = key
        self.filtered = filtered  # Imagen predictions replaced by a raiFilteredReason (from the last)
        self.unsafe = False  # image models answer finishReason IMAGE_SAFETY without an image
        self.judge = FakeGemini()
        self.judge.issued.add(SIGNATURE)  # the signature this fake puts on Gemini 3 images
        self.seen: list[dict[str, Any]] = []
        self.server: Any = None

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    # -- Gemini image models --------------------------------------------------------------------------

    def parts(self, config: dict[str, Any], model: str) -> list[dict[str, Any]]:
        modalities = config.get("responseModalities") or ["TEXT"]
        parts: list[dict[str, Any]] = [{"text": TEXT}] if "TEXT" in modalities else []
        if "IMAGE" in modalities:
            image: dict[str, Any] = {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}
            if model.startswith("gemini-3"):
                image["thoughtSignature"] = SIGNATURE
            parts.append(image)
        return parts

    @staticmethod
    def usage(parts: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
        images = sum(IMAGE_TOKENS for p in parts if "inlineData" in p)
        texts = sum(TEXT_TOKENS for p in parts if "text" in p)
        details = [d for d in ({"modality": "TEXT", "tokenCount": texts} if texts else None,
                               {"modality": "IMAGE", "tokenCount": images} if images else None) if d]
        given = sum(INPUT_IMAGE_TOKENS for c in body.get("contents") or () if c.get("role") == "user"
                    for p in c.get("parts") or () if "inlineData" in p)
        prompt = [{"modality": "TEXT", "tokenCount": PROMPT_TOKENS}]
        if given:
            prompt.append({"modality": "IMAGE", "tokenCount": given})
        return {"promptTokenCount": PROMPT_TOKENS + given, "candidatesTokenCount": images + texts,
                "totalTokenCount": PROMPT_TOKENS + given + images + texts,
                "promptTokensDetails": prompt, "candidatesTokensDetails": details}

    async def generate(self, request: web.Request, body: dict[str, Any], model: str,
                       action: str) -> web.StreamResponse:
        body = canonical(body)
        config = body.get("generationConfig") or {}
        problem = self.judge.problem(body, model) or modality_problem(config, model) or \
            image_signature_problem(body, model)
        if problem:
            return error(400, "INVALID_ARGUMENT", problem)
        parts = self.parts(config, model)
        usage = self.usage(parts, body)
        if self.unsafe:  # ai.google.dev/api/generate-content#FinishReason: IMAGE_SAFETY, no content
            return web.json_response({"candidates": [{"finishReason": "IMAGE_SAFETY", "index": 0,
                                                      "finishMessage": "Unable to show the generated image."}],
                                      "usageMetadata": self.usage([], body), "modelVersion": model})
        if action == "generateContent":
            return web.json_response({"candidates": [{"content": {"role": "model", "parts": parts},
                                                      "finishReason": "STOP", "index": 0}],
                                      "usageMetadata": usage, "modelVersion": model, "responseId": "img-1"})
        if action != "streamGenerateContent" or request.query.get("alt") != "sse":
            return error(404, "NOT_FOUND", f"unknown action {action}")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for index, part in enumerate(parts):  # one part an event; the last one finishes, with the usage
            last = index == len(parts) - 1
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
            event: dict[str, Any] = {"candidates": [candidate], "responseId": "img-1"}
            if last:
                candidate["finishReason"] = "STOP"
                event["usageMetadata"] = usage
            await resp.write(b"data: " + orjson.dumps(event) + b"\r\n\r\n")
        await resp.write_eof()
        return resp

    # -- Imagen ---------------------------------------------------------------------------------------

    def predict(self, body: dict[str, Any], model: str) -> web.Response:
        if not model.startswith("imagen-"):
            return error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, or is not "
                                           "supported for predict.")
        problem = imagen_problem(body, model)
        if problem:
            return error(400, "INVALID_ARGUMENT", problem)
        parameters = body.get("parameters") or {}
        mime = (parameters.get("outputOptions") or {}).get("mimeType") or "image/png"
        count = parameters.get("sampleCount", 4)
        predictions: list[dict[str, Any]] = [{"bytesBase64Encoded": PNG_B64, "mimeType": mime}
                                             for _ in range(count - min(self.filtered, count))]
        if parameters.get("includeRaiReason"):
            predictions += [{"raiFilteredReason": RAI_REASON}] * min(self.filtered, count)
        return web.json_response({"predictions": predictions} if predictions else {})

    # -- the Gemini API -------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.seen.append({"path": request.path, "query": dict(request.query), "model": model, "action": action,
                          "headers": dict(request.headers), "body": body})
        if request.headers.get("x-goog-api-key") != self.key or "key" in request.query:
            return error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
        if action == "predict":
            return self.predict(body, model)
        return await self.generate(request, body, model, action)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{version}/models/{target}", self.handle)
        return app


class FakeVertexImages(FakeVertex):
    """Vertex AI (providers/vertex/fake_vertex.py) whose image models and Imagen answer as FakeGeminiImages."""

    def __init__(self, filtered: int = 0) -> None:
        super().__init__()
        self.images = FakeGeminiImages(filtered=filtered)

    async def drawing(self, request: web.Request) -> web.StreamResponse | None:
        """The answer of an image model or Imagen once the path's credential is accepted; None: not ours."""
        model, _, action = request.match_info["target"].partition(":")
        if not (is_image_model(model) or model.startswith("imagen-")):
            return None
        body = await request.json()
        self.images.seen.append({"path": request.path, "query": dict(request.query), "model": model,
                                 "action": action, "headers": dict(request.headers), "body": body})
        if action == "predict":
            return self.images.predict(body, model)
        return await self.images.generate(request, body, model, action)

    async def project_google(self, request: web.Request) -> web.StreamResponse:
        if not api_key_of(request) and self.bearer_ok(request):
            answer = await self.drawing(request)
            if answer is not None:
                return answer
        return await super().project_google(request)

    async def express(self, request: web.Request) -> web.StreamResponse:
        if api_key_of(request) in self.api_keys and request.match_info["publisher"] == "google":
            answer = await self.drawing(request)
            if answer is not None:
                return answer
        return await super().express(request)
