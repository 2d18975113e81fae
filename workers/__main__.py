"""`python -m workers`: the Dramatiq worker of this project, with its defaults.

Equivalent to `dramatiq workers.actors --processes $WORKER_PROCESSES --threads $WORKER_THREADS
--worker-shutdown-timeout 30000`; extra arguments are passed on to Dramatiq's command line.
"""
from __future__ import annotations

import os
import sys

from dramatiq.cli import main as dramatiq_main
from dramatiq.cli import make_argument_parser

from workers.broker import SHUTDOWN_TIMEOUT_MS


def arguments(argv: list[str], env: dict[str, str]) -> list[str]:
    return ["workers.actors", "--processes", env.get("WORKER_PROCESSES", "1"),
            "--threads", env.get("WORKER_THREADS", "8"), "--worker-shutdown-timeout", str(SHUTDOWN_TIMEOUT_MS), *argv]


if __name__ == "__main__":
    sys.exit(dramatiq_main(make_argument_parser().parse_args(arguments(sys.argv[1:], dict(os.environ)))))
