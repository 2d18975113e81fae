"""Azure OpenAI (type 3): OpenAI's API under the resource's endpoint, with an `api-key` header.

By default the v1 API (GA since August 2025, learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle):
OpenAI's paths under `{endpoint}/openai/v1` (chat/completions, embeddings, images/generations, audio/…, responses)
and OpenAI's bodies, `model` being the deployment's name, sent as the channel names it (deployment names may hold
dots: `gpt-4.1-mini` in Microsoft's own examples); the channel's model_mapping names other deployments. No
api-version is needed: the channel's `other` is empty (or `v1`), or `preview` for the preview features.

A dated api-version in `other` (`2024-10-21`, `2025-04-01-preview`, …) keeps the deployment URLs of the dated APIs,
`{endpoint}/openai/deployments/{deployment}/{task}?api-version=…`, the deployment named as those channels always
had it: the model without dots (gpt-3.5-turbo → gpt-35-turbo).

The base URL is the resource's endpoint (`https://<resource>.openai.azure.com`); one given with `/openai` or
`/openai/v1` after it is read the same. The Responses API is taken as sent at `{endpoint}/openai/v1/responses`
(api/relay/inbound/responses.py) whichever API the channel's other requests use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from api.upstream.base import RelayMeta, RelayMode
from api.upstream.providers.openai import OpenAIAdaptor

# The api-version a new channel gets: none, the v1 API.
DEFAULT_API_VERSION = ""
# `other` values meaning the v1 API: no api-version, or the ones the v1 API takes
# (learn.microsoft.com/azure/ai-foundry/openai/latest: "Possible values: v1, preview").
V1_VERSIONS = frozenset({"", "v1", "preview"})
DATED_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(-preview)?$")
# The first dated version taking `stream_options` (lifecycle guide: "Changes between 2024-09-01-preview and
# 2024-08-01-preview … stream_options & include_usage added").
STREAM_OPTIONS_SINCE = "2024-09-01"

AZURE_TASKS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "chat/completions",
    RelayMode.COMPLETIONS: "completions",
    RelayMode.EMBEDDINGS: "embeddings",
    RelayMode.IMAGES: "images/generations",
    # learn.microsoft.com/azure/ai-foundry/openai/how-to/dall-e, "Call the image edit API": a multipart form.
    RelayMode.IMAGES_EDIT: "images/edits",
    RelayMode.SPEECH: "audio/speech",
    RelayMode.TRANSCRIPTION: "audio/transcriptions",
    RelayMode.TRANSLATION: "audio/translations",
}


def other_problem(other: str) -> str | None:
    """The channel's api-version: empty, `v1`, `preview`, or a dated one (YYYY-MM-DD, maybe `-preview`)."""
    value = other.strip()
    return None if value in V1_VERSIONS or DATED_VERSION.match(value) else "channel_azure_api_version_invalid"


def endpoint_of(base_url: str) -> str:
    """The resource's endpoint, from a base URL given with or without `/openai` or `/openai/v1`."""
    base = base_url.strip().rstrip("/")
    for tail in ("/openai/v1", "/openai"):
        if base.endswith(tail):
            return base[: -len(tail)]
    return base


class AzureAdaptor(OpenAIAdaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        # `{endpoint}/openai`: OpenAI's paths (`/v1/…`) follow it, and so do the deployment URLs.
        self.base_url = endpoint_of(self.base_url) + "/openai"

    @property
    def api_version(self) -> str:
        return self.meta.other.strip()

    @property
    def dated(self) -> bool:
        """The channel names a dated api-version: the deployment URLs, not the v1 API."""
        return self.api_version not in V1_VERSIONS

    def supports(self, mode: RelayMode) -> bool:
        return mode in AZURE_TASKS and super().supports(mode)

    @property
    def supports_stream_options(self) -> bool:
        return not self.dated or self.api_version >= STREAM_OPTIONS_SINCE

    def has_balance(self) -> bool:
        """Azure bills through the Azure subscription: no balance API behind the key."""
        return False

    @property
    def deployment(self) -> str:
        """The deployment a dated api-version's URL names: the model without dots (gpt-3.5 → gpt-35)."""
        return self.meta.model.replace(".", "")

    def request_url(self, mode: RelayMode | None = None) -> str:
        """v1: `{endpoint}/openai/v1/{task}` (`?api-version=preview` when asked for); dated:
        `{endpoint}/openai/deployments/{deployment}/{task}?api-version=…`."""
        mode = mode or self.meta.mode
        if self.dated:
            return f"{self.base_url}/deployments/{self.deployment}/{AZURE_TASKS[mode]}?api-version={self.api_version}"
        url = f"{self.base_url}/v1/{AZURE_TASKS[mode]}"
        return f"{url}?api-version=preview" if self.api_version == "preview" else url

    def request_headers(self) -> dict[str, str]:
        return {"api-key": self.meta.key}

    def native_request(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """A Responses request as sent, to the v1 API; a channel of a dated api-version names its
        deployment there as in its other requests."""
        if self.dated:
            body = {**body, "model": self.deployment}
        return body, headers
