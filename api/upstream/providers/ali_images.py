"""`/v1/images/edits` on Alibaba DashScope (type 17): the form → DashScope's native body (pure), by
model family. What each family takes (Alibaba Cloud Model Studio's API references, stored copies):

- Qwen image models, synchronous: `POST /api/v1/services/aigc/multimodal-generation/generation`,
  `{"model", "input": {"messages": [{"role": "user", "content": [{"image": …}, …, {"text": prompt}]}]},
  "parameters": {"n", "size": "W*H"}}`, answered `output.choices[0].message.content[{"image": url}, …]`
  with `usage {image_count, width, height}` ("Qwen - image editing API reference", alibabacloud.com/
  help/en/model-studio/qwen-image-edit, Mar 2026; "Qwen Image Generation and Editing API reference",
  …/qwen-image-generation-and-editing-api-reference, Oct 2026). 1 to 3 input images (qwen-image-2.1-pro:
  up to 10), JPG/PNG/BMP/TIFF/WEBP/GIF, 10 MB each, as a URL or `data:{MIME};base64,…`; 1 to 6 images
  out (qwen-image-edit: 1, and no size); size: each side 512-2048 (qwen-image-edit-plus/-max), total
  pixels 512*512 to 2048*2048 (qwen-image-2.x, 3.0). Billed per image produced ("按成功生成的图像张数计费").
- Wan image-to-image, an asynchronous task (`X-DashScope-Async: enable`, polled at `/api/v1/tasks/{id}`
  as text-to-image is): `POST /api/v1/services/aigc/image2image/image-synthesis`. wan2.5-i2i-preview:
  `input {prompt, images[≤3]}`, JPEG/PNG/BMP/WEBP, 10 MB, `n` 1-4, size total pixels 768*768 to
  1280*1280 with an aspect ratio within 1:4..4:1 (…/wan2-5-image-edit-api-reference, Dec 2025;
  docs.qwencloud.com/api-reference/image-generation/wan25-general-image-editing/create-task).
  wanx2.1-imageedit: `input {function: "description_edit", prompt, base_image_url}`, one image, `n` 1-4
  (…/wanx-image-edit-api-reference, Beijing region only).
- Wan image models (wan2.6-image; wan2.7-image and wan2.7-image-pro), sent as a task: `POST /api/v1/services/
  aigc/image-generation/generation` with `X-DashScope-Async: enable` (the synchronous form is Qwen's path), the
  body Qwen's messages with the text first, `{"model", "input": {"messages": [{"role": "user", "content":
  [{"text": prompt}, {"image": …}, …]}]}, "parameters": {"n", "size"}}`; polled at `/api/v1/tasks/{id}`, the
  task answers `output.choices[].message.content[{"image": url, "type": "image"}]` (one image a choice) and
  `usage {image_count, size}` ("Wan2.6 - image generation and editing", alibabacloud.com/help/en/model-studio/
  wan-image-generation-api-reference; docs.qwencloud.com/api-reference/image-generation/wan26-image-gen-edit/
  create-task and query-result; "Wan2.7 - image generation and editing", alibabacloud.com/help/en/model-studio/
  wan-image-generation-and-editing-api-reference, Nov 2026; the paths as the DashScope Python SDK's
  ImageGeneration builds them: sync_task "multimodal-generation", async_task "image-generation").
  wan2.6-image edits 1 to 4 images (`enable_interleave` false, its default; the interleaved text-and-image
  mode is not served), JPEG/PNG/BMP/WEBP, 10 MB, `n` 1-4 (default 4: always sent). wan2.7-image(-pro): 0 to 9
  images (none: text-to-image, served on /v1/images/generations), JPEG/PNG/BMP/WEBP, 20 MB, `n` 1-4, size
  `1K`, `2K` (default) or `W*H`; `4K` and up to 4096*4096 for wan2.7-image-pro's text-to-image only (the
  gateway takes OpenAI's `WxH` sizes only, so the tiers are asked for as 1024x1024, 2048x2048, 4096x4096). Not
  found in Alibaba's own text, so taken from third-party references of the same API (unverified): the `W*H`
  bounds, 768*768 to 2048*2048 pixels in all with an aspect ratio within 1:8..8:1 (wan2.7) or 1:4..4:1
  (wan2.6-image; sources disagree on its top, 1440*1440 or 2048*2048: the larger is let through).

OpenAI's mask (transparent = edit) has no counterpart in these models, which edit from the prompt:
a mask, too many images, an `n` or a size the model cannot take, an image over 10 MB or in a format
the model does not read are refused with a 400 naming the field (ChannelCannotServe: a channel of
another type may still serve the model); what DashScope has no field for (quality, background, …) is
dropped with a notice. None of them streams: a streamed edit is answered whole and told as the
stream's completed events (api/relay/image_stream.whole_as_events).
"""
from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from api.upstream.base import RelayMeta
from api.upstream.errors import ChannelCannotServe

