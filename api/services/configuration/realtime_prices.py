"""The Realtime models' default prices: their text prices (merged into the ModelRatio, CompletionRatio
and CacheRatio defaults) and their audio prices (the options AudioRatio, AudioCompletionRatio and
AudioCacheRatio). docs/billing.md, Realtime sessions, says how they are applied.

OpenAI's model pages, per 1M tokens (developers.openai.com/api/docs/models/gpt-realtime-1.5,
…/gpt-realtime-2, …/gpt-realtime-2.1-mini):

| model | text in | cached text | text out | audio in | cached audio | audio out |
|---|---|---|---|---|---|---|
| gpt-realtime, gpt-realtime-1.5 | $4 | $0.40 | $16 | $32 | $0.40 | $64 |
| gpt-realtime-2 | $4 | $0.40 | $24 | $32 | $0.40 | $64 |
| gpt-realtime-mini, gpt-realtime-2.1-mini | $0.60 | $0.06 | $2.40 | $10 | $0.30 | $20 |

A session's input audio transcription is billed at the transcription model's price
(api/relay/realtime/transcription.py): gpt-4o-transcribe, $2.50 text in, $6 audio in, $10 text out per 1M
tokens (developers.openai.com/api/docs/models/gpt-4o-transcribe), is ModelRatio 1.25, CompletionRatio 4 (the
tables of default_prices.py) and AudioRatio 2.4 here.

- AudioRatio: an audio input token's price ÷ a text input token's;
- AudioCompletionRatio: an audio output token's price ÷ an audio input token's;
- AudioCacheRatio: a cached audio input token's price ÷ an audio input token's.
"""
from __future__ import annotations

_FULL = ("gpt-realtime", "gpt-realtime-1.5", "gpt-realtime-2")
_MINI = ("gpt-realtime-mini", "gpt-realtime-2.1-mini")

REALTIME_MODEL_RATIO: dict[str, float] = {**{m: 2 for m in _FULL}, **{m: 0.3 for m in _MINI}}
REALTIME_COMPLETION_RATIO: dict[str, float] = {
    "gpt-realtime": 4, "gpt-realtime-1.5": 4, "gpt-realtime-2": 6, **{m: 4 for m in _MINI}}
REALTIME_CACHE_RATIO: dict[str, float] = {m: 0.1 for m in (*_FULL, *_MINI)}

DEFAULT_AUDIO_RATIO: dict[str, float] = {**{m: 8 for m in _FULL}, **{m: 50 / 3 for m in _MINI},
                                         "gpt-4o-transcribe": 2.4}
DEFAULT_AUDIO_COMPLETION_RATIO: dict[str, float] = {m: 2 for m in (*_FULL, *_MINI)}
DEFAULT_AUDIO_CACHE_RATIO: dict[str, float] = {**{m: 0.0125 for m in _FULL}, **{m: 0.03 for m in _MINI}}
