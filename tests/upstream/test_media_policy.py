"""The media-fetch policy's address check and the URL schemes converters take."""
from __future__ import annotations

import pytest

from api.upstream.media import is_public
from api.upstream.providers.claude.messages import image_block
from api.upstream.providers.gemini.contents import MEDIA_PLACEHOLDER, image_part


@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("2606:4700:4700::1111", True),
    ("127.0.0.1", False), ("10.1.2.3", False), ("169.254.169.254", False), ("::1", False),
    ("::ffff:127.0.0.1", False),  # IPv4-mapped loopback
    ("2002:7f00:1::1", False),  # 6to4 carrying 127.0.0.1
    ("2002:a9fe:a9fe::1", False),  # 6to4 carrying the cloud metadata address 169.254.169.254
    ("2002:0808:0808::1", True),  # 6to4 carrying a public address
    ("fec0::1", False),  # site-local
])
def test_which_addresses_are_public(address: str, public: bool) -> None:
    assert is_public(address) is public


def test_an_upper_case_scheme_is_an_http_url() -> None:
    assert image_part("HTTPS://example.org/a.png")["inlineData"] == {"mimeType": MEDIA_PLACEHOLDER,
                                                                      "data": "HTTPS://example.org/a.png"}
    assert image_block("HTTP://example.org/a.png")["source"] == {"type": "url", "url": "HTTP://example.org/a.png"}
