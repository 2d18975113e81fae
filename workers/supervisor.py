"""Keeps Dramatiq's worker processes running: `python -m workers` starts Dramatiq's main process as
its child and starts it again when it ends unasked.

Dramatiq's main process exits as soon as one of its worker processes dies (kill -9, the OOM
killer, a crash in a C extension), stopping the others first: without a supervisor the workers
would be gone until someone restarts them. Here they come back, after a back-off that doubles
from `first_delay` up to `max_delay` while they keep dying young (running less than `stable_after`
seconds). SIGTERM and SIGINT are passed on and end the supervision once Dramatiq's main process has
stopped its workers (the supervisor exits with its code); SIGHUP is passed on (Dramatiq reloads).
"""
from __future__ import annotations

import logging
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

log = logging.getLogger("workers.supervisor")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def next_delay(delay: float, ran_for: float, *, first: float, most: float, stable_after: float) -> float:
    """The back-off before the start after this one: back to `first` after a run that lasted."""
    return first if ran_for >= stable_after else min(delay * 2, most)


class Supervisor:
    def __init__(self, command: Sequence[str], *, first_delay: float = 1.0, max_delay: float = 30.0,
                 stable_after: float = 60.0) -> None:
        self.command = list(command)
        self.first_delay, self.max_delay, self.stable_after = first_delay, max_delay, stable_after
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = threading.Event()
        self.starts = 0

    def _on_signal(self, signum: int, frame: object) -> None:
        if signum in STOP_SIGNALS:
            self.stopping.set()
        child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    def run(self) -> int:
        for sig in (*STOP_SIGNALS, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        delay = self.first_delay
        while True:
            started = time.monotonic()
            self.child = subprocess.Popen(self.command)  # same process group: a group signal reaches all
            self.starts += 1
            code = self.child.wait()
            if self.stopping.is_set():
                return code if code >= 0 else 128 - code
            ran_for = time.monotonic() - started
            delay = self.first_delay if ran_for >= self.stable_after else delay
            log.error("worker processes exited unasked (code %s) after %.1f s: starting them again in %.1f s",
                      code, ran_for, delay)
            if self.stopping.wait(delay):
                return 0
            delay = next_delay(delay, ran_for, first=self.first_delay, most=self.max_delay,
                               stable_after=self.stable_after)
