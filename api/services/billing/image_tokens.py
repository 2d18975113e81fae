"""Image models billed by the tokens they report (gpt-image: `usage.input_tokens_details.image_tokens`,
the output image tokens), and the reservation of such a request — pure functions, no I/O.

With P prompt tokens of which Ii input image tokens, C completion tokens of which Io output image
tokens, IR = ImageRatio and IOR = ImageOutputRatio of the model (docs/billing.md, Image models):

    round(((P − Ii) + Ii × IR + (C − Io) × CR + Io × IOR) × MR × GR)

An input image token without an ImageRatio is billed as a prompt token, an output image token
without an ImageOutputRatio as a completion token (new-api's rule: its ImageRatio option, output
images at the CompletionRatio). Counts an upstream got wrong are clamped (Ii to P, Io to C).
"""
from __future__ import annotations

from decimal import Decimal

from api.services.billing.pricing import Price, round_half_up
from api.services.billing.records import TokenUsage
from api.services.params import is_digits_text


def _dec(x: float | int) -> Decimal:
    """A ratio's decimal value as written (as pricing's arithmetic takes it)."""
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))

# Output image tokens per image, OpenAI's table for the GPT image models (platform.openai.com/docs/guides/
# image-generation, "Cost and latency"): quality → (1024x1024, 1024x1536, 1536x1024).
OUTPUT_TOKENS: dict[str, tuple[int, int, int]] = {
    "low": (272, 408, 400), "medium": (1056, 1584, 1568), "high": (4160, 6240, 6208),
}  # fmt: skip
STANDARD_SIZES = ("1024x1024", "1024x1536", "1536x1024")
SQUARE = 1024 * 1024
# Qualities above `high` (gpt-image-2.5's `xhigh`, `max`) and `auto`: reserved as this many `high` images.
ABOVE_HIGH = {"xhigh": 2, "max": 4}
# What one input image is reserved at, in image tokens: the largest image's output count above (an input
# image is never counted before the call: its tokens come back in the usage).
INPUT_IMAGE_TOKENS = 6240


def token_quota(price: Price, usage: TokenUsage) -> int:
    """The quota of an image model's answer from the usage it reported (the module's formula)."""
    prompt, completion = max(0, usage.prompt_tokens), max(0, usage.completion_tokens)
    if prompt == 0 and completion == 0:
        return 0
    images_in = min(max(0, usage.image_tokens), prompt)
    images_out = min(max(0, usage.image_output_tokens), completion)
    image_ratio = _dec(price.image_ratio) if price.image_ratio is not None else Decimal(1)
    output_ratio = _dec(price.image_output_ratio if price.image_output_ratio is not None else price.completion_ratio)
    weighted = (_dec(prompt - images_in) + _dec(images_in) * image_ratio
                + _dec(completion - images_out) * _dec(price.completion_ratio) + _dec(images_out) * output_ratio)
    mr = _dec(price.model_ratio)
    quota = round_half_up(weighted * mr * _dec(price.group_ratio))
    return 1 if mr > 0 and quota < 1 else quota


def output_tokens_per_image(size: str | None, quality: str | None) -> int:
    """The most one output image of this size and quality may take, by OpenAI's table: a standard size
    at its quality (`auto` or none: `high`), another size scaled by its area from the square image."""
    level = quality if quality in OUTPUT_TOKENS else "high"
    times = ABOVE_HIGH.get(quality or "", 1)
    row = OUTPUT_TOKENS[level]
    if size in STANDARD_SIZES:
        return row[STANDARD_SIZES.index(size)] * times
    width, _, height = (size or "").partition("x")
    if is_digits_text(width) and is_digits_text(height) and int(width) * int(height) > 0:
        return max(row[0], -(-row[0] * int(width) * int(height) // SQUARE)) * times
    return max(row) * times  # `auto` or none: the largest standard size


def estimate_quota(price: Price, prompt_tokens: int, input_images: int, n: int | None, size: str | None,
                   quality: str | None, per_image: int | None = None) -> int:
    """The reservation of an image model billed by tokens: the prompt counted locally, each input
    image at INPUT_IMAGE_TOKENS and each of the `n` output images at its most, at their ratios
    (`per_image`: the most one output image of this model takes, where it is not OpenAI's table)."""
    count = n if n and n > 0 else 1
    output = per_image if per_image is not None else output_tokens_per_image(size, quality)
    usage = TokenUsage(prompt_tokens + input_images * INPUT_IMAGE_TOKENS, count * output,
                       image_tokens=input_images * INPUT_IMAGE_TOKENS, image_output_tokens=count * output)
    return token_quota(price, usage)
