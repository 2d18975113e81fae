"""Process settings: environment variables, parsed once into a frozen dataclass.

Runtime options (the console's /api/option rows) live in the database and are handled by
api.services.configuration.options; nothing here changes while a process runs.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .backends import bounded_connection

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = ROOT / "data"
VERSION = "0.1.0"


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name, "")
    if raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name, "")
    if raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


def _positive(env: dict[str, str], name: str, default: float) -> float:
    value = _float(env, name, default)
    if not value > 0:
        raise ValueError(f"{name} must be a number of seconds above 0, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    redis_url: str
    session_secret: str
    host: str = "0.0.0.0"
    port: int = 3000
    redis_prefix: str = "gw:"
    data_dir: Path = DEFAULT_DATA_DIR
    initial_root_password: str = ""
    frontend_dir: Path = ROOT / "frontend" / "build"
    session_ttl: int = 30 * 24 * 3600
    session_cookie_secure: bool = False
    trusted_proxies: tuple[str, ...] = ()
    relay_timeout: float = 0.0          # total seconds for a non-streamed upstream call; 0 = none
    streaming_timeout: float = 120.0    # idle seconds between two upstream stream chunks
    connect_timeout: float = 10.0
    checkpoint_interval: float = 5.0    # seconds between two renewals of a long request's reservation
    reservation_ttl: float = 120.0      # seconds a reservation stands without renewal (then the sweep closes it)
    shutdown_timeout: float = 30.0      # seconds a stopping API process lets running requests finish
    reuse_port: bool = False            # several API processes share the port (SO_REUSEPORT)
    scheduler_leader_ttl: float = 15.0  # seconds before a standby scheduler takes over
    scheduler_interval_scale: float = 1.0  # multiplies every job interval (tests run the timetable faster)
    upstream_pool_size: int = 0         # 0 = unlimited keep-alive pool
    redis_pool_size: int = 256          # Redis connections per process (callers wait beyond it)
    redis_cluster: bool = False         # REDIS_URL names a node of a Redis Cluster
    broker_url: str = ""                # the workers' queues (a plain Redis); empty = REDIS_URL
    rate_limit_api: int = 600           # console requests per IP per RATE_LIMIT_WINDOW
    rate_limit_critical: int = 20       # register/login/mail/oauth per IP per CRITICAL_RATE_LIMIT_WINDOW
    rate_limit_window: int = 180
    critical_rate_limit_window: int = 1200
    turnstile_verify_url: str = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
    github_base_url: str = "https://github.com"
    github_api_url: str = "https://api.github.com"
    linuxdo_base_url: str = "https://connect.linux.do"
    stripe_api_base: str = ""           # empty = Stripe's own API
    log_level: str = "INFO"
    worker_processes: int = 1
    worker_threads: int = 8
    db_connect_timeout: float = 5.0      # seconds to open a connection, or to wait for a free one
    db_statement_timeout: float = 10.0   # seconds one statement may take (or wait for a lock)
    db_transaction_timeout: float = 30.0  # seconds a transaction may take (a settlement), or idle mid-way
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        data_dir = Path(env.get("DATA_DIR") or DEFAULT_DATA_DIR)
        database_url = database_url_from_env(env)
        redis_url = env.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
        secret = env.get("SESSION_SECRET", "")
        if not secret:
            secret_file = data_dir / "session_secret"
            if secret_file.exists():
                secret = secret_file.read_text().strip()
        if not secret:
            raise ValueError(
                "SESSION_SECRET is not set: set it (production) or start with `make run`, "
                "which generates one in the data folder"
            )
        proxies = tuple(p.strip() for p in env.get("TRUSTED_PROXIES", "").split(",") if p.strip())
        timeouts = DatabaseTimeouts.from_env(env)
        return cls(
            database_url=database_url,
            redis_url=redis_url,
            session_secret=secret,
            host=env.get("HOST") or "0.0.0.0",
            port=_int(env, "PORT", 3000),
            redis_prefix=env.get("REDIS_PREFIX", "gw:"),
            data_dir=data_dir,
            initial_root_password=env.get("INITIAL_ROOT_PASSWORD", ""),
            frontend_dir=Path(env.get("FRONTEND_DIR") or ROOT / "frontend" / "build"),
            session_ttl=_int(env, "SESSION_TTL", 30 * 24 * 3600),
            session_cookie_secure=_bool(env.get("SESSION_COOKIE_SECURE"), False),
            trusted_proxies=proxies,
            relay_timeout=_float(env, "RELAY_TIMEOUT", 0.0),
            streaming_timeout=_float(env, "STREAMING_TIMEOUT", 120.0),
            connect_timeout=_float(env, "CONNECT_TIMEOUT", 10.0),
            checkpoint_interval=_float(env, "CHECKPOINT_INTERVAL", 5.0),
            reservation_ttl=_float(env, "RESERVATION_TTL", 120.0),
            shutdown_timeout=_float(env, "SHUTDOWN_TIMEOUT", 30.0),
            reuse_port=env.get("REUSE_PORT", "").lower() in {"1", "true", "yes"},
            scheduler_leader_ttl=_float(env, "SCHEDULER_LEADER_TTL", 15.0),
            scheduler_interval_scale=_float(env, "SCHEDULER_INTERVAL_SCALE", 1.0),
            upstream_pool_size=_int(env, "UPSTREAM_POOL_SIZE", 0),
            redis_pool_size=_int(env, "REDIS_POOL_SIZE", 256),
            redis_cluster=env.get("REDIS_CLUSTER", "").lower() in {"1", "true", "yes"},
            broker_url=env.get("BROKER_URL") or redis_url,
            rate_limit_api=_int(env, "RATE_LIMIT_API", 600),
            rate_limit_critical=_int(env, "RATE_LIMIT_CRITICAL", 20),
            rate_limit_window=_int(env, "RATE_LIMIT_WINDOW", 180),
            critical_rate_limit_window=_int(env, "CRITICAL_RATE_LIMIT_WINDOW", 1200),
            turnstile_verify_url=env.get("TURNSTILE_VERIFY_URL")
            or "https://challenges.cloudflare.com/turnstile/v0/siteverify",
            github_base_url=(env.get("GITHUB_BASE_URL") or "https://github.com").rstrip("/"),
            github_api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            linuxdo_base_url=(env.get("LINUXDO_BASE_URL") or "https://connect.linux.do").rstrip("/"),
            stripe_api_base=(env.get("STRIPE_API_BASE") or "").rstrip("/"),
            log_level=(env.get("LOG_LEVEL") or "INFO").upper(),
            worker_processes=_int(env, "WORKER_PROCESSES", 1),
            worker_threads=_int(env, "WORKER_THREADS", 8),
            db_connect_timeout=timeouts.connect,
            db_statement_timeout=timeouts.statement,
            db_transaction_timeout=timeouts.transaction,
        )

    @property
    def dialect(self) -> str:
        return dialect_of(self.database_url)

    @property
    def database_timeouts(self) -> DatabaseTimeouts:
        return DatabaseTimeouts(self.db_connect_timeout, self.db_statement_timeout, self.db_transaction_timeout)


@dataclass(frozen=True, slots=True)
class DatabaseTimeouts:
    """How long a process waits for its database, on every path (models.backends applies them).

    connect: opening a connection, and waiting for a free one (a pool slot, SQLite's one connection);
    statement: one statement, on the server where it can say so (PostgreSQL's statement_timeout,
      MySQL's lock wait, SQLite's busy timeout) and on the client one second later (CLIENT_GRACE: a
      server that answers gives its own clean error first; one that does not is given up on);
    transaction: a settlement's whole transaction, and a session idle inside a transaction (its
      client gone without a word) before PostgreSQL ends it and frees its row locks.
    """

    connect: float = 5.0
    statement: float = 10.0
    transaction: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DatabaseTimeouts:
        """DB_CONNECT_TIMEOUT, DB_STATEMENT_TIMEOUT, DB_TRANSACTION_TIMEOUT: seconds, above 0."""
        values = dict(env)
        return cls(_positive(values, "DB_CONNECT_TIMEOUT", 5.0), _positive(values, "DB_STATEMENT_TIMEOUT", 10.0),
                   _positive(values, "DB_TRANSACTION_TIMEOUT", 30.0))

    @property
    def client_statement(self) -> float:
        return self.statement + CLIENT_GRACE


CLIENT_GRACE = 1.0  # seconds the client waits for a statement beyond the server's own limit


def database_url_from_env(env: dict[str, str]) -> str:
    """DATABASE_URL, or the SQLite file in DATA_DIR (default ./data) when it is unset."""
    data_dir = Path(env.get("DATA_DIR") or DEFAULT_DATA_DIR)
    return env.get("DATABASE_URL") or f"sqlite://{data_dir / 'gateway.sqlite3'}"


def dialect_of(database_url: str) -> str:
    """sqlite, postgres or mysql: the folder of models/migrations that fits this URL."""
    scheme = urlsplit(database_url).scheme
    if scheme.startswith("postgres") or scheme in {"psycopg", "asyncpg"}:
        return "postgres"
    if scheme.startswith("mysql"):
        return "mysql"
    return "sqlite"


MODEL_MODULES = ["models"]


def tortoise_config(database_url: str, with_aerich: bool = True,
                    timeouts: DatabaseTimeouts | None = None) -> dict[str, Any]:
    """Tortoise's configuration. With `timeouts`, the connection is one of models.backends' clients,
    whose every wait is bounded (the running processes); without, Tortoise's own client as the URL
    says (migrations, whose statements may rightly run long)."""
    modules = [*MODEL_MODULES, "aerich.models"] if with_aerich else list(MODEL_MODULES)
    connection: str | dict[str, Any] = database_url
    if timeouts is not None:
        connection = bounded_connection(database_url, timeouts)
    return {
        "connections": {"default": connection},
        "apps": {"models": {"models": modules, "default_connection": "default"}},
        "use_tz": False,
        "timezone": "UTC",
    }


# For the aerich CLI (`aerich --app models ...`).
TORTOISE_ORM = tortoise_config(database_url_from_env(dict(os.environ)))
