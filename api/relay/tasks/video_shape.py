"""Video tasks as the client sees them: OpenAI's video API (`POST /v1/videos`, the openai SDK's
`videos.create`), its request read and checked, and a task row answered as OpenAI's `Video` object
(openai/types/video.py: id, object "video", model, status queued | in_progress | completed | failed,
progress, created_at, completed_at, expires_at, seconds, size, prompt, error).

The request is a JSON object or a multipart form (the SDK always sends a form): `prompt` (required),
`model`, `seconds` ("4", "8" or "12" in OpenAI's list; any whole number from 1 to MAX_SECONDS is
taken here and checked by each upstream protocol), `size` ("<width>x<height>") and an optional
`input_reference`: an image file part, or `{"image_url": <data URL>}`. A remote image URL is not
fetched (the media policy would; no upstream here needs one fetched): a data URL or a file only.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

import orjson

from api.relay.form_shape import FormShape
from api.services.params import is_integer_text
from api.upstream.task_base import FAILURE, SUCCESS, VIDEO_PLATFORM

PLATFORM = VIDEO_PLATFORM  # the task table's platform of video tasks
ACTION = "GENERATE"
DEFAULT_SECONDS = 4  # "Defaults to 4 seconds" (ibid.)
DEFAULT_SIZE = "720x1280"  # "Defaults to 720x1280" (ibid.)
MAX_SECONDS = 60
MAX_PROMPT = 32_000
MAX_IMAGE_BYTES = 20 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp"})
_SIZE = re.compile(r"^[1-9]\d{1,4}x[1-9]\d{1,4}$")
_DATA_URL = re.compile(r"^data:(image/[a-z+.-]+);base64,(.*)$", re.S)
FIELDS = frozenset({"prompt", "model", "seconds", "size", "input_reference"})
FORM_OBJECT_FIELDS = frozenset({"input_reference[image_url]", "input_reference[file_id]"})  # a form's nested object
# The form as it is read (api/relay/forms.py): each field once and one image in fewer than 16 parts.
VIDEO_FORM = FormShape(FIELDS | FORM_OBJECT_FIELDS, frozenset({"input_reference"}), max_parts=16,
                       file_required=False)


class BadVideoRequest(ValueError):
    """What is wrong with a request (the client's 400), naming the field."""

    def __init__(self, param: str, problem: str) -> None:
        super().__init__(f"{param}: {problem}")
        self.param = param


@dataclass(frozen=True, slots=True)
class Image:
    mime: str
    data: bytes

    def b64(self) -> str:
        return base64.b64encode(self.data).decode()


@dataclass(frozen=True, slots=True)
class VideoRequest:
    prompt: str
    model: str
    seconds: int
    size: str
    image: Image | None = None

    def body(self) -> dict[str, Any]:
        """The request as the pipeline carries it (billing reads `seconds`; adaptors convert it)."""
        return {"prompt": self.prompt, "model": self.model, "seconds": self.seconds, "size": self.size}

    def dimensions(self) -> tuple[int, int]:
        width, height = self.size.split("x")
        return int(width), int(height)


def _seconds(value: Any) -> int:
    if value is None or value == "":
        return DEFAULT_SECONDS
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadVideoRequest("seconds", "must be a whole number of seconds")
    text = str(value).strip()
    if not is_integer_text(text) or not 1 <= int(text) <= MAX_SECONDS:
        raise BadVideoRequest("seconds", f"must be a whole number of seconds from 1 to {MAX_SECONDS}")
    return int(text)


def _data_url(value: str) -> Image:
    match = _DATA_URL.match(value.strip())
    if match is None:
        raise BadVideoRequest("input_reference", "image_url must be a base64 data URL of an image")
    try:
        data = base64.b64decode(match.group(2), validate=True)
    except (binascii.Error, ValueError):
        raise BadVideoRequest("input_reference", "the data URL is not valid base64") from None
    return _image(match.group(1), data)


def _image(mime: str, data: bytes) -> Image:
    mime = mime.split(";")[0].strip().lower()
    if mime not in IMAGE_TYPES:
        raise BadVideoRequest("input_reference", "the image must be PNG, JPEG or WebP")
    if not data or len(data) > MAX_IMAGE_BYTES:
        raise BadVideoRequest("input_reference", "the image is empty or larger than 20 MB")
    return Image(mime, data)


def read_request(fields: dict[str, Any], file: tuple[str, bytes] | None = None) -> VideoRequest:
    """The client's request (JSON fields, or a form's text fields and its `input_reference` file:
    (content type, bytes)), checked; raises BadVideoRequest."""
    unknown = sorted(set(fields) - FIELDS - FORM_OBJECT_FIELDS)
    if unknown:
        raise BadVideoRequest(unknown[0], "is not a parameter of video creation")
    prompt = fields.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or "\x00" in prompt:
        raise BadVideoRequest("prompt", "is required (text)")
    if len(prompt) > MAX_PROMPT:
        raise BadVideoRequest("prompt", f"is longer than {MAX_PROMPT} characters")
    # Named always: OpenAI's own default (sora-2) went with its Sora API (shut down 2026-09-24), and a
    # gateway's channels serve the models their operator lists.
    model = fields.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 100 or "\x00" in model:
        raise BadVideoRequest("model", "is required (a model name)")
    size = fields.get("size") or DEFAULT_SIZE
    if not isinstance(size, str) or not _SIZE.match(size):
        raise BadVideoRequest("size", "must be <width>x<height>, e.g. 1280x720")
    image = None
    reference = fields.get("input_reference")
    if "input_reference[image_url]" in fields:  # a form's nested object
        reference = {"image_url": fields["input_reference[image_url]"]}
    if "input_reference[file_id]" in fields or (isinstance(reference, dict) and "file_id" in reference):
        raise BadVideoRequest("input_reference", "file_id is not supported: send the image or a data URL")
    if file is not None:
        image = _image(*file)
    elif isinstance(reference, dict) and isinstance(reference.get("image_url"), str):
        image = _data_url(reference["image_url"])
    elif reference is not None:
        raise BadVideoRequest("input_reference", "must be an image file or {\"image_url\": <data URL>}")
    return VideoRequest(prompt, model, _seconds(fields.get("seconds")), size, image)


# -- the answer ------------------------------------------------------------------------------------------

_STATUS = {SUCCESS: "completed", FAILURE: "failed", "IN_PROGRESS": "in_progress"}


def properties(row: Any) -> dict[str, Any]:
    """The row's properties (what the submission knew: prompt, model, seconds, size, the upstream id)."""
    try:
        value = orjson.loads(row.properties) if row.properties else {}
    except orjson.JSONDecodeError:
        value = {}
    return value if isinstance(value, dict) else {}


def result(row: Any) -> dict[str, Any]:
    """What the upstream said of the finished video (the row's data): where its content is."""
    try:
        value = orjson.loads(row.data) if row.data else {}
    except orjson.JSONDecodeError:
        value = {}
    return value if isinstance(value, dict) else {}


def status_of(row: Any) -> str:
    return _STATUS.get(row.status, "queued")


def progress_of(row: Any) -> int:
    if row.status in (SUCCESS, FAILURE):
        return 100
    digits = str(row.progress or "").rstrip("%").split(".")[0]
    return min(int(digits), 99) if digits.isdigit() else 0


def video_object(row: Any) -> dict[str, Any]:
    """A video task row as OpenAI's `Video` object (the gateway's own id, never the upstream's)."""
    props, status = properties(row), status_of(row)
    error = ({"code": "video_generation_failed", "message": row.fail_reason or "the video failed"}
             if status == "failed" else None)
    expires = result(row).get("expires_at")
    return {"id": row.task_id, "object": "video", "model": props.get("model", ""), "status": status,
            "progress": progress_of(row), "created_at": int(row.submit_time or row.created_at),
            "completed_at": int(row.finish_time) if status in ("completed", "failed") and row.finish_time else None,
            "expires_at": expires if isinstance(expires, int) and not isinstance(expires, bool) else None,
            "seconds": str(props.get("seconds", "")), "size": str(props.get("size", "")),
            "prompt": props.get("prompt"), "remixed_from_video_id": None, "error": error}
