#!/usr/bin/env bash
# Lighthouse on the console (`make lighthouse`): a gateway of its own (python -m api.launch on a fresh data directory
# and a free port, serving frontend/build), a user with some usage, then bench/lighthouse/run.mjs on /login and the
# user's dashboard. Lighthouse is pinned in bench/lighthouse/package.json (not a dependency of the console).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
[ -f frontend/build/index.html ] || (cd frontend && npm run build)
[ -d bench/lighthouse/node_modules ] || (cd bench/lighthouse && npm ci --no-audit --no-fund)

DATA_DIR=$(mktemp -d)
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
DATA_DIR=$DATA_DIR PORT=$PORT $PY -m api.launch > "$DATA_DIR/gateway.log" 2>&1 &
GATEWAY=$!
trap 'kill $GATEWAY 2>/dev/null; wait $GATEWAY 2>/dev/null; rm -rf "$DATA_DIR"' EXIT
for _ in $(seq 1 300); do
  curl -sf "$BASE/api/status" > /dev/null && break
  kill -0 $GATEWAY 2>/dev/null || { cat "$DATA_DIR/gateway.log"; exit 1; }
  sleep 0.2
done

# root makes the user whose dashboard is measured (a user's console: no default-password notice).
JAR="$DATA_DIR/cookies"
curl -sf -c "$JAR" -H 'Content-Type: application/json' -d '{"username":"root","password":"123456"}' "$BASE/api/user/login" > /dev/null
ROOT_ID=$(curl -sf -b "$JAR" "$BASE/api/user/self" -H 'New-Api-User: 1' | $PY -c 'import json, sys; print(json.load(sys.stdin)["data"]["id"])')
curl -sf -b "$JAR" -H "New-Api-User: $ROOT_ID" -H 'Content-Type: application/json' \
  -d '{"username":"bench","password":"bench-password-1","display_name":"Bench"}' "$BASE/api/user/" > /dev/null

node bench/lighthouse/run.mjs "$BASE" bench bench-password-1
