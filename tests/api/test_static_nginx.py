"""frontend/nginx.conf serves the console as the API process does (api/static.py, api/security.py):
the same page headers, pre-compressed copies, no source maps, the page's language per request."""
from __future__ import annotations

import re

from api.security import CONSOLE_CSP
from tests.conftest import ROOT

CONF = (ROOT / "frontend" / "nginx.conf").read_text()


def _location(prefix: str) -> str:
    match = re.search(r"location " + re.escape(prefix) + r" \{(.*?)\n  \}", CONF, re.S)
    assert match, prefix
    return match.group(1)


def test_every_page_location_sends_the_consoles_csp() -> None:
    policies = re.findall(r'add_header Content-Security-Policy "([^"]*)" always;', CONF)
    assert len(policies) == 2  # the page, and any other file at the root (an SVG is a document too)
    assert set(policies) == {CONSOLE_CSP}
    for location in ("/", "= /index.html"):
        block = _location(location)
        assert "X-Frame-Options DENY always" in block and "nosniff always" in block
        assert 'Cache-Control "no-cache"' in block


def test_assets_go_out_pre_compressed_and_maps_stay_private() -> None:
    assert re.search(r"^\s*gzip_static on;", CONF, re.M)
    assert re.search(r"^\s*gzip_vary on;", CONF, re.M)
    assert "return 404;" in _location(r"~ \.map$")
    static = _location("/static/")
    assert "try_files $uri =404;" in static
    assert 'Cache-Control "public, max-age=31536000, immutable"' in static


def test_the_page_is_rewritten_to_the_visitors_language() -> None:
    page = (ROOT / "frontend" / "public" / "index.html").read_text()
    rewrite = re.search(r"sub_filter '([^']*)' '([^']*)';", _location("= /index.html"))
    assert rewrite is not None
    assert rewrite.group(1) in page  # else nginx would silently leave the page as it is
    assert rewrite.group(2) == '<html lang="$console_lang">'
    assert "<title>AI Gateway</title>" in page
