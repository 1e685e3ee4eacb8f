#!/usr/bin/env bash
# Starts one of the lab's restartable processes in the background and records its pid in $LAB/<name>.pid, so that
# the run's teardown (and a scenario that kills it) ends exactly that process. Used by run.sh at set-up and by
# scenario.ts to bring back what a scenario killed. Reads the lab's settings from $LAB/lab.env (written by run.sh).
#
#   start.sh patroni pg1|pg2    the node's Patroni (which starts, rewinds or follows its PostgreSQL)
#   start.sh roster 1|2|3       a Roster instance
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${LAB:?LAB is not set (run deploy/lab/run.sh)}"
# shellcheck source=/dev/null
. "$LAB/lab.env"
case "$1" in
  patroni)
    # setpriv execs Patroni itself (runuser would fork), so the recorded pid is Patroni's.
    setpriv --reuid=postgres --regid=postgres --init-groups patroni "$LAB/patroni-$2.yml" \
      >>"$LAB/logs/patroni-$2.log" 2>&1 </dev/null &
    echo $! >"$LAB/patroni-$2.pid"
    ;;
  roster)
    port=${ROSTERS[$(($2 - 1))]}
    ROSTER_HOST=127.0.0.1 ROSTER_PORT=$port ROSTER_PUBLIC_URL="http://127.0.0.1:$ROSTER_LB" \
      ROSTER_DATABASE_URL="postgres://postgres@127.0.0.1:$BOUNCER/roster" ROSTER_DATABASE_POOLING=transaction \
      ROSTER_DATABASE_CONNECT_TIMEOUT_MS=$ROSTER_CONNECT_TIMEOUT_MS \
      ROSTER_SECRETS=$SECRETS ROSTER_ADMIN_TOKEN=$ADMIN_TOKEN ROSTER_LOG_LEVEL=warn ROSTER_WEBHOOK_URL_ALLOW=127.0.0.1 \
      node --max-semi-space-size=32 --import tsx src/server.ts >>"$LAB/logs/roster-$2.log" 2>&1 </dev/null &
    echo $! >"$LAB/roster-$2.pid"
    ;;
  *)
    echo "usage: start.sh patroni pg1|pg2 | roster 1|2|3" >&2
    exit 2
    ;;
esac
