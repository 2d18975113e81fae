"""Azure OpenAI (type 3): OpenAI's format behind deployment URLs and an `api-key` header."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from api.relay.base import RelayMode
from api.relay.providers.openai import OpenAIAdaptor
from models.enums import ChannelType

DEFAULT_API_VERSION = "2023-06-01-preview"
# The first version taking what a reasoning model needs: `max_completion_tokens` (2024-09-01-preview) and
# `reasoning_effort` (learn.microsoft.com/azure/ai-services/openai/api-version-deprecation).
REASONING_API_VERSION = "2024-12-01-preview"

AZURE_TASKS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "chat/completions",
    RelayMode.COMPLETIONS: "completions",
    RelayMode.EMBEDDINGS: "embeddings",
    RelayMode.IMAGES: "images/generations",
    RelayMode.SPEECH: "audio/speech",
    RelayMode.TRANSCRIPTION: "audio/transcriptions",
    RelayMode.TRANSLATION: "audio/translations",
}


class AzureAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.AZURE
    default_base_url: ClassVar[str] = ""

    def supports(self, mode: RelayMode) -> bool:
        return mode in AZURE_TASKS and super().supports(mode)

    @property
    def api_version(self) -> str:
        """The channel's version; else the default, or the first that takes reasoning models' fields."""
        if self.meta.other.strip():
            return self.meta.other.strip()
        return REASONING_API_VERSION if self.meta.cap.output_param == "max_completion_tokens" else DEFAULT_API_VERSION

    def request_url(self, mode: RelayMode | None = None) -> str:
        """`{base}/openai/deployments/{model without dots}/{task}?api-version=…` (gpt-3.5 → gpt-35)."""
        task = AZURE_TASKS[mode or self.meta.mode]
        deployment = self.meta.model.replace(".", "")
        return f"{self.base_url}/openai/deployments/{deployment}/{task}?api-version={self.api_version}"

    def request_headers(self) -> dict[str, str]:
        return {"api-key": self.meta.key}
