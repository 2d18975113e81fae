"""Alibaba Qwen / DashScope (type 17). Chat goes through DashScope's OpenAI-compatible mode
(`{base}/compatible-mode/v1/chat/completions`); embeddings and images through the native API:
`/api/v1/services/embeddings/text-embedding/text-embedding` (`input.texts` → `output.embeddings`)
and `/api/v1/services/aigc/text2image/image-synthesis`, an asynchronous task (`X-DashScope-Async:
enable`) that the adaptor polls at `/api/v1/tasks/{id}` until it succeeds or fails. The channel's
`other`, when set, is sent as `X-DashScope-Plugin`. Native errors are `{code, message, request_id}`.
Image edits (`/v1/images/edits`) on the Qwen image models and the Wan image models, and text-to-image
on wan2.7-image(-pro) (`/api/v1/services/aigc/image-generation/generation`): ali_images.py; the Wan ones
are tasks polled like text-to-image."""
from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.upstream import client
from api.upstream.base import RelayMeta, RelayMode, TokenUsage, UpstreamContext, UpstreamRequest
from api.upstream.errors import RelayError
from api.upstream.media import fetch_image
from api.upstream.payloads import error_body, json_object, openai_error
from api.upstream.providers import ali_images
from api.upstream.providers.openai import OpenAIAdaptor

ALI_PATHS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "/compatible-mode/v1/chat/completions",
    RelayMode.EMBEDDINGS: "/api/v1/services/embeddings/text-embedding/text-embedding",
    RelayMode.IMAGES: "/api/v1/services/aigc/text2image/image-synthesis",
}
CREDENTIAL_CODES = frozenset({"InvalidApiKey", "AccessDenied.Unpurchased", "Arrearage", "AccessDenied"})
TASK_DONE = frozenset({"SUCCEEDED", "FAILED", "CANCELED", "UNKNOWN"})


def native_error(status: int, data: Mapping[str, Any]) -> RelayError:
    code = str(data.get("code") or "")
    message = str(data.get("message") or code or f"bad response status code {status}")
    if code == "Arrearage":
        return RelayError(403, message, "insufficient_quota", code)
    if code in CREDENTIAL_CODES:
        return RelayError(401, message, "authentication_error", code)
    if code == "Throttling" or code.startswith("Throttling."):
        return RelayError(429, message, "rate_limit_error", code)
    if code.startswith(("InvalidParameter", "DataInspectionFailed")):
        return RelayError(400, message, "invalid_request_error", code)
    return RelayError(status if status >= 400 else 500, message, "upstream_error", code or None)


