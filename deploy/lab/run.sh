#!/usr/bin/env bash
# The scale-out lab: an HA PostgreSQL 15 pair (Patroni over a one-node etcd, synchronous standby), HAProxy in front of
# the current primary, PgBouncer in transaction pooling mode, three Roster instances behind a round-robin HAProxy
# frontend. Runs the failover scenario (scenario.ts), prints its report and tears everything down, also on failure
# or Ctrl-C. Only 127.0.0.1; bounded to LAB_TIMEOUT seconds (default 600). Never touches the machine's own cluster.
#
#   bash deploy/lab/run.sh              up, scenario, report, down
#   LAB_KEEP=1 bash deploy/lab/run.sh   leave the lab running after the report (Ctrl-C tears it down)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
LAB=${LAB_DIR:-/tmp/roster-lab}
LAB_TIMEOUT=${LAB_TIMEOUT:-600}
ETCD_PORT=23790 ETCD_PEER=23800
PG1=54321 PG2=54322 API1=8101 API2=8102
PG_FRONT=54300 BOUNCER=64320 STATS=18404
ROSTER_LB=18080 ROSTERS=(18081 18082 18083) RECEIVER=18090
ADMIN_TOKEN=lab-admin-token-0123456789abcdef
SECRETS=lab-secret-key-0123456789abcdef0123456789abcdef
PG_BIN=/usr/lib/postgresql/15/bin

log() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

bash deploy/lab/install.sh
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error

pids=()
teardown() {
  local status=$?
  trap - EXIT INT TERM
  log "tearing down"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  pkill -f "patroni $LAB/" 2>/dev/null || true
  for d in "$LAB"/pg1 "$LAB"/pg2; do
    [ -f "$d/postmaster.pid" ] && kill -9 "$(head -1 "$d/postmaster.pid")" 2>/dev/null || true
  done
  sleep 1
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # The logs outlive the lab, for a look after a failed run.
  rm -rf "$LAB-logs" && cp -r "$LAB/logs" "$LAB-logs" 2>/dev/null && log "logs kept in $LAB-logs"
  rm -rf "$LAB"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM
# The whole run is bounded: a watchdog ends it (and so the trap tears down) after LAB_TIMEOUT seconds.
( sleep "$LAB_TIMEOUT"; log "timed out after ${LAB_TIMEOUT}s"; kill -TERM $$ ) 2>/dev/null &
watchdog=$!
pids+=("$watchdog")

rm -rf "$LAB"
mkdir -p "$LAB"/sock1 "$LAB"/sock2 "$LAB"/etcd "$LAB"/logs
chown -R postgres:postgres "$LAB" 2>/dev/null || true
chmod 700 "$LAB"

log "etcd on 127.0.0.1:$ETCD_PORT"
runuser -u postgres -- etcd --name lab --data-dir "$LAB/etcd" \
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
    synchronous_mode: true
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
start_patroni() { # name pgport apiport
  mkdir -p "$LAB/sock-$1" && chown postgres:postgres "$LAB/sock-$1"
  patroni_conf "$@" >"$LAB/patroni-$1.yml"
  chown postgres:postgres "$LAB/patroni-$1.yml"
  runuser -u postgres -- patroni "$LAB/patroni-$1.yml" >>"$LAB/logs/patroni-$1.log" 2>&1 &
  pids+=($!)
}
wait_for() { # description seconds command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "gave up waiting for $what"; return 1
}

wait_for etcd 20 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
log "Patroni: pg1 (:$PG1, REST :$API1) and pg2 (:$PG2, REST :$API2)"
start_patroni pg1 "$PG1" "$API1"
wait_for "pg1 primary" 60 curl -sf "http://127.0.0.1:$API1/primary"
start_patroni pg2 "$PG2" "$API2"
wait_for "pg2 synchronous standby" 90 curl -sf "http://127.0.0.1:$API2/sync"

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

wait_for "HAProxy to the primary" 20 runuser -u postgres -- psql -h 127.0.0.1 -p "$PG_FRONT" -d postgres -c "select 1"
log "PgBouncer (transaction pooling) on :$BOUNCER"
runuser -u postgres -- psql -q -h 127.0.0.1 -p "$PG_FRONT" -d postgres -c "create database roster"
echo '"postgres" ""' >"$LAB/userlist.txt"
cat >"$LAB/pgbouncer.ini" <<INI
[databases]
roster = host=127.0.0.1 port=$PG_FRONT dbname=roster user=postgres
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
; A failover closes every server connection: try the new primary at once, and fail a waiting client after 10 s.
server_login_retry = 1
server_connect_timeout = 3
query_wait_timeout = 10
logfile = $LAB/logs/pgbouncer.log
pidfile = $LAB/pgbouncer.pid
INI
chown postgres:postgres "$LAB/pgbouncer.ini" "$LAB/userlist.txt"
runuser -u postgres -- pgbouncer "$LAB/pgbouncer.ini" >/dev/null 2>&1 &
pids+=($!)
wait_for pgbouncer 20 runuser -u postgres -- psql -h 127.0.0.1 -p "$BOUNCER" -d roster -c "select 1"

start_roster() { # index
  local port=${ROSTERS[$1]}
  ROSTER_HOST=127.0.0.1 ROSTER_PORT=$port ROSTER_PUBLIC_URL="http://127.0.0.1:$ROSTER_LB" \
    ROSTER_DATABASE_URL="postgres://postgres@127.0.0.1:$BOUNCER/roster" ROSTER_DATABASE_POOLING=transaction \
    ROSTER_SECRETS=$SECRETS ROSTER_ADMIN_TOKEN=$ADMIN_TOKEN ROSTER_LOG_LEVEL=warn \
    ROSTER_WEBHOOK_URL_ALLOW=127.0.0.1 \
    node --import tsx src/server.ts >>"$LAB/logs/roster-$((${1} + 1)).log" 2>&1 &
  echo $! >"$LAB/roster-$((${1} + 1)).pid"
  pids+=($!)
}
log "Roster instances on :${ROSTERS[*]}"
start_roster 0
wait_for "roster1" 60 curl -sf "http://127.0.0.1:${ROSTERS[0]}/health/ready"  # the first one migrates
start_roster 1
start_roster 2
for p in "${ROSTERS[@]}"; do wait_for "roster :$p" 60 curl -sf "http://127.0.0.1:$p/health/ready"; done
wait_for "load balancer" 20 curl -sf "http://127.0.0.1:$ROSTER_LB/health/ready"

log "scenario"
export LAB ROSTER_LB RECEIVER ADMIN_TOKEN PG_FRONT API1 API2 PG1 PG2 BOUNCER
export LAB_ROSTER_PORTS="${ROSTERS[*]}"
node --import tsx deploy/lab/scenario.ts | tee "$LAB/report.txt"
status=${PIPESTATUS[0]}
if [ -n "${LAB_REPORT:-}" ]; then cp "$LAB/report.txt" "$LAB_REPORT"; fi
if [ "${LAB_KEEP:-0}" = 1 ]; then log "lab kept running (Ctrl-C tears it down)"; wait "$watchdog" || true; fi
exit "$status"
