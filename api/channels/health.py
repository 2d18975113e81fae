"""When a channel should be disabled automatically (AutomaticDisableChannelEnabled and the channel's
`auto_ban`): at once on an error proving its credentials or account unusable, and on repeated
failures only when the share of failed attempts in a sliding window passes AutomaticDisableErrorRate
over at least AutomaticDisableMinRequests attempts — never on one timeout (docs/compatibility.md,
Automatic disabling).

The window is kept per process (no Redis call per request); with several API processes each judges
its own share of the traffic, which has the same error rate.
"""
from __future__ import annotations

import time
from collections import deque

from api.channels.error_rules import should_disable_for_error
from api.services.configuration.options import OptionsService
from api.upstream.blame import names_the_request
from api.upstream.errors import RelayError

MAX_SAMPLES = 1000  # per channel; a busy channel's window is judged on its last 1000 attempts


def about_the_channel(err: RelayError) -> bool:
    """An upstream error that tells about the channel rather than about the request (404: the
    channel lists a model its upstream does not serve). A 404 or 403 about something the request
    named (an unknown item or file, a model asked of an endpoint it is not for) is the client's
    (api/upstream/blame.py)."""
    if names_the_request(err.status, err.type, err.code, err.message):
        return False
    return err.status >= 500 or err.status in (401, 402, 403, 404, 408) or err.type in {
        "insufficient_quota", "authentication_error", "permission_error"}


class ChannelHealth:
    def __init__(self) -> None:
        self._windows: dict[int, deque[tuple[float, bool]]] = {}

    def _window(self, channel_id: int, now: float, span: float) -> deque[tuple[float, bool]]:
        window = self._windows.setdefault(channel_id, deque(maxlen=MAX_SAMPLES))
        while window and window[0][0] < now - span:
            window.popleft()
        return window

    def record_success(self, channel_id: int, options: OptionsService) -> None:
        now = time.monotonic()
        self._window(channel_id, now, options.get_int("AutomaticDisableWindowSeconds")).append((now, True))

    def record_failure(self, channel_id: int, channel_type: int, auto_ban: bool, err: RelayError,
                       options: OptionsService) -> str | None:
        """Count a failed attempt; the reason to disable the channel now, or None. Only errors that
        say something about the channel count (5xx, timeouts, connection errors, credential and
        quota errors, a model its upstream does not serve): a client's bad request answered 400 by
        the upstream is the client's, and must not let any key holder disable a shared channel."""
        if err.local:
            return None
        fatal = should_disable_for_error(err, channel_type)
        if not (fatal or about_the_channel(err)):
            return None
        now = time.monotonic()
        window = self._window(channel_id, now, options.get_int("AutomaticDisableWindowSeconds"))
        window.append((now, False))
        if not (auto_ban and options.get_bool("AutomaticDisableChannelEnabled")):
            return None
        if fatal:
            return f"status {err.status}: {err.message}"[:500]
        minimum = max(options.get_int("AutomaticDisableMinRequests"), 1)
        if len(window) < minimum:
            return None
        failures = sum(1 for _, ok in window if not ok)
        rate = failures / len(window)
        threshold = options.get_float("AutomaticDisableErrorRate")
        if threshold > 0 and rate >= threshold:
            return (f"{failures} of the last {len(window)} attempts failed ({rate:.0%}); "
                    f"last error: status {err.status}: {err.message}")[:500]
        return None

    def forget(self, channel_id: int) -> None:
        self._windows.pop(channel_id, None)
