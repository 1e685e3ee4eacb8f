#!/usr/bin/env bash
# Installs the lab's engines from Debian's packages when they are missing: Patroni over etcd, HAProxy, PgBouncer,
# and the PostgreSQL 15 server binaries Patroni runs. Services are never started by the packages (policy-rc.d).
set -euo pipefail
need=()
command -v patroni >/dev/null || need+=(patroni python3-etcd)
command -v etcd >/dev/null || need+=(etcd-server)
command -v haproxy >/dev/null || need+=(haproxy)
command -v pgbouncer >/dev/null || need+=(pgbouncer)
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
[ ${#need[@]} -eq 0 ] && exit 0
echo "lab: installing ${need[*]}"
# Debian's maintainer scripts would start each daemon on its default port; the lab runs its own instances.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; made_policy=1; fi
trap '[ "$made_policy" = 1 ] && rm -f "$policy"' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
