"""`/v1/images/edits` on Gemini's image models: the form's images and prompt as the parts of one
generateContent request (pure). Gemini edits from a prompt and reference images
(ai.google.dev/gemini-api/docs/image-generation, "Image editing (text-and-image-to-image)"): the
text part first, then each image as an `inlineData` part (its content type, else the type its first
bytes say: PNG, JPEG, WebP, GIF); `n`, `size` and the answer as for generations
(image_generation.py). Gemini takes no mask (`mask` is dropped with a notice) and does not stream
images: a streamed edit is answered whole and told as the stream's completed events.
"""
from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from api.upstream.base import RelayMeta
from api.upstream.errors import RelayError
from api.upstream.providers.gemini.convert import SAFETY_SETTINGS
from api.upstream.providers.gemini.image_generation import MAX_IMAGES, generation_config
from api.upstream.providers.gemini.imagen import image_count, prompt_of

IMAGE_PARTS = ("image", "image[]")
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def media_type(content_type: str, data: bytes) -> str:
    """The image's media type: the part's own, else what its first bytes say; 400 when neither is an image."""
    if content_type.startswith("image/"):
        return content_type.split(";")[0].strip()
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in SIGNATURES:
        if data.startswith(magic):
            return mime
    raise RelayError.local_error(400, "each image must be a PNG, JPEG, WebP or GIF file", "invalid_image",
                                 "invalid_request_error")


def convert_request(body: Mapping[str, Any], files: list[tuple[str, str, str, bytes]],
                    meta: RelayMeta) -> tuple[dict[str, Any], int]:
    """(the generateContent body, how many requests make the `n` images)."""
    count = image_count(body, MAX_IMAGES)
    parts: list[dict[str, Any]] = [{"text": prompt_of(body)}]
    for name, _, content_type, data in files:
        if name in IMAGE_PARTS:
            parts.append({"inlineData": {"mimeType": media_type(content_type, data),
                                         "data": base64.b64encode(data).decode()}})
        else:
            meta.drop(name)  # the mask: Gemini edits from the prompt
    return {"contents": [{"role": "user", "parts": parts}], "safetySettings": SAFETY_SETTINGS,
            "generationConfig": generation_config(body, meta)}, count
