#!/usr/bin/env bash
# The scale-out lab: an HA PostgreSQL 15 pair (Patroni over a one-node etcd, synchronous_mode_strict), HAProxy in
# front of the current primary, PgBouncer in transaction pooling mode, three Roster instances behind a round-robin
# HAProxy frontend. Runs the scenarios of scenario.ts (a failover, all instances killed at once, a failover and its
# failback), prints their report and tears everything down, also on failure, timeout or Ctrl-C. Only 127.0.0.1;
# bounded to LAB_TIMEOUT seconds (default 1500). Never touches a PostgreSQL cluster it did not start. Long (several
# minutes): it is not part of `npm test` or CI.
#
#   bash deploy/lab/run.sh                       up, scenarios, report, down
#   LAB_KEEP=1 bash deploy/lab/run.sh            leave the lab running after the report, also after a failure
#                                                (Ctrl-C tears it down)
#   LAB_REPORT=/path/report.md bash deploy/lab/run.sh   also copy the report there
#   LAB_SCENARIOS=failover,all-instances,failback       which scenarios, in this order (default: all three)
#   LAB_SYNC_STRICT=false bash deploy/lab/run.sh         without synchronous_mode_strict (for comparison)
#   LAB_PHASE_SECONDS, LAB_WORKERS, LAB_WAIT_SECONDS     the load's phases (12 s), writers (6), bound on each wait (180 s)
#   LAB_DELIVERY_BOUND_SECONDS                           bound on the delivery of events committed after a database
#                                                        failover's recovery (2 s; a later one fails the scenario)
#
# The report (docs/scaling.md shows one) is written by the exit trap whatever happens, to $LAB_DIR-logs/report.md
# beside the logs, and to LAB_REPORT when set.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
LAB=${LAB_DIR:-/tmp/roster-lab}
export LAB
LAB_TIMEOUT=${LAB_TIMEOUT:-1500}
ETCD_PORT=23790 ETCD_PEER=23800
PG1=54321 PG2=54322 API1=8101 API2=8102
PG_FRONT=54300 BOUNCER=64320 STATS=18404
ROSTER_LB=18080 ROSTERS=(18081 18082 18083)
ADMIN_TOKEN=lab-admin-token-0123456789abcdef
SECRETS=lab-secret-key-0123456789abcdef0123456789abcdef
PG_BIN=/usr/lib/postgresql/15/bin
# PgBouncer fails a client that waited this long for a server connection (an outage); Roster bounds its own wait for
# a connection by ROSTER_CONNECT_TIMEOUT_MS. PgBouncer's bound is the shorter, so a request behind an outage is
# answered (503, Retry-After) after about QUERY_WAIT_TIMEOUT seconds, never after a longer Roster-side wait.
QUERY_WAIT_TIMEOUT=2
ROSTER_CONNECT_TIMEOUT_MS=3000
# LAB_SYNC_STRICT=false runs the pair without synchronous_mode_strict, to measure what strict mode costs.
SYNC_STRICT=${LAB_SYNC_STRICT:-true}

log() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
step="start"

# Every port the lab listens on must be free: another lab (or anything else) on them would mix two runs.
busy=()
for p in $ETCD_PORT $ETCD_PEER $PG1 $PG2 $API1 $API2 $PG_FRONT $BOUNCER $STATS $ROSTER_LB "${ROSTERS[@]}"; do
  if [ -n "$(ss -ltnH "sport = :$p" 2>/dev/null)" ]; then busy+=("$p"); fi
