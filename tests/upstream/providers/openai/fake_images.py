"""A fake of OpenAI's image edit API (`POST /v1/images/edits`, a multipart form) and of Azure OpenAI's
(the v1 API `/openai/v1/images/edits`, the dated API `/openai/deployments/{deployment}/images/edits
?api-version=…`), answering and refusing as they do, in their error shapes. Each rule cites its source:

- a key that is not the account's: OpenAI 401 `invalid_api_key` (platform.openai.com/docs/guides/error-codes,
  "401 - Invalid Authentication"); Azure 401 `{"error":{"code":"401","message":"Access denied …"}}` with the
  key in `api-key` (tests/upstream/providers/azure/fake_azure.py's sources);
- Azure: a deployment URL without `api-version`, 404 "Resource not found" (MicrosoftDocs/azure-docs#114602);
  a deployment the resource does not have, 404 `DeploymentNotFound` (fake_azure.py's sources);
- no `prompt`, no `image`: 400 `missing_required_parameter` (both `Required` in openai-python
  src/openai/types/image_edit_params.py; the message shape is OpenAI's "Missing required parameter: 'x'.",
  openai/openai-python#1795);
- more than 16 images ("You can provide up to 16 images", image_edit_params.py `image`): 400 `invalid_value`;
- `n` outside 1..10 ("Must be between 1 and 10", `n`): 400 `integer_below_min_value` / `integer_above_max_value`
  (OpenAI's codes for integer bounds, "Invalid 'n': integer above maximum value. Expected a value <= 10, but
  got 11 instead.", openai/openai-python#2021);
- `partial_images` outside 0..3 (`partial_images`: "Value must be between 0 and 3"): 400, as `n`;
- a model outside the GPT image models (`model`: the list of image_edit_params.py; dall-e-2 and dall-e-3
  "retired on May 12, 2026", gpt-image-1 "shut down on October 23, 2026"): 400 `invalid_value` param `model`;
- a size the model does not take: gpt-image-1.5, gpt-image-1-mini and chatgpt-image-latest take the standard
  sizes `1024x1024`, `1536x1024`, `1024x1536` and `auto`, only the gpt-image-2 family "arbitrary resolutions"
  (`size`): 400 `invalid_value` param `size`;
- `input_fidelity` on a model that does not take it ("For `gpt-image-2`, omit this parameter"; "`gpt-image-1-mini`
  supports only `low`", `input_fidelity`; lobehub/lobehub#9920 quotes the 400 "input_fidelity 'high' is only
  supported …"): 400 `invalid_value` param `input_fidelity`.

Answers: `ImagesResponse` (openai-python src/openai/types/images_response.py) with `usage` {input_tokens,
input_tokens_details {text_tokens, image_tokens}, output_tokens, total_tokens}; with `stream=true` the events
`image_edit.partial_image` × partial_images then `image_edit.completed` carrying the usage
(developers.openai.com/api/reference/resources/images/edit-streaming-events; for generations
`image_generation.partial_image` / `image_generation.completed`, …/generation-streaming-events), each `event: <type>` +
`data: <json>`. Output image tokens per image follow OpenAI's table (platform.openai.com/docs/guides/
image-generation, "Cost and latency"): low 272, medium 1056, high/auto 4160 at 1024x1024.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import BodyPartReader, web

from tests.upstream.providers.kit import FakeBase

KEY = "sk-upstream-secret"
AZURE_KEY = "azure-resource-key-0123456789abcdef"
MODELS = frozenset({"gpt-image-1.5", "gpt-image-1-mini", "chatgpt-image-latest", "gpt-image-2",
                    "gpt-image-2-2026-04-21", "gpt-image-2.5-sunburst", "gpt-image-2.5-flare"})
STANDARD_ONLY = frozenset({"gpt-image-1.5", "gpt-image-1-mini", "chatgpt-image-latest"})
STANDARD_SIZES = frozenset({"1024x1024", "1536x1024", "1024x1536", "auto"})
OUTPUT_TOKENS = {"low": 272, "medium": 1056, "high": 4160, "auto": 4160}
IMAGE_TOKENS = 388  # what each input image counts in this fake
TEXT_TOKENS = 23  # what the prompt counts in this fake
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-edited-image").decode()
DENIED = ("Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for "
          "an active subscription and use a correct regional API endpoint for your resource.")


def openai_error(status: int, message: str, param: str | None, code: str | None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                         "code": code}}, status=status)


def azure_error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


def usage_of(fields: dict[str, str], images: int) -> dict[str, Any]:
    """The usage this fake reports for an edit."""
    n = int(fields.get("n") or 1)
    output = OUTPUT_TOKENS[fields.get("quality") or "auto"] * n
    text, image = TEXT_TOKENS, IMAGE_TOKENS * images
    return {"input_tokens": text + image, "input_tokens_details": {"text_tokens": text, "image_tokens": image},
            "output_tokens": output, "total_tokens": text + image + output}


@dataclass
class FakeImages(FakeBase):
    # Azure: deployment → the model deployed under that name.
    deployments: dict[str, str] = field(default_factory=lambda: {"gpt-image-1.5": "gpt-image-1.5",
                                                                 "gpt-image-2": "gpt-image-2"})
    cut_stream: bool = False  # stop a stream after its partial images, before the completed event
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/images/edits", self.openai_edit)
        app.router.add_post("/v1/images/generations", self.openai_generate)
        app.router.add_post("/openai/v1/images/edits", self.azure_edit)
        app.router.add_post("/openai/deployments/{deployment}/images/edits", self.azure_edit)
        app.router.add_route("*", "/{tail:.*}", self.not_found)
        return app

    @staticmethod
    async def not_found(request: web.Request) -> web.Response:
        return azure_error(404, "404", "Resource not found")

    async def read(self, request: web.Request) -> tuple[dict[str, str], list[tuple[str, str, str, int]]]:
        fields: dict[str, str] = {}
        files: list[tuple[str, str, str, int]] = []
        async for part in await request.multipart():
            if not isinstance(part, BodyPartReader):
                continue
            content = await part.read()
            if part.filename:
                files.append((str(part.name), part.filename, part.headers.get("Content-Type", ""), len(content)))
            else:
                fields[str(part.name)] = content.decode()
        self.seen.append({"path": request.path, "query": dict(request.query), "headers": dict(request.headers),
                          "fields": fields, "files": files})
        return fields, files

    async def openai_edit(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return openai_error(401, "Incorrect API key provided.", None, "invalid_api_key")
        fields, files = await self.read(request)
        return await self.edit(request, fields, files, fields.get("model", ""))

    async def openai_generate(self, request: web.Request) -> web.StreamResponse:
        """images.generate (a JSON body), with the same rules as an edit's but for the images."""
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return openai_error(401, "Incorrect API key provided.", None, "invalid_api_key")
        body = orjson.loads(await request.read())
        self.seen.append({"path": request.path, "headers": dict(request.headers), "fields": body, "files": []})
        fields = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in body.items()}
        refused = self.refusal(fields, [("image", "", "", 0)], fields.get("model", ""))
        if refused is not None:
            return refused
        return await self.answer(request, fields, usage_of(fields, 0), "image_generation")

    async def azure_edit(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("api-key") != AZURE_KEY:
            return azure_error(401, "401", DENIED)
        fields, files = await self.read(request)
        deployment = request.match_info.get("deployment")
        if deployment is not None and not request.query.get("api-version"):
            return azure_error(404, "404", "Resource not found")
        name = deployment if deployment is not None else fields.get("model", "")
        if name not in self.deployments:
            return azure_error(404, "DeploymentNotFound", "The API deployment for this resource does not exist.")
        return await self.edit(request, fields, files, self.deployments[name])

    async def edit(self, request: web.Request, fields: dict[str, str], files: list[tuple[str, str, str, int]],
                   model: str) -> web.StreamResponse:
        refused = self.refusal(fields, files, model)
        if refused is not None:
            return refused
        images = sum(1 for f in files if f[0] in ("image", "image[]"))
        return await self.answer(request, fields, usage_of(fields, images), "image_edit")

    async def answer(self, request: web.Request, fields: dict[str, str], usage: dict[str, Any],
                     events: str) -> web.StreamResponse:
        """The images answer, or with `stream` its events (`<events>.partial_image` × partial_images, then
        `<events>.completed` with the usage)."""
        meta = {"background": fields.get("background") or "opaque", "output_format": fields.get("output_format")
                or "png", "quality": fields.get("quality") or "high", "size": fields.get("size") or "1024x1024"}
        if fields.get("stream") != "true":
            n = int(fields.get("n") or 1)
            return web.json_response({"created": 1_764_000_000, "data": [{"b64_json": PNG}] * n, **meta,
                                      "usage": usage})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for index in range(int(fields.get("partial_images") or 0)):
            await resp.write(frame(f"{events}.partial_image", {"b64_json": PNG, "created_at": 1_764_000_000,
                                                                 "partial_image_index": index, **meta}))
        if self.cut_stream:
            assert request.transport is not None
            request.transport.close()
            return resp
        await resp.write(frame(f"{events}.completed", {"b64_json": PNG, "created_at": 1_764_000_001, **meta,
                                                        "usage": usage}))
        await resp.write_eof()
        return resp

    @staticmethod
    def refusal(fields: dict[str, str], files: list[tuple[str, str, str, int]], model: str) -> web.Response | None:
        images = sum(1 for f in files if f[0] in ("image", "image[]"))
        if not fields.get("prompt"):
            return openai_error(400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter")
        if images == 0:
            return openai_error(400, "Missing required parameter: 'image'.", "image", "missing_required_parameter")
        if images > 16:
            return openai_error(400, "Invalid 'image': at most 16 images.", "image", "invalid_value")
        for name, low, high in (("n", 1, 10), ("partial_images", 0, 3)):
            value = int(fields.get(name) or low)
            if value > high:
                return openai_error(400, f"Invalid '{name}': integer above maximum value. Expected a value <= {high}, "
                                         f"but got {value} instead.", name, "integer_above_max_value")
            if value < low:
                return openai_error(400, f"Invalid '{name}': integer below minimum value. Expected a value >= {low}, "
                                         f"but got {value} instead.", name, "integer_below_min_value")
        if model not in MODELS:
            return openai_error(400, f"Invalid value: '{model}'. Value must be a GPT image model.", "model",
                                "invalid_value")
        size = fields.get("size")
        if size and model in STANDARD_ONLY and size not in STANDARD_SIZES:
            return openai_error(400, f"Invalid value: '{size}'. Supported values are: '1024x1024', '1024x1536', "
                                     "'1536x1024', and 'auto'.", "size", "invalid_value")
        fidelity = fields.get("input_fidelity")
        if fidelity and (model.startswith("gpt-image-2") or (model == "gpt-image-1-mini" and fidelity != "low")):
            return openai_error(400, f"input_fidelity '{fidelity}' is not supported for model {model}.",
                                "input_fidelity", "invalid_value")
        return None


def frame(event: str, data: dict[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps({"type": event, **data}) + b"\n\n"
