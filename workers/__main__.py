"""`python -m workers`: the Dramatiq worker of this project, with its defaults, supervised.

Runs `dramatiq workers.actors --processes $WORKER_PROCESSES --threads $WORKER_THREADS
--worker-shutdown-timeout 30000` (extra arguments are passed on to Dramatiq's command line) as a
child that is started again when it dies (workers.supervisor).
"""
from __future__ import annotations

import logging
import os
import sys

from dramatiq.cli import make_argument_parser

from workers.broker import SHUTDOWN_TIMEOUT_MS
from workers.supervisor import Supervisor


def arguments(argv: list[str], env: dict[str, str]) -> list[str]:
    return ["workers.actors", "--processes", env.get("WORKER_PROCESSES", "1"),
            "--threads", env.get("WORKER_THREADS", "8"), "--worker-shutdown-timeout", str(SHUTDOWN_TIMEOUT_MS), *argv]


def main(argv: list[str], env: dict[str, str]) -> int:
    args = arguments(argv, env)
    make_argument_parser().parse_args(args)  # a wrong argument ends here, not in a restart loop
    logging.basicConfig(level=(env.get("LOG_LEVEL") or "INFO").upper(),
                        format="[%(asctime)s] [PID %(process)d] [%(name)s] [%(levelname)s] %(message)s")
    return Supervisor([sys.executable, "-m", "dramatiq", *args]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], dict(os.environ)))
