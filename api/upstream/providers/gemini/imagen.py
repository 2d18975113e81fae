"""Imagen on `/v1/images/generations`: `models/imagen-…:predict` on the Gemini API and
`…/publishers/google/models/imagen-…:predict` on Vertex AI, one wire format (pure).

The request (the google-genai SDK's `_GenerateImagesConfig_to_vertex`, google/genai/models.py, which
writes the same body for both): `{"instances": [{"prompt": …}], "parameters": {"sampleCount": n,
"aspectRatio": …, "sampleImageSize": "1K"|"2K", "outputOptions": {"mimeType": …},
"includeRaiReason": true}}`.
- `n` → `sampleCount`, 1 to 4 (ai.google.dev/gemini-api/docs/imagen, "numberOfImages … 1 to 4"):
  more is refused here, before anything is sent.
- `size` (`WxH`) → the nearest of the aspect ratios Imagen takes, 1:1, 3:4, 4:3, 9:16, 16:9 (same page;
  cloud.google.com/vertex-ai/generative-ai/docs/image/configure-aspect-ratio); a longer side above
  1024 asks for `sampleImageSize` 2K, which the Fast model does not take (it gets 1K).
- `output_format` png/jpeg → `outputOptions.mimeType`; webp is not an Imagen output (dropped).
- The answer: `predictions[i].bytesBase64Encoded` (+ `mimeType`) → OpenAI's `data[i].b64_json`; a
  prediction filtered by Google's responsible-AI checks carries `raiFilteredReason` instead. When
  every image was filtered, the client gets a 400 `content_policy_violation` with the reason.

Google lists the Imagen 4 models of the Gemini API as shut down on 2026-08-17 (ai.google.dev/gemini-api/
docs/deprecations: Gemini image models replace them); the google-genai SDK 3.x calls `generate_images`
on Vertex AI only. The Gemini API route stays for channels whose base URL serves it still.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from api.services.configuration.capability_lookup import base_name
from api.services.params import is_digits_text
from api.upstream.base import RelayMeta
from api.upstream.errors import RelayError

ASPECT_RATIOS = ("1:1", "3:4", "4:3", "9:16", "16:9")
MAX_IMAGES = 4
MIME_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg"}


def _ratio(text: str) -> float:
    width, height = text.split(":")
    return int(width) / int(height)


def dimensions(size: Any) -> tuple[int, int] | None:
    """(width, height) of an OpenAI `size` (`1024x1536`); None for `auto` or none; 400 otherwise."""
    if size is None or size == "auto":
        return None
    width, _, height = str(size).lower().partition("x")
    if not (is_digits_text(width) and is_digits_text(height) and int(width) > 0 and int(height) > 0):
        raise RelayError.local_error(400, f"size must be WIDTHxHEIGHT (such as 1024x1024) or auto, not {size!r}",
                                     "invalid_size", "invalid_request_error")
    return int(width), int(height)


def nearest_ratio(size: tuple[int, int], ratios: tuple[str, ...]) -> str:
    """The aspect ratio of `ratios` nearest to the size's (compared on a log scale: 2:1 and 1:2 are as far)."""
    wanted = size[0] / size[1]
    return min(ratios, key=lambda r: abs(_ratio(r) / wanted - 1) + abs(wanted / _ratio(r) - 1))


def image_count(req: Mapping[str, Any], most: int) -> int:
    n = req.get("n", 1)
    if n is None:
        return 1
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= most:
        raise RelayError.local_error(400, f"n must be an integer from 1 to {most} for this model", "invalid_n",
                                     "invalid_request_error")
    return n


def prompt_of(req: Mapping[str, Any]) -> str:
    prompt = req.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise RelayError.local_error(400, "prompt is required", "missing_prompt", "invalid_request_error")
    return prompt


def convert_request(req: Mapping[str, Any], meta: RelayMeta) -> dict[str, Any]:
    parameters: dict[str, Any] = {"sampleCount": image_count(req, MAX_IMAGES), "includeRaiReason": True}
    size = dimensions(req.get("size"))
    if size is not None:
        parameters["aspectRatio"] = nearest_ratio(size, ASPECT_RATIOS)
        if max(size) > 1024 and "fast" not in base_name(meta.model):
            parameters["sampleImageSize"] = "2K"
    fmt = req.get("output_format")
    if isinstance(fmt, str) and fmt in MIME_TYPES:
        parameters["outputOptions"] = {"mimeType": MIME_TYPES[fmt]}
    elif fmt is not None:
        meta.drop("output_format")
    for name in ("quality", "style", "background", "moderation", "output_compression"):
        if req.get(name) is not None:
            meta.drop(name)
    if req.get("response_format") == "url":
        meta.drop("response_format")  # answered as b64_json: Imagen returns the bytes
    return {"instances": [{"prompt": prompt_of(req)}], "parameters": parameters}


def filtered(reasons: list[str]) -> RelayError:
    reason = "; ".join(dict.fromkeys(reasons)) or "no image was returned"
    return RelayError(400, f"the image request was refused by the provider's safety filters: {reason}",
                      "invalid_request_error", "content_policy_violation")


def convert_response(body: Mapping[str, Any]) -> dict[str, Any]:
    data: list[dict[str, Any]] = []
    reasons: list[str] = []
    for prediction in body.get("predictions") or ():
        if not isinstance(prediction, Mapping):
            continue
        if isinstance(prediction.get("bytesBase64Encoded"), str):
            data.append({"b64_json": prediction["bytesBase64Encoded"]})
        elif prediction.get("raiFilteredReason"):
            reasons.append(str(prediction["raiFilteredReason"]))
    if not data:
        raise filtered(reasons)
    return {"created": int(time.time()), "data": data}
