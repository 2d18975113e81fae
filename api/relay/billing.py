"""What a request is charged, one strategy per billing kind (api/relay/modes.py gives each mode
its kind; a task is charged as a task): `pre`, the amount reserved at admission, and `final`, the
amount settled from what was produced. The arithmetic is api.services.billing.pricing's; the
contract is docs/billing.md. Nothing else in the relay prices a request.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from api.relay.image_edit_form import input_images
from api.relay.modes import MODES, Billing, text_field
from api.services.billing import image_tokens, pricing
from api.services.billing.realtime_pricing import AudioPrice, RealtimeUsage, realtime_quota
from api.upstream.base import TokenUsage
from api.upstream.providers.gemini.images import most_output_tokens

if TYPE_CHECKING:
    from api.relay.job import Job


class Strategy(Protocol):
    def pre(self, job: Job) -> int: ...

    def final(self, job: Job, usage: TokenUsage) -> int: ...


def _price(job: Job) -> pricing.Price:
    assert job.price is not None, "priced at admission"
    return job.price


def _per_unit(job: Job) -> int:
    return job.options.get_int("QuotaPerUnit")


def _int_field(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class Tokens:
    """Prompt and completion tokens: the prompt count and the most the answer may use reserved,
    the usage settled (cache reads and writes at their own ratios). A chat answer with image tokens
    the model has image ratios for (a Gemini image model's drawings) is settled as an image model's
    (api/services/billing/image_tokens.py; its cache reads then count as prompt tokens)."""

    def pre(self, job: Job) -> int:
        max_tokens = _int_field(job.body, "max_tokens") or _int_field(job.body, "max_completion_tokens")
        return pricing.pre_charge_quota(_price(job), job.prompt_tokens, max_tokens,
                                        pre_consumed_quota=job.options.get_int("PreConsumedQuota"),
                                        quota_per_unit=_per_unit(job))

    def final(self, job: Job, usage: TokenUsage) -> int:
        price = _price(job)
        if not price.per_call and ((usage.image_tokens and price.image_ratio is not None) or
                                   (usage.image_output_tokens and price.image_output_ratio is not None)):
            return image_tokens.token_quota(price, usage)
        return pricing.settle_quota(price, usage.prompt_tokens, usage.completion_tokens,
                                    cached_tokens=usage.cached_tokens,
                                    cache_creation_tokens=usage.cache_creation_tokens,
                                    cache_creation_1h_tokens=usage.cache_creation_1h_tokens,
                                    quota_per_unit=_per_unit(job))


@dataclass(frozen=True, slots=True)
class Images:
    """Generations and edits. A per-call price: per image by size and quality, known before the call.
    A model priced by ratio whose answer reports its token usage (the GPT image models): those
    tokens, input and output images at their own ratios (api/services/billing/image_tokens.py);
    one whose answer reports none: per image, as a per-call price. Reserved: the most of the two."""

    def per_image(self, job: Job) -> int:
        """Per image of `images_billed`: `n`, or those delivered when the upstream bills produced ones."""
        count = images_billed(job)
        if count == 0:
            return 0
        return pricing.image_quota(_price(job), job.body.get("size"), job.body.get("quality"), count,
                                   quota_per_unit=_per_unit(job))

    def pre(self, job: Job) -> int:
        price = _price(job)
        if price.per_call:
            return self.per_image(job)
        size, quality = text_field(job.body, "size") or None, text_field(job.body, "quality") or None
        tokens = image_tokens.estimate_quota(price, job.prompt_tokens, input_images(job.form),
                                             _int_field(job.body, "n"), size, quality,
                                             per_image=most_output_tokens(job.model))
        return max(self.per_image(job), tokens)

    def final(self, job: Job, usage: TokenUsage) -> int:
        if _price(job).per_call or usage.total_tokens == 0:
            return self.per_image(job)
        return image_tokens.token_quota(_price(job), usage)


def images_billed(job: Job) -> int | None:
    """The images a request pays per image: `n`; fewer when an upstream that bills the images it
    produced (DashScope: "the images successfully generated") delivered fewer (`job.images`)."""
    asked = _int_field(job.body, "n")
    if job.images is None:
        return asked
    return min(asked if asked and asked > 0 else 1, job.images)


@dataclass(frozen=True, slots=True)
class Speech(Tokens):
    """Reserved as tokens; settled by the characters spoken."""

    def final(self, job: Job, usage: TokenUsage) -> int:
        return pricing.speech_quota(_price(job), text_field(job.body, "input"), quota_per_unit=_per_unit(job))


@dataclass(frozen=True, slots=True)
class Transcription(Tokens):
    """Reserved as tokens; settled by the text heard."""

    def final(self, job: Job, usage: TokenUsage) -> int:
        return pricing.transcription_quota(_price(job), usage.completion_tokens, quota_per_unit=_per_unit(job))


@dataclass(frozen=True, slots=True)
class Task:
    """A task's per-call price (a model priced by ratio only pays what a request without usage
    would: PreConsumedQuota tokens at its ratio), charged in full once the upstream took it."""

    def pre(self, job: Job) -> int:
        return pricing.pre_charge_quota(_price(job), 0, None,
                                        pre_consumed_quota=job.options.get_int("PreConsumedQuota"),
                                        quota_per_unit=_per_unit(job))

    def final(self, job: Job, usage: TokenUsage) -> int:
        return job.pre


@dataclass(frozen=True, slots=True)
class Realtime:
    """One response of a Realtime session (api/relay/realtime): reserved like a request without
    max_tokens (PreConsumedQuota tokens at the model's ratio), settled from its `response.done`
    usage, text and audio tokens at their own ratios (the audio ratios resolved with the price)."""

    def pre(self, job: Job) -> int:
        return pricing.pre_charge_quota(_price(job), 0, None,
                                        pre_consumed_quota=job.options.get_int("PreConsumedQuota"),
                                        quota_per_unit=_per_unit(job))

    def final(self, job: Job, usage: TokenUsage) -> int:
        realtime = usage if isinstance(usage, RealtimeUsage) else RealtimeUsage(
            usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)
        return realtime_quota(_price(job), job.audio or AudioPrice(), realtime, quota_per_unit=_per_unit(job))


@dataclass(frozen=True, slots=True)
class Video(Task):
    """A video task (docs/billing.md, Videos): its ModelPrice is USD per second of video, times the
    seconds asked for — or per video for a model the option VideoPerVideoModels lists; a model priced
    by ratio only pays as a task. Charged in full once the upstream took it, refunded if it fails."""

    def pre(self, job: Job) -> int:
        price = _price(job)
        video_price = self.price_of_video(job)
        if video_price is None:
            return Task.pre(self, job)
        return pricing.per_call_quota(video_price, price.group_ratio, _per_unit(job))

    @staticmethod
    def price_of_video(job: Job) -> float | None:
        """USD for this video before the group ratio (None: priced by ratio); what its log shows as its price."""
        price = _price(job)
        if price.model_price is None:
            return None
        per_video = job.model in {m.strip() for m in job.options.get("VideoPerVideoModels").split(",")}
        seconds = 1 if per_video else max(_int_field(job.body, "seconds") or 1, 1)
        return price.model_price * seconds


STRATEGIES: Mapping[Billing, Strategy] = {
    Billing.TOKENS: Tokens(),
    Billing.IMAGES: Images(),
    Billing.SPEECH: Speech(),
    Billing.TRANSCRIPTION: Transcription(),
    Billing.TASK: Task(),
    Billing.VIDEO: Video(),
    Billing.REALTIME: Realtime(),
}


def strategy(job: Job) -> Strategy:
    return STRATEGIES[MODES[job.mode].billing]


def logged_price(job: Job) -> float | None:
    """The per-call price the request's log shows (a video's: its price per second × its seconds; an
    images request's: its price per image × the images, at their size and quality ratios)."""
    if job.task == "video":
        return Video.price_of_video(job)
    price = _price(job)
    if price.model_price is not None and not job.task and MODES[job.mode].billing == Billing.IMAGES:
        units = pricing.image_units(price, text_field(job.body, "size") or None,
                                    text_field(job.body, "quality") or None, images_billed(job))
        return float(Decimal(repr(price.model_price)) * units)
    return price.model_price


def pre(job: Job) -> int:
    """The amount to reserve at admission."""
    return strategy(job).pre(job)


def final(job: Job, usage: TokenUsage) -> int:
    """The amount to settle for what was produced."""
    return strategy(job).final(job, usage)
