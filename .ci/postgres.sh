#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL 15 on 127.0.0.1 for tests and benchmarks.
#   .ci/postgres.sh start DIR [PORT]   prints the DATABASE_URL on its last line
#   .ci/postgres.sh stop DIR
#   .ci/postgres.sh halt DIR     stops at once, as a crash would (pg_ctl -m immediate; for the chaos suite)
#   .ci/postgres.sh resume DIR   starts the server of DIR again (after halt or stop)
# PostgreSQL refuses to run as root, so the server runs as the unprivileged user `loanql_pg`.
set -euo pipefail
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?start|stop}
dir=${2:?directory}
port=${3:-55432}
run_as() {
  if [ "$(id -u)" = 0 ]; then
    id loanql_pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin loanql_pg
    chown -R loanql_pg "$dir"
    su -s /bin/bash loanql_pg -c "$*"
  else
    bash -c "$*"
  fi
}
case "$cmd" in
  start)
    mkdir -p "$dir"
    chmod 0755 "$dir"
    run_as "'$PG_BIN/initdb' -D '$dir/data' -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >'$dir/initdb.log' 2>&1"
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
    run_as "'$PG_BIN/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 start >/dev/null"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    run_as "'$PG_BIN/pg_ctl' -D '$dir/data' -m fast -w stop >/dev/null" || true
    ;;
  halt)
    run_as "'$PG_BIN/pg_ctl' -D '$dir/data' -m immediate -w stop >/dev/null"
    ;;
  resume)
    run_as "'$PG_BIN/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 start >/dev/null"
    ;;
  *) echo "usage: $0 start|stop|halt|resume DIR [PORT]" >&2; exit 2 ;;
esac
