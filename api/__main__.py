"""`python -m api`: one API process (run several behind a load balancer, or REUSE_PORT=1)."""
from __future__ import annotations

import logging

from aiohttp import web

from api.app import create_app
from api.web.heap import setup_heap
from models.settings import Settings


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is in requirements on Linux
        pass
    # Every running request gets SHUTDOWN_TIMEOUT, then FINAL_WAIT to end, in the shutdown hooks
    # (api.web.stopping); aiohttp's own wait (this long, then as long again once it cancelled) is
    # for nothing, normally.
    app = create_app(settings)
    setup_heap(app)  # the last startup hook: the loaded process frozen out of the collector's scans
    web.run_app(app, host=settings.host, port=settings.port, reuse_port=settings.reuse_port or None,
                access_log=None, shutdown_timeout=1.0, print=lambda *_: logging.getLogger("api").info(
                    "listening on http://%s:%s", settings.host, settings.port))


if __name__ == "__main__":
    main()
