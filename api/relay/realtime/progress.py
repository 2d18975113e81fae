"""What a Realtime response in progress has produced so far: the checkpoint of its reservation
(docs/billing.md, Progress checkpoints). A response is billed from its `response.done` usage; a process
that dies before that leaves its reservation to the sweep, which charges the checkpointed output — so the
output the client received is not lost with the process.

The upstream reports no usage until `response.done`, so the output is estimated from the deltas relayed:
- text (`response.output_text.delta`, `response.output_audio_transcript.delta`, a function call's
  `response.function_call_arguments.delta`, and the beta API's names of the first two): counted with the
  gateway's tokenizer, delta by delta;
- audio (`response.output_audio.delta`, beta `response.audio.delta`): by its length. OpenAI counts about
  20 output audio tokens a second; the Realtime API's default output, 16-bit PCM at 24 kHz, is 48,000
  bytes a second, 64,000 characters of base64 — one token per AUDIO_CHARS_PER_TOKEN characters. G.711
  audio (8,000 bytes a second) is counted six times lower: an under-estimate, never more.
The sweep prices these tokens as text output (its record carries the text price only): audio output, which
AudioRatio × AudioCompletionRatio makes dearer, is charged below its price — the checkpoint is a lower
bound of what the response costs, never above it. A response that ends in a living process without its
`response.done` (the upstream gone mid-response) is settled from the same estimate, its audio at the
audio price (session.py)."""
from __future__ import annotations

from typing import Any

from api.upstream.tokenizer import count_text

TEXT_DELTAS = frozenset({"response.output_text.delta", "response.output_audio_transcript.delta",
                         "response.function_call_arguments.delta", "response.text.delta",
                         "response.audio_transcript.delta"})
AUDIO_DELTAS = frozenset({"response.output_audio.delta", "response.audio.delta"})
DELTAS = TEXT_DELTAS | AUDIO_DELTAS
AUDIO_CHARS_PER_TOKEN = 3200  # base64 characters of 24 kHz 16-bit PCM per output token (20 a second)


class OutputSoFar:
    """The output tokens of the response in progress, estimated from its deltas."""

    __slots__ = ("audio_chars", "text_tokens")

    def __init__(self) -> None:
        self.text_tokens = 0
        self.audio_chars = 0

    def reset(self) -> None:
        self.text_tokens = self.audio_chars = 0

    def add(self, kind: str, event: dict[str, Any]) -> None:
        """One delta event (of DELTAS) relayed to the client."""
        delta = event.get("delta")
        if not isinstance(delta, str):
            return
        if kind in AUDIO_DELTAS:
            self.audio_chars += len(delta)
        else:
            self.text_tokens += count_text(delta)

    @property
    def audio_tokens(self) -> int:
        return self.audio_chars // AUDIO_CHARS_PER_TOKEN

    @property
    def tokens(self) -> int:
        return self.text_tokens + self.audio_tokens
