"""Custom channel (type 8): OpenAI's format at a full URL given by the admin, `{model}` replaced."""

from __future__ import annotations

from urllib.parse import urlsplit

from api.upstream.base import RelayMode
from api.upstream.providers.openai import OpenAIAdaptor


class CustomAdaptor(OpenAIAdaptor):

    def billing_base(self) -> str:
        """A full endpoint URL: OpenAI's billing API lives at its origin."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    def request_url(self, mode: RelayMode | None = None) -> str:
        """The channel's base URL is the whole endpoint, whatever the mode (as the reference)."""
        return self.base_url.replace("{model}", self.meta.model)
