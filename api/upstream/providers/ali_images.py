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
IMAGE_PARTS = ("image", "image[]")
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # "Image size: no more than 10MB" (both families)
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
    path: str  # QWEN_PATH (synchronous) or WAN_PATH (a task)
    max_images: int
    max_n: int
    formats: frozenset[str]
    size: Callable[[int, int], bool] | None = None  # None: the model takes no size
    size_rule: str = ""
    function: str = ""  # wanx2.1-imageedit's `input.function`

    @property
    def is_task(self) -> bool:
        return self.path == WAN_PATH


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
)


def edit_model(model: str) -> EditModel | None:
    """The edit row of a DashScope model (None: the model does not edit images here)."""
    return next((row for prefix, row in EDIT_MODELS if model.startswith(prefix)), None)


def refuse(param: str, message: str) -> ChannelCannotServe:
    return ChannelCannotServe(400, message, "invalid_request_error", "invalid_parameter", param, local=True)


def sniff(data: bytes) -> str:
    """The image's media type by its first bytes ("" when it is none of DashScope's formats)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in SIGNATURES if data.startswith(magic)), "")


def data_url(data: bytes, row: EditModel) -> str:
    """An uploaded image as DashScope takes one inline: `data:{MIME};base64,{data}`."""
    if len(data) > MAX_IMAGE_BYTES:
        raise refuse("image", f"each image must be at most {MAX_IMAGE_BYTES // (1024 * 1024)} MB for this model")
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
    given = body.get("n")
    n = given if isinstance(given, int) and not isinstance(given, bool) else 1
    if n > row.max_n:
        raise refuse("n", f"{model} makes at most {row.max_n} image{'s' if row.max_n > 1 else ''} a request")
    size = _size(body, row, model)
    for name in body:
        if name not in SENT:
            meta.drop(name)
    urls = [data_url(data, row) for data in images]
    prompt = str(body.get("prompt") or "")
    parameters: dict[str, Any] = {"n": n} if row.max_n > 1 else {}
    if size is not None:
        parameters["size"] = size
    if row.function:
        request_input: dict[str, Any] = {"function": row.function, "prompt": prompt, "base_image_url": urls[0]}
    elif row.is_task:
        request_input = {"prompt": prompt, "images": urls}
    else:
        content = [*({"image": url} for url in urls), {"text": prompt}]
        request_input = {"messages": [{"role": "user", "content": content}]}
    return {"model": model, "input": request_input, "parameters": parameters}


def qwen_image_urls(answer: Mapping[str, Any]) -> list[str]:
    """The image URLs of a multimodal-generation answer, in order (every choice's content)."""
    choices = (answer.get("output") or {}).get("choices") or ()
    return [part["image"] for choice in choices if isinstance(choice, Mapping)
            for part in (choice.get("message") or {}).get("content") or ()
            if isinstance(part, Mapping) and isinstance(part.get("image"), str) and part["image"]]
