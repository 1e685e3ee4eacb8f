#!/usr/bin/env bash
# Runs the third-party SCIM suites (../shared/conformance: Okta's SCIM spec test and Microsoft's Postman collection)
# against Roster started on an existing PostgreSQL, each suite with a fresh organization and SCIM client.
# Usage: bash .ci/conformance.sh postgres://…/database   (the database is created if missing)
# Fails when any suite reports a failed check.
set -euo pipefail
cd "$(dirname "$0")/.."
URL="$1"
SUITES_DIR="$(cd .. && pwd)/shared/conformance"
[ -f "$SUITES_DIR/run.sh" ] || { echo "no $SUITES_DIR/run.sh: skipping the third-party suites"; exit 0; }
DBNAME="${URL##*/}"
psql -q "${URL%/*}/postgres" -c "create database $DBNAME" 2>/dev/null || true

PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
TOKEN="conformance-admin-token-$RANDOM$RANDOM"
LOG=$(mktemp)
ROSTER_DATABASE_URL="$URL" ROSTER_PORT="$PORT" ROSTER_ADMIN_TOKEN="$TOKEN" \
  ROSTER_SECRETS="conformance-secret-0123456789abcdefghijklmnop" ROSTER_LOG_LEVEL=warn \
  node --import tsx src/server.ts >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 120); do curl -fsS "$BASE/health/ready" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fsS "$BASE/health/ready" >/dev/null || { echo "Roster did not start"; cat "$LOG"; exit 1; }

admin() { curl -fsS -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' "$@"; }
failed=0
for suite in okta-spec ms-postman; do
  ORG=$(admin -d "{\"name\":\"conformance $suite\"}" "$BASE/v2alpha1/admin/organizations" | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
  SECRET="conformance-$suite-$RANDOM$RANDOM"
  CLIENT=$(admin -d "{\"organization_id\":\"$ORG\",\"secret\":\"$SECRET\"}" "$BASE/v2alpha1/admin/scimClients" \
    | node -pe 'JSON.parse(require("fs").readFileSync(0)).client_id')
  out=$(VERBOSE=1 bash "$SUITES_DIR/run.sh" "$BASE/scim/$CLIENT/v2" "$SECRET" "$suite" 2>&1) || true
  printf '%s\n' "$out" | tail -n 40
  line=$(printf '%s\n' "$out" | grep -E "^$suite: [0-9]+ passed, [0-9]+ failed" | tail -n 1)
  [ -n "$line" ] || { echo "$suite: no result line"; failed=1; continue; }
  n=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  [ "$n" = 0 ] || failed=1
done
[ "$failed" = 0 ] || { echo "third-party SCIM suites reported failures"; exit 1; }
echo "third-party SCIM suites: 0 failed"
