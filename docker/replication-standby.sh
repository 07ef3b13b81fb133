#!/usr/bin/env bash
# The streaming standby of docker-compose.yml's `replica` profile (official postgres image, run
# as the postgres user). On its first start the data directory is empty: it is cloned from the
# primary with pg_basebackup -R (which writes standby.signal and primary_conninfo), retrying
# until the primary accepts the replication connection. Then PostgreSQL runs as a hot standby
# (hot_standby is on by default) and replays the primary's WAL as it streams in.
set -euo pipefail
data=/var/lib/postgresql/data
if [ ! -s "$data/PG_VERSION" ]; then
  until PGPASSWORD="${REPLICATION_PASSWORD:-replicator}" pg_basebackup -h "${PRIMARY_HOST:-postgres}" -U replicator -D "$data" -R -X stream -c fast; do
    echo "waiting for the primary to accept a replication connection…" >&2
    rm -rf "${data:?}"/*
    sleep 2
  done
  chmod 0700 "$data"
fi
exec postgres -D "$data" -c hot_standby_feedback=on
