"""Ollama (type 4): chat through its OpenAI-compatible `/v1` API; embeddings through its native
`/api/embeddings` (one prompt in, `{"embedding": [...]}` out), converted both ways."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.base import OPENAI_PATHS, RelayMode, TokenUsage
from api.relay.errors import RelayError
from api.relay.providers.openai import OpenAIAdaptor

OLLAMA_PATHS: Mapping[RelayMode, str] = {**OPENAI_PATHS, RelayMode.EMBEDDINGS: "/api/embeddings"}


class OllamaAdaptor(OpenAIAdaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = OLLAMA_PATHS

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.COMPLETIONS, RelayMode.EMBEDDINGS) and super().supports(mode)

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        value = req.get("input")
        if isinstance(value, list):
            if len(value) != 1 or not isinstance(value[0], str):
                raise RelayError.local_error(
                    400, "this channel (Ollama) embeds one text input per request", "invalid_input"
                )
            value = value[0]
        if not isinstance(value, str):
            raise RelayError.local_error(400, "input must be a string", "invalid_input")
        return {"model": self.meta.model, "prompt": value}

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Ollama reports no token count here: usage is the local prompt count (meta.prompt_tokens)."""
        prompt = self.meta.prompt_tokens
        usage = TokenUsage(prompt, 0)
        out = {
            "object": "list",
            "data": [{"object": "embedding", "embedding": body.get("embedding") or [], "index": 0}],
            "model": self.meta.requested_model or self.meta.model,
            "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
        }
        return out, usage
