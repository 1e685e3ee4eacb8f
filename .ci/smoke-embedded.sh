#!/usr/bin/env bash
# Starts Roster with `npm start` on the embedded PostgreSQL default (a fresh data dir), checks /health/ready and an
# admin call, then stops it with SIGTERM and checks it exits cleanly.
set -euo pipefail
DATA=$(mktemp -d)
PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
LOG=$(mktemp)
ROSTER_DATA_DIR="$DATA" ROSTER_PORT="$PORT" ROSTER_LOG_LEVEL=info npm start >"$LOG" 2>&1 &
PID=$!
ok=0
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1; then ok=1; break; fi
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.5
done
if [ "$ok" != 1 ]; then echo "Roster did not become ready"; cat "$LOG"; kill "$PID" 2>/dev/null; exit 1; fi
TOKEN=$(grep -o 'rat_[A-Za-z0-9_-]*' "$LOG" | head -n 1)
[ -n "$TOKEN" ] || { echo "no admin token printed on first start"; cat "$LOG"; exit 1; }
curl -fsS -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"smoke"}' \
  "http://127.0.0.1:$PORT/v2alpha1/admin/organizations" >/dev/null
echo "embedded start: ready and serving"
kill -TERM "$PID"
wait "$PID" || { echo "Roster exited non-zero after SIGTERM"; cat "$LOG"; exit 1; }
pgrep -f "$DATA/pg" >/dev/null && { echo "embedded PostgreSQL left running"; exit 1; }
rm -rf "$DATA" "$LOG"
echo "embedded start: stopped cleanly"
