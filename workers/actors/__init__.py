"""Every actor module; `dramatiq workers.actors` imports this package."""
from workers.broker import setup_broker

setup_broker()

from . import audit, billing, budget, channel, error_logs, logs, mail, relay, system, tasks  # noqa: E402,F401
