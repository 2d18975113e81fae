"""A strict fake of DashScope's image edit endpoints (Alibaba Cloud Model Studio), for
tests/upstream/providers/ali/test_ali_image_edits.py: what DashScope documents as refused is refused, in its native
shape `{code, message, request_id}` with the documented HTTP status. Sources (stored copies):

- [codes] DashScope status codes, help.aliyun.com/zh/dashscope/return-status-code-description and
  alibabacloud.com/help/en/model-studio/developer-reference/error-code: 400 InvalidParameter
  ("Required parameter(s) missing or invalid"), 400 InvalidParameter.DataInspection ("The media format
  is not supported or incorrect"), 400 BadRequest.EmptyInput, 400 DataInspectionFailed, 401
  InvalidApiKey, 403 AccessDenied.
- [qwen] "Qwen - image editing API reference", alibabacloud.com/help/en/model-studio/qwen-image-edit:
  one user message whose content holds 1 to 3 images and exactly one text ("Missing text or multiple
  text entries will return an error"), images as URLs or `data:{MIME_type};base64,{data}` (JPG, JPEG,
  PNG, BMP, TIFF, WEBP, GIF; at most 10 MB), `n` 1-6 (qwen-image-edit: 1), size `width*height`; the
  answer `output.choices[0].message.content[{"image": url}]`, `usage {image_count, width, height}`.
- [wan] "Wan2.5 - general image editing", alibabacloud.com/help/en/model-studio/wan2-5-image-edit-api-
  reference, and docs.qwencloud.com/api-reference/image-generation/wan25-general-image-editing: the
  header `X-DashScope-Async: enable` is required ("Omitting this header returns a 'current user api
  does not support synchronous calls' error"), `input.prompt` and `input.images` (at most 3, JPEG, JPG,
  PNG, BMP, WEBP, 10 MB), `n` 1-4; the task answered `{output: {task_id, task_status}}`, then at
  `GET /api/v1/tasks/{id}` PENDING/RUNNING until SUCCEEDED with `results[{url}]` and `usage.image_count`.
- [wanx] alibabacloud.com/help/en/model-studio/wanx-image-edit-api-reference: wanx2.1-imageedit takes
  `input.function` (description_edit, …), `input.prompt` and `input.base_image_url`, `n` 1-4.
- [wan-image] "Wan2.6 - image generation and editing" (alibabacloud.com/help/en/model-studio/wan-image-
  generation-api-reference; docs.qwencloud.com/api-reference/image-generation/wan26-image-gen-edit/create-task,
  query-result) and "Wan2.7 - image generation and editing" (…/wan-image-generation-and-editing-api-reference):
  the task endpoint requires `X-DashScope-Async: enable`; one user message with exactly one text and, for
  wan2.6-image's editing, 1 to 4 images (wan2.7: 0 to 9; JPEG, PNG, BMP, WEBP), `n` 1-4, size `W*H` or (wan2.7)
  `1K`/`2K`, `4K` for wan2.7-image-pro's text-to-image only; the task answers `choices[].message.content[{image,
  type}]` one image a choice, and `usage {image_count, size}`.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.upstream.providers.kit import FakeBase

KEY = "sk-dashscope-images"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")
QWEN = {"qwen-image-edit": (3, 1), "qwen-image-edit-plus": (3, 6), "qwen-image-edit-max": (3, 6),
        "qwen-image-2.0-pro": (3, 6)}  # model → (most input images, most output images) [qwen]
WAN = {"wan2.5-i2i-preview": (3, 4), "wanx2.1-imageedit": (1, 4)}  # [wan], [wanx]
WAN_IMAGE = {"wan2.6-image": (1, 4, 4), "wan2.7-image": (0, 9, 4), "wan2.7-image-pro": (0, 9, 4)}  # (least
# and most images in, most out) [wan-image]
QWEN_FORMATS = {"image/jpeg", "image/png", "image/bmp", "image/tiff", "image/webp", "image/gif"}
WAN_FORMATS = {"image/jpeg", "image/png", "image/bmp", "image/webp"}
MAGIC = {"image/png": b"\x89PNG", "image/jpeg": b"\xff\xd8\xff", "image/gif": b"GIF8", "image/bmp": b"BM"}
DATA_URL = re.compile(r"^data:(image/[a-z]+);base64,(.+)$", re.S)
MAX_BYTES = 10 * 1024 * 1024


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def invalid(message: str) -> Refused:
    return Refused(400, "InvalidParameter", message)


@dataclass
class FakeDashScopeImages(FakeBase):
    produce: int | None = None  # images an answer holds (None: as many as asked)
    refuse_content: bool = False  # answer DataInspectionFailed, as a moderated request is
    polls_before_done: int = 1
    seen: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    fetched: list[str] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/v1/services/aigc/multimodal-generation/generation", self.qwen)
        app.router.add_post("/api/v1/services/aigc/image2image/image-synthesis", self.wan)
        app.router.add_post("/api/v1/services/aigc/image-generation/generation", self.wan_image)
        app.router.add_get("/api/v1/tasks/{id}", self.task)
        app.router.add_get("/files/{name}", self.file)
        return app

    async def _body(self, request: web.Request) -> dict[str, Any]:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            raise Refused(401, "InvalidApiKey", "Invalid API-key provided.")  # [codes]
        body = await request.json()
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        if self.refuse_content:
            raise Refused(400, "DataInspectionFailed", "Input or output data may contain inappropriate content.")
        return body if isinstance(body, dict) else {}

    async def qwen(self, request: web.Request) -> web.Response:
        try:
            body = await self._body(request)
            most_in, most_out = self._model(body, QWEN)
            self._message(body, 1, most_in, QWEN_FORMATS)
            count = self._count(body, most_out)
        except Refused as refused:
            return error(refused)
        made = [self._url(f"qwen-{len(self.seen)}-{i}") for i in range(count)]
        return web.json_response({"output": {"choices": [{"finish_reason": "stop", "message": {
            "role": "assistant", "content": [{"image": url} for url in made]}}]},
            "usage": {"image_count": len(made), "width": 1024, "height": 1024}, "request_id": "rq-qwen"})

    async def wan(self, request: web.Request) -> web.Response:
        try:
            if request.headers.get("X-DashScope-Async") != "enable":  # [wan]
                raise Refused(403, "AccessDenied", "current user api does not support synchronous calls")
            body = await self._body(request)
            most_in, most_out = self._model(body, WAN)
            given = body.get("input") or {}
            if not str(given.get("prompt") or "").strip():
                raise Refused(400, "BadRequest.EmptyInput", "Required input parameter missing from request.")
            if body["model"].startswith("wanx2.1"):  # [wanx]
                if given.get("function") != "description_edit" or "images" in given:
                    raise invalid("input.function must be one of the documented functions")
                images = [given.get("base_image_url")]
            else:
                images = given.get("images") or []
            if not 1 <= len(images) <= most_in:
                raise invalid(f"the number of images must be between 1 and {most_in}")
            for image in images:
                check_image(image, WAN_FORMATS)
            count = self._count(body, most_out)
        except Refused as refused:
            return error(refused)
        task_id = f"edit-task-{len(self.tasks) + 1}"
        self.tasks[task_id] = {"polls": 0, "count": count}
        return web.json_response({"output": {"task_id": task_id, "task_status": "PENDING"}, "request_id": "rq-wan"})

    async def wan_image(self, request: web.Request) -> web.Response:
        try:
            if request.headers.get("X-DashScope-Async") != "enable":  # [wan-image]
                raise Refused(403, "AccessDenied", "current user api does not support synchronous calls")
            body = await self._body(request)
            least_in, most_in, most_out = WAN_IMAGE.get(str(body.get("model")), (0, 0, 0))
            if not most_out:
                raise invalid("Model not exist.")
            images = self._message(body, least_in, most_in, WAN_FORMATS)
            size = (body.get("parameters") or {}).get("size")
            pixels = re.match(r"^(\d+)\*(\d+)$", str(size))
            large = size == "4K" or pixels is not None and int(pixels[1]) * int(pixels[2]) > 2048 * 2048
            if large and (images or body["model"] != "wan2.7-image-pro"):
                raise invalid("parameters.size: 4K is for wan2.7-image-pro's text-to-image only")
            count = self._count(body, most_out, () if body["model"] == "wan2.6-image" else ("1K", "2K", "4K"))
        except Refused as refused:
            return error(refused)
        task_id = f"wan-image-task-{len(self.tasks) + 1}"
        self.tasks[task_id] = {"polls": 0, "count": count, "choices": True}
        return web.json_response({"output": {"task_id": task_id, "task_status": "PENDING"}, "request_id": "rq-wi"})

    async def task(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return error(Refused(401, "InvalidApiKey", "Invalid API-key provided."))
        task_id = request.match_info["id"]
        task = self.tasks[task_id]
        task["polls"] += 1
        if task["polls"] <= self.polls_before_done:
            return web.json_response({"output": {"task_id": task_id, "task_status": "RUNNING"}})
        if task.get("choices"):  # [wan-image]: one image a choice
            choices = [{"finish_reason": "stop", "message": {"role": "assistant", "content": [
                {"image": self._url(f"{task_id}-{i}"), "type": "image"}]}} for i in range(task["count"])]
            return web.json_response({"output": {"task_id": task_id, "task_status": "SUCCEEDED", "finished": True,
                                                 "choices": choices}, "request_id": "rq-task",
                                      "usage": {"image_count": len(choices), "size": "1024*1024",
                                                "input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})
        made = [{"url": self._url(f"{task_id}-{i}")} for i in range(task["count"])]
        return web.json_response({"output": {"task_id": task_id, "task_status": "SUCCEEDED", "results": made,
                                             "task_metrics": {"TOTAL": len(made), "SUCCEEDED": len(made),
                                                              "FAILED": 0}},
                                  "usage": {"image_count": len(made)}, "request_id": "rq-task"})

    async def file(self, request: web.Request) -> web.Response:
        self.fetched.append(request.match_info["name"])
        return web.Response(body=PNG, content_type="image/png")

    def _model(self, body: dict[str, Any], table: dict[str, tuple[int, int]]) -> tuple[int, int]:
        if body.get("model") not in table:
            raise invalid("Model not exist.")  # a model of another endpoint [codes]
        return table[body["model"]]

    def _message(self, body: dict[str, Any], least: int, most: int, formats: set[str]) -> list[Any]:
        """The images of the one user message, its one text checked [qwen], [wan-image]."""
        messages = (body.get("input") or {}).get("messages")
        if not isinstance(messages, list) or len(messages) != 1 or messages[0].get("role") != "user":
            raise invalid("input.messages must hold one user message")  # single turn
        content = messages[0].get("content") or []
        images = [part["image"] for part in content if "image" in part]
        texts = [part["text"] for part in content if "text" in part]
        if len(texts) != 1 or not str(texts[0]).strip():
            raise Refused(400, "BadRequest.EmptyInput", "Required input parameter missing from request.")
        if not least <= len(images) <= most:
            raise invalid(f"the number of images must be between {least} and {most}")
        for image in images:
            check_image(image, formats)
        return images

    def _count(self, body: dict[str, Any], most: int, tiers: tuple[str, ...] = ()) -> int:
        n = (body.get("parameters") or {}).get("n", 1)
        if not isinstance(n, int) or not 1 <= n <= most:
            raise invalid(f"parameters.n must be between 1 and {most}")
        size = (body.get("parameters") or {}).get("size")
        if size is not None and not (re.match(r"^\d+\*\d+$", size) or size in tiers):
            raise invalid("parameters.size must be width*height")
        return n if self.produce is None else min(n, self.produce)

    def _url(self, name: str) -> str:
        return f"{self.url}/files/{name}.png"


def check_image(image: Any, formats: set[str]) -> None:
    """An inline image: a data URL of a documented format whose bytes are that format, ≤ 10 MB."""
    match = DATA_URL.match(image) if isinstance(image, str) else None
    if match is None or match[1] not in formats:
        raise Refused(400, "InvalidParameter.DataInspection",
                      "The media format is not supported or incorrect for the data inspection.")
    try:
        data = base64.b64decode(match[2], validate=True)
    except binascii.Error:
        raise Refused(400, "InvalidParameter.DataInspection", "The image is not valid base64.") from None
    magic = MAGIC.get(match[1])
    if len(data) > MAX_BYTES or (magic is not None and not data.startswith(magic)):
        raise Refused(400, "InvalidParameter.DataInspection",
                      "The media format is not supported or incorrect for the data inspection.")


def error(refused: Refused) -> web.Response:
    return web.json_response({"code": refused.code, "message": refused.message, "request_id": "rq-refused"},
                             status=refused.status)
