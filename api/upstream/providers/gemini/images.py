"""Gemini's image models (the "Nano Banana" family) in chat answers, and which models draw (pure).

- Which models: Gemini image models are named `gemini-…-image…` (gemini-2.5-flash-image,
  gemini-3-pro-image, gemini-3.1-flash-image and their `-preview` names: ai.google.dev/gemini-api/docs/
  image-generation, ai.google.dev/gemini-api/docs/deprecations); Imagen models `imagen-…` (imagen.py).
- Asking for images (ai.google.dev/api/generate-content#generationconfig): `responseModalities` lists
  what the answer may hold, `TEXT` and `IMAGE`; a model without image output refuses IMAGE ("Model
  does not support the requested response modalities: text,image", QuantumNous/new-api#866), so IMAGE
  goes to image models only (the client's OpenAI `modalities`, `text`/`image`, map to it; an image
  model asked nothing gets both). `imageConfig` takes `aspectRatio` and `imageSize` (1K, 2K, 4K); the
  client's OpenRouter-style `image_config` ({aspect_ratio, image_size}) maps to it. Image models give
  one candidate only ("Multiple candidates is not enabled for models/gemini-2.5-flash-image-preview",
  google-gemini/gemini-cli#10370): `n` above 1 is dropped with a notice in chat.
- The answer: an `inlineData` part ({mimeType, data base64}) is an image. In OpenAI's chat format it
  goes in `message.images` (and `delta.images` in a stream) as `{"type": "image_url", "image_url":
  {"url": "data:<mime>;base64,…"}}`, the shape OpenRouter and LiteLLM return (openrouter.ai/docs/
  guides/overview/multimodal/image-generation; docs/compatibility.md). Gemini 3 image models sign their
  image parts (ai.google.dev/gemini-api/docs/thought-signatures): the signature rides on the image's
  `extra_content.google.thought_signature` and goes back on that image part in the next turn. Thought
  images (`thought: true`, the model's drafts) are not returned.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from api.services.configuration.capability_lookup import base_name
from api.upstream.base import RelayMeta
from api.upstream.reasoning import gemini_signature, with_gemini_signature

_IMAGE_MODEL = re.compile(r"^gemini-[\w.-]*-image(-|$)")
MODALITIES = {"text": "TEXT", "image": "IMAGE"}
ASPECT_RATIOS = ("1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9")
IMAGE_SIZES = ("1K", "2K", "4K")


def is_image_model(model: str) -> bool:
    """A Gemini model that draws (answers with `inlineData` images)."""
    return bool(_IMAGE_MODEL.match(base_name(model)))


def is_imagen(model: str) -> bool:
    return base_name(model).startswith("imagen-")


def most_output_tokens(model: str) -> int | None:
    """The most one image of a Gemini image model takes in output tokens (its largest size), None for
    another model: 2.5 Flash Image 1290 (ai.google.dev/gemini-api/docs/pricing), 3 Pro Image 2000 at 4K,
    3.1 Flash Image and later 2520 at 4K (cloud.google.com/gemini-enterprise-agent-platform/models/gemini/
    3-1-flash-image-preview: "747 tokens for 512p …, and 2520 tokens for 4K")."""
    if not is_image_model(model):
        return None
    name = base_name(model)
    return 1290 if name.startswith("gemini-2.5") else 2000 if name.startswith("gemini-3-pro") else 2520


def takes_image_size(model: str) -> bool:
    """`imageConfig.imageSize` is a Gemini 3 image model's (gemini-2.5-flash-image draws 1K only)."""
    return base_name(model).startswith("gemini-3")


# -- the request -----------------------------------------------------------------------------------


def image_config(config: Any, meta: RelayMeta) -> dict[str, Any]:
    """The client's `image_config` ({aspect_ratio, image_size}) → Gemini's `imageConfig`."""
    out: dict[str, Any] = {}
    if not isinstance(config, Mapping):
        return out
    ratio, size = config.get("aspect_ratio"), config.get("image_size")
    if ratio in ASPECT_RATIOS:
        out["aspectRatio"] = ratio
    elif ratio is not None:
        meta.drop("image_config.aspect_ratio")
    if size in IMAGE_SIZES and takes_image_size(meta.model):
        out["imageSize"] = size
    elif size is not None:
        meta.drop("image_config.image_size")
    return out


def chat_output(req: Mapping[str, Any], meta: RelayMeta, config: dict[str, Any]) -> None:
    """responseModalities and imageConfig of a chat request, as the upstream model takes them."""
    wanted = req.get("modalities")
    asked = [m for m in wanted if isinstance(m, str)] if isinstance(wanted, list) else []
    for other in sorted(set(asked) - set(MODALITIES)):
        meta.drop(f"modalities.{other}")
    if not is_image_model(meta.model):
        if "image" in asked:
            meta.drop("modalities.image")
        if req.get("image_config") is not None:
            meta.drop("image_config")
        return
    chosen = [MODALITIES[m] for m in MODALITIES if m in asked] or ["TEXT", "IMAGE"]
    config["responseModalities"] = chosen
    imaging = image_config(req.get("image_config"), meta)
    if imaging:
        config["imageConfig"] = imaging
    if isinstance(config.get("candidateCount"), int) and config["candidateCount"] > 1:
        del config["candidateCount"]
        meta.drop("n")


def image_part(image: Any) -> dict[str, Any] | None:
    """An answered image (`message.images[i]`) sent back in a later turn → an inlineData part."""
    found = image.get("image_url") if isinstance(image, Mapping) else None
    url = found.get("url") if isinstance(found, Mapping) else found
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, _, data = url.partition(",")
    part: dict[str, Any] = {"inlineData": {"mimeType": header[5:].split(";")[0] or "image/png", "data": data}}
    signature = gemini_signature(image if isinstance(image, dict) else None)
    if signature:
        part["thoughtSignature"] = signature
    return part


# -- the answer ------------------------------------------------------------------------------------


def image_entry(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """An `inlineData` image part → OpenAI's image entry (None: not an image, or a thought image)."""
    inline = part.get("inlineData")
    if not isinstance(inline, Mapping) or part.get("thought"):
        return None
    mime = str(inline.get("mimeType") or "")
    if not mime.startswith("image/"):
        return None
    entry = {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{inline.get('data') or ''}"}}
    signature = part.get("thoughtSignature")
    return with_gemini_signature(entry, signature if isinstance(signature, str) else None)
