"""The usage the GPT image models report (images.generate, images.edit and their streams' completed
events): `input_tokens` (text and images) with `input_tokens_details.{text_tokens, image_tokens}`,
`output_tokens` with, on newer answers, `output_tokens_details.{image_tokens, text_tokens}`
(openai-python src/openai/types/images_response.py `Usage`, image_edit_completed_event.py `Usage`:
there `output_tokens` is "the number of image tokens in the output image")."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.services.billing.records import TokenUsage


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def image_usage(usage: Any) -> TokenUsage | None:
    """The usage in OpenAI's convention (image tokens part of the prompt and completion counts);
    None when absent or all zero. A chat-shaped usage (`prompt_tokens`, …) is read as chat's."""
    if not isinstance(usage, Mapping):
        return None
    if "input_tokens" not in usage and "output_tokens" not in usage:
        return TokenUsage.from_openai(usage)
    prompt, completion = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if prompt == 0 and completion == 0:
        return None
    details_in = usage.get("input_tokens_details")
    images_in = _count(details_in.get("image_tokens")) if isinstance(details_in, Mapping) else 0
    details_out = usage.get("output_tokens_details")
    images_out = _count(details_out.get("image_tokens")) if isinstance(details_out, Mapping) else completion
    return TokenUsage(prompt, completion, image_tokens=min(images_in, prompt),
                      image_output_tokens=min(images_out, completion))
