"""Input audio transcription in a Realtime session: a separate speech-recognition model transcribes what the
user said, "billed according to the ASR model's pricing rather than the realtime model's pricing" (the openai
SDK's types/realtime/conversation_item_input_audio_transcription_completed_event.py, `usage`). Each
`conversation.item.input_audio_transcription.completed` event is billed as it arrives, at the transcription
model's price (docs/billing.md, Realtime sessions).

- the model: the session's `audio.input.transcription.model` (GA; realtime_audio_config_input.py), or the
  beta `input_audio_transcription.model`, as the upstream's `session.created` / `session.updated` say;
- the usage: `{"type": "tokens", input_tokens, input_token_details {text_tokens, audio_tokens}, output_tokens}`
  (the gpt-4o-transcribe family), or `{"type": "duration", seconds}` (whisper-1), which the gateway bills as
  it bills `/v1/audio/transcriptions`: the transcript's text tokens as output.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.services.billing.realtime_pricing import RealtimeUsage
from api.upstream.tokenizer import count_text

COMPLETED = "conversation.item.input_audio_transcription.completed"
SESSION_EVENTS = frozenset({"session.created", "session.updated"})


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def transcriber_of(session: Any) -> str | None:
    """The transcription model a session event names; "" when transcription is off; None when it says nothing."""
    session = _mapping(session)
    audio_input = _mapping(_mapping(session.get("audio")).get("input"))
    for holder, name in ((audio_input, "transcription"), (session, "input_audio_transcription")):
        if name in holder:
            config = holder[name]
            model = _mapping(config).get("model")
            return model[:128] if isinstance(model, str) else ""
    return None


def transcription_usage(event: Mapping[str, Any]) -> RealtimeUsage | None:
    """A completed event's usage in the gateway's terms; None when it reports nothing billable."""
    usage = _mapping(event.get("usage"))
    if usage.get("type") == "duration":
        transcript = event.get("transcript")
        tokens = count_text(transcript) if isinstance(transcript, str) else 0
        return RealtimeUsage(0, tokens) if tokens else None
    prompt, completion = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if not prompt and not completion:
        return None
    audio = _count(_mapping(usage.get("input_token_details")).get("audio_tokens"))
    return RealtimeUsage(prompt, completion, 0, audio_input_tokens=audio)