QWEN_PATH = "/api/v1/services/aigc/multimodal-generation/generation"
WAN_PATH = "/api/v1/services/aigc/image2image/image-synthesis"
WAN_IMAGE_PATH = "/api/v1/services/aigc/image-generation/generation"  # wan2.6-image, wan2.7-image (a task)
IMAGE_PARTS = ("image", "image[]")
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # "Image size: no more than 10MB" (all but wan2.7: 20 MB)
SENT = frozenset({"model", "prompt", "n", "size", "response_format", "stream"})  # read, not dropped
SIZE = re.compile(r"^(\d+)x(\d+)$")
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
              (b"BM", "image/bmp"), (b"II*\x00", "image/tiff"), (b"MM\x00*", "image/tiff"))
QWEN_FORMATS = frozenset({"image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff", "image/webp"})
WAN_FORMATS = frozenset({"image/png", "image/jpeg", "image/bmp", "image/webp"})
WANX_FORMATS = WAN_FORMATS | {"image/tiff"}


def _sides(low: int, high: int) -> Callable[[int, int], bool]:
    return lambda w, h: low <= w <= high and low <= h <= high


def _pixels(low: int, high: int, ratio: float = 0) -> Callable[[int, int], bool]:
    return lambda w, h: low <= w * h <= high and (not ratio or 1 / ratio <= w / h <= ratio)


@dataclass(frozen=True, slots=True)
class EditModel:
    path: str  # QWEN_PATH (synchronous), WAN_PATH or WAN_IMAGE_PATH (a task)
    max_images: int
    max_n: int
    formats: frozenset[str]
    size: Callable[[int, int], bool] | None = None  # None: the model takes no size
    size_rule: str = ""
    function: str = ""  # wanx2.1-imageedit's `input.function`
    max_bytes: int = MAX_IMAGE_BYTES

    @property
    def is_task(self) -> bool:
        return self.path != QWEN_PATH


EDIT_PLUS = EditModel(QWEN_PATH, 3, 6, QWEN_FORMATS, _sides(512, 2048), "each side 512 to 2048 pixels")
QWEN_IMAGE = EditModel(QWEN_PATH, 3, 6, QWEN_FORMATS, _pixels(512 * 512, 2048 * 2048),
                       "512*512 to 2048*2048 pixels in all")
# Longest prefix first: dated snapshots (qwen-image-edit-plus-2025-12-15, …) share their line's row.
EDIT_MODELS: tuple[tuple[str, EditModel], ...] = (
    ("qwen-image-edit-plus", EDIT_PLUS), ("qwen-image-edit-max", EDIT_PLUS),
    ("qwen-image-edit", EditModel(QWEN_PATH, 3, 1, QWEN_FORMATS)),
    ("qwen-image-2.1-pro", EditModel(QWEN_PATH, 10, 6, QWEN_FORMATS, QWEN_IMAGE.size, QWEN_IMAGE.size_rule)),
    ("qwen-image-2.", QWEN_IMAGE), ("qwen-image-3.", QWEN_IMAGE),
    ("wan2.5-i2i", EditModel(WAN_PATH, 3, 4, WAN_FORMATS, _pixels(768 * 768, 1280 * 1280, 4),
                             "768*768 to 1280*1280 pixels in all, aspect ratio 1:4 to 4:1")),
    ("wanx2.1-imageedit", EditModel(WAN_PATH, 1, 4, WANX_FORMATS, function="description_edit")),
    ("wan2.6-image", EditModel(WAN_IMAGE_PATH, 4, 4, WAN_FORMATS, _pixels(768 * 768, 2048 * 2048, 4),
                               "768*768 to 2048*2048 pixels in all, aspect ratio 1:4 to 4:1")),
    ("wan2.7-image", WAN27 := EditModel(WAN_IMAGE_PATH, 9, 4, WAN_FORMATS, _pixels(768 * 768, 2048 * 2048, 8),
                                        "768*768 to 2048*2048 pixels in all, aspect ratio 1:8 to 8:1",
                                        max_bytes=20 * 1024 * 1024)),
)
# `/v1/images/generations` on the same endpoint (no image): wan2.7-image-pro alone renders 4K from text.
GENERATION_MODELS: tuple[tuple[str, EditModel], ...] = (
    ("wan2.7-image-pro", EditModel(WAN_IMAGE_PATH, 0, 4, WAN_FORMATS, _pixels(768 * 768, 4096 * 4096, 8),
                                   "768*768 to 4096*4096 pixels in all, aspect ratio 1:8 to 8:1")),
    ("wan2.7-image", EditModel(WAN_IMAGE_PATH, 0, 4, WAN_FORMATS, WAN27.size, WAN27.size_rule)),
)


def edit_model(model: str) -> EditModel | None:
    """The edit row of a DashScope model (None: the model does not edit images here)."""
    return next((row for prefix, row in EDIT_MODELS if model.startswith(prefix)), None)


