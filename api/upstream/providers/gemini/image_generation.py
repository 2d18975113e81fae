"""`/v1/images/generations` on Gemini's image models: generateContent with image output (pure,
but for the extra requests of `n` > 1, sent by `GeminiImages.complete`).

- The request: the prompt as the one user part, `generationConfig.responseModalities: ["IMAGE"]`
  (images only: ai.google.dev/gemini-api/docs/image-generation) and `imageConfig`: OpenAI's `size`
  → the nearest `aspectRatio` the models take (images.ASPECT_RATIOS), and on Gemini 3 image models a
  longer side above 1024 → `imageSize` 2K (above 2048: 4K).
- `n`: an image model gives one candidate per request ("Multiple candidates is not enabled",
  google-gemini/gemini-cli#10370), so `n` (1 to 10, OpenAI's range for the images API) is that many
  requests: the attempt's, and n − 1 more sent at once after it; their images and usage are joined.
- The answer: each candidate's non-thought `inlineData` images → `data[i].b64_json`, and the usage
  in OpenAI's image-usage shape (`input_tokens` with `input_tokens_details.{text,image}_tokens`,
  `output_tokens` with `output_tokens_details.{text,image}_tokens`, `total_tokens`) from
  usageMetadata's per-modality counts (`promptTokensDetails`, `candidatesTokensDetails`: ai.google.dev/
  api/generate-content#UsageMetadata); thoughts count as text output. No image at all (a blocked
  prompt, `IMAGE_SAFETY`) is a 400 `content_policy_violation`.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
import orjson

from api.upstream import client
from api.upstream.base import RelayMeta, TokenUsage, UpstreamContext, UpstreamRequest
from api.upstream.payloads import json_object
from api.upstream.providers.gemini.answer import usage_of as answer_usage
from api.upstream.providers.gemini.convert import SAFETY_SETTINGS
from api.upstream.providers.gemini.imagen import dimensions, filtered, image_count, nearest_ratio, prompt_of
from api.upstream.providers.gemini.images import ASPECT_RATIOS, takes_image_size

MAX_IMAGES = 10  # OpenAI's `n` range for the images API
TIMEOUT = aiohttp.ClientTimeout(total=300)


def convert_request(req: Mapping[str, Any], meta: RelayMeta) -> tuple[dict[str, Any], int]:
    """(the generateContent body, how many requests make the `n` images)."""
    count = image_count(req, MAX_IMAGES)
    body = {"contents": [{"role": "user", "parts": [{"text": prompt_of(req)}]}], "safetySettings": SAFETY_SETTINGS,
            "generationConfig": generation_config(req, meta)}
    return body, count


def generation_config(req: Mapping[str, Any], meta: RelayMeta) -> dict[str, Any]:
    """Images only, `size` as imageConfig; what Gemini has no field for is dropped with a notice."""
    config: dict[str, Any] = {"responseModalities": ["IMAGE"]}
    size = dimensions(req.get("size"))
    if size is not None:
        imaging: dict[str, Any] = {"aspectRatio": nearest_ratio(size, ASPECT_RATIOS)}
        if max(size) > 1024 and takes_image_size(meta.model):
            imaging["imageSize"] = "2K" if max(size) <= 2048 else "4K"
        config["imageConfig"] = imaging
    for name in ("quality", "style", "background", "moderation", "output_format", "output_compression",
                 "input_fidelity", "partial_images"):
        if req.get(name) is not None:
            meta.drop(name)
    if req.get("response_format") == "url":
        meta.drop("response_format")  # answered as b64_json: Gemini returns the bytes
    return config


def usage_of(answers: Sequence[Mapping[str, Any]]) -> TokenUsage:
    """The usage of one or more answers (a request of `n` images), summed."""
    usage = TokenUsage()
    for answer in answers:
        one = answer_usage(answer.get("usageMetadata"))
        if one is not None:
            usage.prompt_tokens += one.prompt_tokens
            usage.completion_tokens += one.completion_tokens
            usage.cached_tokens += one.cached_tokens
            usage.reasoning_tokens += one.reasoning_tokens
            usage.image_tokens += one.image_tokens
            usage.image_output_tokens += one.image_output_tokens
    return usage


def openai_usage(usage: TokenUsage) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "input_tokens_details": {"text_tokens": usage.prompt_tokens - usage.image_tokens,
                                     "image_tokens": usage.image_tokens},
            "output_tokens_details": {"text_tokens": usage.completion_tokens - usage.image_output_tokens,
                                      "image_tokens": usage.image_output_tokens}}


def convert_response(body: Mapping[str, Any]) -> tuple[dict[str, Any], TokenUsage]:
    """One answer, or the answers joined by `join` (`{"answers": [...]}`)."""
    joined = body.get("answers")
    answers: list[Mapping[str, Any]] = ([a for a in joined if isinstance(a, Mapping)]
                                        if isinstance(joined, list) else [body])
    data: list[dict[str, Any]] = []
    reasons: list[str] = []
    for answer in answers:
        for candidate in answer.get("candidates") or ():
            for part in (candidate.get("content") or {}).get("parts") or ():
                inline = part.get("inlineData") if isinstance(part, Mapping) else None
                if (isinstance(inline, Mapping) and not part.get("thought") and
                        str(inline.get("mimeType") or "").startswith("image/")):
                    data.append({"b64_json": inline.get("data") or ""})
            if candidate.get("finishReason") not in (None, "STOP"):
                reasons.append(str(candidate.get("finishMessage") or candidate["finishReason"]))
        block = (answer.get("promptFeedback") or {}).get("blockReason")
        if block:
            reasons.append(str(block))
    if not data:
        raise filtered(reasons)
    usage = usage_of(answers)
    return {"created": int(time.time()), "data": data, "usage": openai_usage(usage)}, usage


async def more_answers(ctx: UpstreamContext, request: UpstreamRequest, count: int,
                       error: Any) -> list[dict[str, Any]]:
    """`count` more answers to the same request, sent at once; the first failure cancels the others
    and is raised (`error(status, body)` makes it a RelayError)."""

    async def one() -> dict[str, Any]:
        resp = await client.send(ctx.http, UpstreamRequest(request.url, dict(request.headers), request.body), TIMEOUT)
        if not 200 <= resp.status < 300:
            raise error(resp.status, await client.read_error(resp))
        return json_object(await client.read_body(resp))

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one()) for _ in range(count)]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


def join(first: bytes, more: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"answers": [json_object(first), *more]})
