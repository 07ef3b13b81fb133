#!/usr/bin/env bash
# A throwaway PostgreSQL 15 primary and a streaming standby on 127.0.0.1, for the scale-out tests
# and benchmarks (README "Scaling out"; tests/scale/).
#   .ci/replica.sh start DIR PRIMARY_PORT STANDBY_PORT
#       initdb a primary in DIR/primary (wal_level=replica, a `replication` line in pg_hba.conf for
#       127.0.0.1, pg_stat_statements loaded), start it, clone it with `pg_basebackup -R` into
#       DIR/standby (which writes primary_conninfo and standby.signal), start the standby, and wait
#       until it streams. Prints the primary's URL, then the standby's, on the last two lines.
#   .ci/replica.sh stop DIR             stops both (fast shutdown)
#   .ci/replica.sh stop-standby DIR     stops only the standby (fast shutdown: its connections are cut)
#   .ci/replica.sh start-standby DIR    starts the standby again; it catches up from the primary
#   .ci/replica.sh delay-standby DIR MS  makes the standby apply each commit MS ms late
#                                       (recovery_min_apply_delay, reloaded; 0 ends it): a lagging replica
#   .ci/replica.sh set-standby DIR NAME VALUE  sets one of the standby's settings and reloads it
#                                       (max_standby_streaming_delay 0: replay cancels a conflicting read at once)
# PostgreSQL refuses to run as root, so as root the servers run as the unprivileged user `loanql_pg`
# (.ci/pg-common.sh, shared with .ci/postgres.sh).
set -euo pipefail
cmd=${1:?start|stop|stop-standby|start-standby}
dir=${2:?directory}
# shellcheck source=pg-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-common.sh"
case "$cmd" in
  start)
    primary_port=${3:?primary port}
    standby_port=${4:?standby port}
    pg_init "$dir/primary" "$primary_port"
    cat >>"$dir/primary/postgresql.conf" <<CONF
shared_buffers = 128MB
wal_level = replica
max_wal_senders = 5
wal_keep_size = 256MB
hot_standby = on
hot_standby_feedback = on
shared_preload_libraries = 'pg_stat_statements'
CONF
    # initdb's trust lines cover 127.0.0.1 for databases; streaming replication needs its own line.
    echo "host replication postgres 127.0.0.1/32 trust" >>"$dir/primary/pg_hba.conf"
    pg_start "$dir/primary" "$dir/primary.log"
    # -R writes standby.signal and primary_conninfo into the copy; -X stream brings the WAL along.
    run_as "'$PG_BIN/pg_basebackup' -h 127.0.0.1 -p $primary_port -U postgres -D '$dir/standby' -R -X stream -c fast >'$dir/basebackup.log' 2>&1"
    cat >>"$dir/standby/postgresql.conf" <<CONF
port = $standby_port
CONF
    pg_start "$dir/standby" "$dir/standby.log"
    # Wait until the primary sees the standby streaming.
    for _ in $(seq 1 100); do
      state=$(run_as "'$PG_BIN/psql' -h 127.0.0.1 -p $primary_port -U postgres -d postgres -Atc \"SELECT state FROM pg_stat_replication LIMIT 1\"" 2>/dev/null || true)
      [ "$state" = streaming ] && break
      sleep 0.1
    done
    if [ "$state" != streaming ]; then echo "the standby did not start streaming; see $dir/standby.log" >&2; exit 1; fi
    echo "postgres://postgres@127.0.0.1:$primary_port/postgres"
    echo "postgres://postgres@127.0.0.1:$standby_port/postgres"
    ;;
  stop)
    pg_stop "$dir/standby" fast || true
    pg_stop "$dir/primary" fast || true
    ;;
  stop-standby)
    pg_stop "$dir/standby" fast
    ;;
  start-standby)
    pg_start "$dir/standby" "$dir/standby.log"
    ;;
  delay-standby)
    ms=${3:?milliseconds}
    echo "recovery_min_apply_delay = '${ms}ms'" >>"$dir/standby/postgresql.conf"
    run_as "'$PG_BIN/pg_ctl' -D '$dir/standby' reload >/dev/null"
    ;;
  set-standby)
    name=${3:?setting}
    value=${4:?value}
    [[ "$name" =~ ^[a-z_]+$ ]] || { echo "not a setting name: $name" >&2; exit 2; }
    [[ "$value" =~ ^[A-Za-z0-9_.]+$ ]] || { echo "not a plain value: $value" >&2; exit 2; }
    echo "$name = '$value'" >>"$dir/standby/postgresql.conf"
    run_as "'$PG_BIN/pg_ctl' -D '$dir/standby' reload >/dev/null"
    ;;
  *) echo "usage: $0 start DIR PRIMARY_PORT STANDBY_PORT | stop DIR | stop-standby DIR | start-standby DIR | delay-standby DIR MS | set-standby DIR NAME VALUE" >&2; exit 2 ;;
esac
