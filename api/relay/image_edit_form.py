"""The form of `POST /v1/images/edits`, checked before anything is counted, priced or charged (the
form itself is read within the route's bound by api/relay/forms.py). What OpenAI documents for the
call (openai-python src/openai/types/image_edit_params.py, the `images.edit` parameters) is checked
here; what depends on the model (a size or an `input_fidelity` it does not take) is the upstream's to
refuse. A problem is an `Invalid` naming the field (400 `invalid_request_error`, nothing charged).

The checked values replace the text ones in the request's body (`n` an int, `stream` a bool) for the
pipeline to read; the form goes upstream as the client sent it, its `model` as the channel names it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from api.relay.form_shape import PLAYGROUND_FIELDS, FormShape
from api.relay.validate import Invalid
from api.services.params import is_integer_text

if TYPE_CHECKING:
    from api.relay.job import Form

IMAGE_PARTS = frozenset({"image", "image[]"})  # one image, or the SDK's list (`image[]` per file)
FILE_PARTS = IMAGE_PARTS | {"mask", "markup"}
MAX_IMAGES = 16  # "You can provide up to 16 images."
MAX_PROMPT = 32000  # "The maximum length is 32000 characters for the GPT image models."
CHOICES: Mapping[str, frozenset[str]] = {
    "background": frozenset({"transparent", "opaque", "auto"}),
    "input_fidelity": frozenset({"high", "low"}),
    "output_format": frozenset({"png", "webp", "jpeg", "gif", "svg"}),
    "quality": frozenset({"low", "medium", "high", "xhigh", "max", "auto", "standard"}),
    "response_format": frozenset({"url", "b64_json"}),
    "complexity": frozenset({"low", "medium", "high"}),
    "stream": frozenset({"true", "false"}),
}
# (lowest, highest) of the integer fields.
BOUNDS: Mapping[str, tuple[int, int]] = {
    "n": (1, 10),  # "Must be between 1 and 10."
    "output_compression": (0, 100),  # "The compression level (0-100%)"
    "partial_images": (0, 3),  # "Value must be between 0 and 3."
    "frame_count": (2, 16),  # "Accepts integers from 2 through 16."
    "frame_duration_ms": (1, 655_350),  # "caps the encoded delay at 655,350 ms per frame"
}
TEXTS = frozenset({"prompt", "model", "size", "user", "safety_identifier", "svg[model]", "svg[reasoning][effort]"})
FIELDS = frozenset(CHOICES) | frozenset(BOUNDS) | TEXTS
# The form as it is read (api/relay/forms.py): 16 images, a mask and each field once come to 37
# parts; a form of more is no edit.
EDIT_FORM = FormShape(FIELDS | PLAYGROUND_FIELDS, FILE_PARTS, max_parts=64)
SIZE = re.compile(r"^([1-9]\d{1,4})x([1-9]\d{1,4})$")
MAX_EDGE = 3840  # "the maximum supported resolution is `3840x2160`"
MAX_PIXELS = 3840 * 2160


def check_edit_form(body: dict[str, Any], form: Form) -> None:
    """Refuse what OpenAI refuses of every edit; type the body's numbers and flags in place."""
    for name in body:
        if name not in FIELDS:
            raise Invalid(name, "unknown parameter")
    images = [f for f in form.files if f[0] in IMAGE_PARTS]
    for name, *_ in form.files:
        if name not in FILE_PARTS:
            raise Invalid(name, "unknown file parameter (the images are `image` or `image[]`, then `mask`)")
    if not images:
        raise Invalid("image", "at least one image is required")
    if len(images) > MAX_IMAGES:
        raise Invalid("image", f"at most {MAX_IMAGES} images")
    for part in ("mask", "markup"):
        if sum(1 for f in form.files if f[0] == part) > 1:
            raise Invalid(part, "one file at most")
    if any(f[0] == "mask" for f in form.files) and any(f[0] == "markup" for f in form.files):
        raise Invalid("markup", "cannot be combined with mask")
    prompt = body.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise Invalid("prompt", "a prompt is required")
    if len(prompt) > MAX_PROMPT:
        raise Invalid("prompt", f"at most {MAX_PROMPT} characters")
    for name, allowed in CHOICES.items():
        if name in body and body[name] not in allowed:
            raise Invalid(name, "one of " + ", ".join(sorted(allowed)))
    for name, (low, high) in BOUNDS.items():
        if name in body:
            body[name] = _integer(name, body[name], low, high)
    if "size" in body:
        _check_size(str(body["size"]))
    if "stream" in body:
        body["stream"] = body["stream"] == "true"


def _integer(name: str, text: str, low: int, high: int) -> int:
    value = text.strip()
    if not is_integer_text(value) or len(value) > 7:
        raise Invalid(name, "an integer")
    number = int(value)
    if not low <= number <= high:
        raise Invalid(name, f"between {low} and {high}")
    return number


def _check_size(size: str) -> None:
    """`auto` or WIDTHxHEIGHT within the largest resolution any GPT image model takes."""
    if size == "auto":
        return
    match = SIZE.match(size)
    if match is None:
        raise Invalid("size", "`auto` or WIDTHxHEIGHT, e.g. 1024x1024")
    width, height = int(match[1]), int(match[2])
    if max(width, height) > MAX_EDGE or width * height > MAX_PIXELS:
        raise Invalid("size", f"at most {MAX_EDGE} pixels a side and {MAX_PIXELS} pixels in all")


def input_images(form: Form | None) -> int:
    """How many images an edit's form carries (0 for a request without a form)."""
    return sum(1 for f in form.files if f[0] in IMAGE_PARTS) if form is not None else 0
