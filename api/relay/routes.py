"""Relay routes (/v1, /pg, /dashboard): the OpenAI-format surface."""
from __future__ import annotations

from aiohttp import web


def setup_relay(app: web.Application) -> None:
    """Mount the relay on the root application (filled in by the relay pipeline)."""