def generation_model(model: str) -> EditModel | None:
    """The text-to-image row of a model served on WAN_IMAGE_PATH (None: text2image's task, ali.py)."""
    return next((row for prefix, row in GENERATION_MODELS if model.startswith(prefix)), None)


def refuse(param: str, message: str) -> ChannelCannotServe:
    return ChannelCannotServe(400, message, "invalid_request_error", "invalid_parameter", param, local=True)


def sniff(data: bytes) -> str:
    """The image's media type by its first bytes ("" when it is none of DashScope's formats)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in SIGNATURES if data.startswith(magic)), "")


def data_url(data: bytes, row: EditModel) -> str:
    """An uploaded image as DashScope takes one inline: `data:{MIME};base64,{data}`."""
    if len(data) > row.max_bytes:
        raise refuse("image", f"each image must be at most {row.max_bytes // (1024 * 1024)} MB for this model")
    mime = sniff(data)
    if mime not in row.formats:
        names = ", ".join(sorted(m.removeprefix("image/").upper() for m in row.formats))
        raise refuse("image", f"each image must be one of {names} for this model")
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _size(body: Mapping[str, Any], row: EditModel, model: str) -> str | None:
    size = body.get("size")
    if not isinstance(size, str) or size == "auto":
        return None
    match = SIZE.match(size)
    if row.size is None or match is None:
        raise refuse("size", f"{model} takes no size: leave it out or `auto`")
    width, height = int(match[1]), int(match[2])
    if not row.size(width, height):
        raise refuse("size", f"{model} takes sizes of {row.size_rule}")
    return f"{width}*{height}"


def convert_request(body: Mapping[str, Any], files: list[tuple[str, str, str, bytes]],
                    meta: RelayMeta) -> dict[str, Any]:
    """The checked form (`body`, `files`) → the body of the model's endpoint (module docstring)."""
    model = meta.model
    row = edit_model(model)
    assert row is not None, "supports() admits the edit models only"
    for name, *_ in files:
        if name not in IMAGE_PARTS:
            raise refuse(name, f"{model} edits from the prompt and takes no {name}")
    images = [data for name, _, _, data in files if name in IMAGE_PARTS]
    if len(images) > row.max_images:
        raise refuse("image", f"{model} takes at most {row.max_images} image{'s' if row.max_images > 1 else ''}")
    parameters = _parameters(body, row, meta)
    urls = [data_url(data, row) for data in images]
    prompt = str(body.get("prompt") or "")
    if row.function:
        request_input: dict[str, Any] = {"function": row.function, "prompt": prompt, "base_image_url": urls[0]}
    elif row.path == WAN_PATH:
        request_input = {"prompt": prompt, "images": urls}
    else:
        request_input = _messages(prompt, urls, row)
    return {"model": model, "input": request_input, "parameters": parameters}


def convert_generation(body: Mapping[str, Any], meta: RelayMeta) -> dict[str, Any]:
    """A `/v1/images/generations` body → a GENERATION_MODELS model's text-to-image body (no image)."""
    row = generation_model(meta.model)
    assert row is not None, "ali.py sends only GENERATION_MODELS here"
    parameters = _parameters(body, row, meta)
    return {"model": meta.model, "input": _messages(str(body.get("prompt") or ""), [], row),
            "parameters": parameters}


def _parameters(body: Mapping[str, Any], row: EditModel, meta: RelayMeta) -> dict[str, Any]:
    """`n` and `size` checked against the row; what DashScope has no field for dropped with a notice."""
    given = body.get("n")
    n = given if isinstance(given, int) and not isinstance(given, bool) else 1
    if n > row.max_n:
        raise refuse("n", f"{meta.model} makes at most {row.max_n} image{'s' if row.max_n > 1 else ''} a request")
    size = _size(body, row, meta.model)
    for name in body:
        if name not in SENT:
            meta.drop(name)
    parameters: dict[str, Any] = {"n": n} if row.max_n > 1 else {}
    if size is not None:
        parameters["size"] = size
    return parameters


def _messages(prompt: str, urls: list[str], row: EditModel) -> dict[str, Any]:
    """The one user message: Qwen's images then the text, the Wan image models' text first."""
    images = [{"image": url} for url in urls]
    content = [{"text": prompt}, *images] if row.path == WAN_IMAGE_PATH else [*images, {"text": prompt}]
    return {"messages": [{"role": "user", "content": content}]}


def image_urls(output: Mapping[str, Any]) -> list[str]:
    """The image URLs of an answer's `output`, in order: every choice's content (the multimodal and
    image-generation answers) or every result (the image-synthesis tasks)."""
    choices = output.get("choices") or ()
    urls = [part["image"] for choice in choices if isinstance(choice, Mapping)
            for part in (choice.get("message") or {}).get("content") or ()
            if isinstance(part, Mapping) and isinstance(part.get("image"), str) and part["image"]]
    return urls + [r["url"] for r in output.get("results") or () if isinstance(r, Mapping) and r.get("url")]
