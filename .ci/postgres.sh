#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL 15 on 127.0.0.1 for tests and benchmarks.
#   .ci/postgres.sh start DIR [PORT]   prints the DATABASE_URL on its last line
#   .ci/postgres.sh stop DIR
#   .ci/postgres.sh halt DIR     stops at once, as a crash would (pg_ctl -m immediate; for the chaos suite)
#   .ci/postgres.sh resume DIR   starts the server of DIR again (after halt or stop)
# PostgreSQL refuses to run as root, so as root the server runs as the unprivileged user `loanql_pg`
# (.ci/pg-common.sh, shared with .ci/replica.sh).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?directory}
port=${3:-55432}
# shellcheck source=pg-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-common.sh"
case "$cmd" in
  start)
    pg_init "$dir/data" "$port"
    cat >>"$dir/data/postgresql.conf" <<CONF
shared_buffers = 256MB
synchronous_commit = off
CONF
    pg_start "$dir/data" "$dir/server.log"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    pg_stop "$dir/data" fast || true
    ;;
  halt)
    pg_stop "$dir/data" immediate
    ;;
  resume)
    pg_start "$dir/data" "$dir/server.log"
    ;;
  *) echo "usage: $0 start|stop|halt|resume DIR [PORT]" >&2; exit 2 ;;
esac
