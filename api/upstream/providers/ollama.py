"""Ollama (type 4): chat through its OpenAI-compatible `/v1` API; embeddings through its native
`/api/embed` (ollama/ollama docs/api.md, "Generate Embeddings"): `input` is one text or a list,
the answer `{"embeddings": [[…], …], "prompt_eval_count": n}`, converted both ways. (The older
`/api/embeddings` took one prompt and reported no count.)"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from api.upstream.base import OPENAI_PATHS, RelayMode, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.providers.openai import OpenAIAdaptor

OLLAMA_PATHS: Mapping[RelayMode, str] = {**OPENAI_PATHS, RelayMode.EMBEDDINGS: "/api/embed"}


class OllamaAdaptor(OpenAIAdaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = OLLAMA_PATHS

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        value = req.get("input")
        texts = value if isinstance(value, list) else [value]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise RelayError.local_error(400, "this channel (Ollama) embeds text: `input` must be a string or a "
                                              "list of strings", "invalid_input")
        self.base64 = req.get("encoding_format") == "base64"
        body: dict[str, Any] = {"model": self.meta.model, "input": value}
        if isinstance(req.get("dimensions"), int) and not isinstance(req.get("dimensions"), bool):
            body["dimensions"] = req["dimensions"]
        return body

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Usage from Ollama's `prompt_eval_count`; the local count when it reports none."""
        vectors = body.get("embeddings")
        if not isinstance(vectors, list):
            raise RelayError(502, "the upstream answered no embeddings", "upstream_error", "bad_response_body")
        counted = body.get("prompt_eval_count")
        prompt = counted if isinstance(counted, int) and not isinstance(counted, bool) else self.meta.prompt_tokens
        encode = getattr(self, "base64", False)
        out = {
            "object": "list",
            "data": [{"object": "embedding", "index": i,
                      "embedding": _base64(vector) if encode else vector} for i, vector in enumerate(vectors)],
            "model": self.meta.name.answered,
            "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
        }
        return out, TokenUsage(prompt, 0)


def _base64(vector: list[float]) -> str:
    """OpenAI's base64 form of an embedding: little-endian float32s (the SDKs ask for it by default)."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
