"""Headers every answer carries, and the stricter ones of the console's pages.

The console's Content-Security-Policy allows its own scripts and styles, Cloudflare Turnstile's
widget, images from anywhere (notices and model icons), and pages of other sites only as frames of
the home and about pages (HomePageContent and About may be a URL); nothing may frame the console itself.
`frontend/nginx.conf` sends the same headers when nginx serves the build.
"""
from __future__ import annotations

from aiohttp import web

SERVER = "ai-gateway"  # no product versions: they only help an attacker pick an exploit
CONSOLE_CSP = (
    "default-src 'self'; script-src 'self' https://challenges.cloudflare.com; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; font-src 'self' data:; "
    "connect-src 'self'; frame-src 'self' https:; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONSOLE_CSP,
    "X-Frame-Options": "DENY",
}


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers["Server"] = SERVER
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "strict-origin-when-cross-origin")
    if response.content_type == "text/html":
        for name, value in PAGE_HEADERS.items():
            response.headers.setdefault(name, value)


def setup_security_headers(app: web.Application) -> None:
    app.on_response_prepare.append(_headers)