class AliAdaptor(OpenAIAdaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = ALI_PATHS
    completes: ClassVar[bool] = True
    poll_interval: ClassVar[float] = 2.0  # seconds between two looks at an image task
    poll_limit: ClassVar[float] = 300.0  # an image task not finished by then fails
    bills_produced_images: ClassVar[bool] = True  # "billed by the images successfully generated"

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.b64 = False  # the client asked for images as base64, not URLs

    def supports(self, mode: RelayMode) -> bool:
        if mode == RelayMode.IMAGES_EDIT:
            return ali_images.edit_model(self.meta.model) is not None
        return mode in ALI_PATHS

    def image_row(self, mode: RelayMode | None = None) -> ali_images.EditModel | None:
        """The ali_images.py row of the model for an edit or a generation (None: none, or text2image)."""
        mode = mode or self.meta.mode
        if mode == RelayMode.IMAGES_EDIT:
            return ali_images.edit_model(self.meta.model)
        return ali_images.generation_model(self.meta.model) if mode == RelayMode.IMAGES else None

    @property
    def is_task(self) -> bool:
        """The answer is a task to poll: text-to-image, and the Wan models' edits."""
        row = self.image_row()
        return row.is_task if row is not None else self.meta.mode == RelayMode.IMAGES

    def request_url(self, mode: RelayMode | None = None) -> str:
        row = self.image_row(mode)
        return self.base_url + row.path if row is not None else super().request_url(mode)

    def request_headers(self) -> dict[str, str]:
        headers = super().request_headers()
        if self.meta.other.strip():
            headers["X-DashScope-Plugin"] = self.meta.other.strip()
        if self.is_task:
            headers["X-DashScope-Async"] = "enable"
        return headers

    def convert_error(self, status: int, body: bytes) -> RelayError:
        data = error_body(body)
        if isinstance(data, dict) and "code" in data and "error" not in data:
            return native_error(status, data)
        return openai_error(status, body)

    # -- embeddings (native) ------------------------------------------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        given = req.get("input")
        texts = [given] if isinstance(given, str) else [str(t) for t in given or ()]
        parameters: dict[str, Any] = {"text_type": "document"}
        if isinstance(req.get("dimensions"), int):
            parameters["dimension"] = req["dimensions"]
        return {"model": self.meta.model, "input": {"texts": texts}, "parameters": parameters}

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if body.get("code"):
            raise native_error(500, body)
        items = (body.get("output") or {}).get("embeddings") or []
        tokens = int((body.get("usage") or {}).get("total_tokens") or 0)
        out = {"object": "list", "model": self.meta.name.answered,
               "data": [{"object": "embedding", "index": item.get("text_index", i), "embedding": item.get("embedding")}
                        for i, item in enumerate(items)],
               "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        return out, TokenUsage(tokens, 0) if tokens else None

    # -- images (native, asynchronous) --------------------------------------------------------------

    def convert_image_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        self.b64 = req.get("response_format") == "b64_json"
        if self.image_row() is not None:
            return ali_images.convert_generation(req, self.meta)
        parameters: dict[str, Any] = {"n": req.get("n") if isinstance(req.get("n"), int) else 1}
        if isinstance(req.get("size"), str):
            parameters["size"] = req["size"].replace("x", "*")
        if isinstance(req.get("style"), str):
            parameters["style"] = f"<{req['style'].strip('<>')}>"
        return {"model": self.meta.model, "input": {"prompt": str(req.get("prompt") or "")}, "parameters": parameters}

    # -- image edits (ali_images.py) -----------------------------------------------------------------

    def convert_image_edit_body(self, body: Mapping[str, Any],
                                files: list[tuple[str, str, str, bytes]]) -> dict[str, Any] | None:
        self.b64 = body.get("response_format") == "b64_json"
        return ali_images.convert_request(body, files, self.meta)

    # -- the answer: a task polled to its end, or Qwen's synchronous one; its images -------------------

    async def complete(self, raw: bytes, ctx: UpstreamContext) -> bytes:
        """The answer → OpenAI's images answer (`convert_image_response` and
        `convert_image_edit_response` pass it on): a task is polled until it finishes."""
        if self.meta.mode not in (RelayMode.IMAGES, RelayMode.IMAGES_EDIT):
            return raw
        data = json_object(raw)
        if data.get("code"):
            raise native_error(500, data)
        output: Mapping[str, Any] = await self.finished_task(data, ctx) if self.is_task else data.get("output") or {}
        failed = next((r for r in output.get("results") or () if isinstance(r, Mapping) and r.get("code")), {})
        return await self.images_answer(ali_images.image_urls(output), failed, ctx)

    async def finished_task(self, submitted: Mapping[str, Any], ctx: UpstreamContext) -> Mapping[str, Any]:
        """The output of the submitted task once it succeeded (polled at `/api/v1/tasks/{id}`)."""
        task_id = (submitted.get("output") or {}).get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise RelayError(502, "the upstream answer has no task id", "upstream_error", "bad_response_body")
        deadline = time.monotonic() + self.poll_limit
        url = f"{self.base_url}/api/v1/tasks/{task_id}"
        while True:
            request = UpstreamRequest(url, {"Authorization": f"Bearer {self.meta.key}",
                                            "Accept-Encoding": "identity"}, None, "GET")
            resp = await client.send(ctx.http, request, client.timeouts(False, 30.0, 0.0))
            if not 200 <= resp.status < 300:
                raise self.convert_error(resp.status, await client.read_error(resp))
            task = json_object(await client.read_body(resp))
            output: Mapping[str, Any] = task.get("output") or {}
            status = output.get("task_status")
            if status in TASK_DONE:
                break
            if time.monotonic() >= deadline:
                raise RelayError(504, f"the image task {task_id} did not finish in {self.poll_limit:g} s",
                                 "upstream_error", "upstream_timeout")
            await asyncio.sleep(self.poll_interval)
        if status != "SUCCEEDED":
            raise native_error(500, {"code": output.get("code") or status, "message": output.get("message")
                                     or f"the image task ended {status}"})
        return output

    async def images_answer(self, urls: list[str], failed: Mapping[str, Any], ctx: UpstreamContext) -> bytes:
        """OpenAI's images answer: the URLs, or the images fetched under the media policy for
        `b64_json`. None produced is the upstream's failure (`failed`: a result's own error)."""
        if not urls:
            raise native_error(500, {"code": failed.get("code") or "NoImage",
                                     "message": failed.get("message") or "the upstream produced no image"})
        images: list[dict[str, Any]] = []
        for image_url in urls:
            if self.b64:
                _, content = await fetch_image(image_url, allow_private=ctx.allow_private_urls)
                images.append({"b64_json": base64.b64encode(content).decode()})
            else:
                images.append({"url": image_url})
        return orjson.dumps({"created": int(time.time()), "data": images, "output_format": "png"})  # DashScope: PNG