done
if [ ${#busy[@]} -gt 0 ]; then
  log "ports in use: ${busy[*]} (another lab running?); nothing started"
  exit 1
fi

pids=()
scenario_pid=""
watchdog=""
write_report() { # status
  local out="$LAB-logs"
  rm -rf "$out" && mkdir -p "$out"
  cp -r "$LAB/logs/." "$out/" 2>/dev/null || true
  if [ -s "$LAB/report.md" ]; then
    cp "$LAB/report.md" "$out/report.md"
  else
    printf '# Lab report\n\nThe lab ended during "%s" (exit status %s) before any scenario reported; see the logs in %s.\n' \
      "$step" "$1" "$out" >"$out/report.md"
  fi
  if [ "$1" != 0 ]; then printf '\n**The lab FAILED** (exit status %s, during "%s").\n' "$1" "$step" >>"$out/report.md"; fi
  if [ -n "${LAB_REPORT:-}" ]; then cp "$out/report.md" "$LAB_REPORT"; fi
  log "report and logs kept in $out"
}
kill_pidfiles() { # signal
  for f in "$LAB"/*.pid; do
    [ -f "$f" ] || continue
    kill "-$1" "$(cat "$f")" 2>/dev/null || true
  done
}
teardown() {
  local status=$?
  # Nothing in the teardown may end it early: errexit is off from here on.
  set +e
  trap - EXIT
  trap 'exit 130' INT TERM
  # The watchdog only (its sleep, orphaned, ends by itself and does nothing).
  if [ -n "$watchdog" ]; then kill "$watchdog" 2>/dev/null; fi
  if [ -n "$scenario_pid" ]; then kill "$scenario_pid" 2>/dev/null; fi
  write_report "$status"
  if [ "${LAB_KEEP:-0}" = 1 ] && [ -d "$LAB" ]; then
    log "LAB_KEEP=1: the lab keeps running (exit status $status); Ctrl-C tears it down"
    trap 'true' INT TERM
    sleep infinity &
    local keep=$!
    wait "$keep" || true
    kill "$keep" 2>/dev/null
    trap - INT TERM
  fi
  log "tearing down"
  kill_pidfiles TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for d in "$LAB"/pg1 "$LAB"/pg2; do
    [ -f "$d/postmaster.pid" ] && kill -9 "$(head -1 "$d/postmaster.pid")" 2>/dev/null || true
  done
  sleep 1
  kill_pidfiles KILL
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$LAB"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM
# The whole run is bounded: a watchdog ends it (and so the trap tears down) after LAB_TIMEOUT seconds. Everything
# long runs in the background and is waited for, so the TERM is handled at once.
( sleep "$LAB_TIMEOUT"; log "timed out after ${LAB_TIMEOUT}s"; kill -TERM $$ ) 2>/dev/null &
watchdog=$!

step="installing the engines"
bash deploy/lab/install.sh
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error

rm -rf "$LAB"
mkdir -p "$LAB"/etcd "$LAB"/logs
chown -R postgres:postgres "$LAB" 2>/dev/null || true
chmod 700 "$LAB"
declare -p ETCD_PORT PG1 PG2 API1 API2 PG_FRONT BOUNCER ROSTER_LB ROSTERS ADMIN_TOKEN SECRETS \
  ROSTER_CONNECT_TIMEOUT_MS >"$LAB/lab.env"

step="starting etcd"
log "etcd on 127.0.0.1:$ETCD_PORT"
setpriv --reuid=postgres --regid=postgres --init-groups etcd --name lab --data-dir "$LAB/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-cluster "lab=http://127.0.0.1:$ETCD_PEER" >"$LAB/logs/etcd.log" 2>&1 &
pids+=($!)

patroni_conf() { # name pgport apiport
  cat <<YAML
scope: roster-lab
name: $1
log: {level: WARNING}
restapi: {listen: 127.0.0.1:$3, connect_address: 127.0.0.1:$3}
etcd3: {hosts: ["127.0.0.1:$ETCD_PORT"]}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged only once a synchronous standby has it, and with strict mode also when there is no
    # standby at all: then writes wait (docs/scaling.md measures for how long, while the old primary rejoins).
    synchronous_mode: true
    synchronous_mode_strict: $SYNC_STRICT
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
  initdb: [{encoding: UTF8}, data-checksums]
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$2
  connect_address: 127.0.0.1:$2
  data_dir: $LAB/$1
  bin_dir: $PG_BIN
  pgpass: $LAB/pgpass-$1
  authentication:
    replication: {username: replicator, password: lab}
    superuser: {username: postgres, password: lab}
    rewind: {username: postgres, password: lab}
  parameters:
    unix_socket_directories: $LAB/sock-$1
YAML
}
for node in "pg1 $PG1 $API1" "pg2 $PG2 $API2"; do
  set -- $node
  mkdir -p "$LAB/sock-$1" && chown postgres:postgres "$LAB/sock-$1"
  patroni_conf "$@" >"$LAB/patroni-$1.yml"
  chown postgres:postgres "$LAB/patroni-$1.yml"
done
wait_for() { # description seconds command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "gave up waiting for $what"; return 1
}

wait_for etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
step="starting Patroni"
log "Patroni: pg1 (:$PG1, REST :$API1) and pg2 (:$PG2, REST :$API2)"
bash deploy/lab/start.sh patroni pg1
wait_for "pg1 primary" 90 curl -sf "http://127.0.0.1:$API1/primary"
bash deploy/lab/start.sh patroni pg2
wait_for "pg2 synchronous standby" 120 curl -sf "http://127.0.0.1:$API2/sync"

step="starting HAProxy"
log "HAProxy: PostgreSQL primary on :$PG_FRONT, Roster round robin on :$ROSTER_LB"
cat >"$LAB/haproxy.cfg" <<CFG
global
  maxconn 2000
defaults
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen postgres_primary
  mode tcp
  bind 127.0.0.1:$PG_FRONT
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
  server pg1 127.0.0.1:$PG1 check port $API1
  server pg2 127.0.0.1:$PG2 check port $API2
listen roster
  mode http
  bind 127.0.0.1:$ROSTER_LB
  balance roundrobin
  option httpchk GET /health/ready
  http-check expect status 200
  # Only a connection that never reached an instance is tried on another: a write is never sent twice.
  retries 2
  retry-on conn-failure
  option redispatch
  timeout client 60s
  timeout server 60s
  default-server inter 500ms fall 2 rise 2
$(for i in 0 1 2; do echo "  server roster$((i + 1)) 127.0.0.1:${ROSTERS[$i]} check"; done)
listen stats
  mode http
  bind 127.0.0.1:$STATS
  stats enable
  stats uri /
CFG
haproxy -f "$LAB/haproxy.cfg" -db >"$LAB/logs/haproxy.log" 2>&1 &
pids+=($!)

wait_for "HAProxy to the primary" 30 runuser -u postgres -- psql -h 127.0.0.1 -p "$PG_FRONT" -d postgres -c "select 1"
step="starting PgBouncer"
log "PgBouncer (transaction pooling, query_wait_timeout ${QUERY_WAIT_TIMEOUT}s) on :$BOUNCER"
# Roster's own role, not a superuser, with a connection limit below max_connections (200): backends left waiting for
# the synchronous standby cannot take the slots Patroni needs to rewind and rejoin the old primary.
runuser -u postgres -- psql -q -h 127.0.0.1 -p "$PG_FRONT" -d postgres \
  -c "create role roster login connection limit 150" -c "create database roster owner roster"
printf '"postgres" ""\n"roster" ""\n' >"$LAB/userlist.txt"
cat >"$LAB/pgbouncer.ini" <<INI
[databases]
roster = host=127.0.0.1 port=$PG_FRONT dbname=roster user=roster
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER
unix_socket_dir =
auth_type = trust
auth_file = $LAB/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 60
server_reset_query =
; During a failover no server connection can be made: PgBouncer retries the login every second
; (server_login_retry), gives a connection attempt 1 s (server_connect_timeout; HAProxy answers on loopback at
; once), and fails a client that waited $QUERY_WAIT_TIMEOUT s for a server (query_wait_timeout) — shorter than
; Roster's own bound (ROSTER_DATABASE_CONNECT_TIMEOUT_MS=$ROSTER_CONNECT_TIMEOUT_MS), so the request gets its 503
; with Retry-After from that, instead of hanging.
server_login_retry = 1
server_connect_timeout = 1
query_wait_timeout = $QUERY_WAIT_TIMEOUT
logfile = $LAB/logs/pgbouncer.log
pidfile = $LAB/pgbouncer.pid
INI
chown postgres:postgres "$LAB/pgbouncer.ini" "$LAB/userlist.txt"
setpriv --reuid=postgres --regid=postgres --init-groups pgbouncer "$LAB/pgbouncer.ini" >/dev/null 2>&1 &
pids+=($!)
wait_for pgbouncer 30 runuser -u postgres -- psql -h 127.0.0.1 -p "$BOUNCER" -d roster -c "select 1"

step="starting Roster"
log "Roster instances on :${ROSTERS[*]} (ROSTER_DATABASE_CONNECT_TIMEOUT_MS=$ROSTER_CONNECT_TIMEOUT_MS)"
bash deploy/lab/start.sh roster 1
wait_for "roster1" 120 curl -sf "http://127.0.0.1:${ROSTERS[0]}/health/ready" # the first one migrates
bash deploy/lab/start.sh roster 2
bash deploy/lab/start.sh roster 3
for p in "${ROSTERS[@]}"; do wait_for "roster :$p" 120 curl -sf "http://127.0.0.1:$p/health/ready"; done
wait_for "load balancer" 30 curl -sf "http://127.0.0.1:$ROSTER_LB/health/ready"

step="the scenarios"
log "scenarios"
export ROSTER_LB ADMIN_TOKEN PG_FRONT API1 API2 PG1 PG2 BOUNCER QUERY_WAIT_TIMEOUT ROSTER_CONNECT_TIMEOUT_MS SYNC_STRICT
export LAB_ROSTER_PORTS="${ROSTERS[*]}" LAB_ROOT="$ROOT"
node --import tsx deploy/lab/scenario.ts &
scenario_pid=$!
status=0
wait "$scenario_pid" || status=$?
scenario_pid=""
step="the verdict"
exit "$status"
