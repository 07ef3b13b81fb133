# Sourced by .ci/postgres.sh and .ci/replica.sh (never run on its own): what both need to run a
# throwaway PostgreSQL 15 on 127.0.0.1. The sourcing script sets `dir` (its working directory)
# before calling any function here.
# PostgreSQL refuses to run as root, so as root the servers run as the unprivileged user
# `loanql_pg` (created on first use), who is given `$dir`.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

# Runs a shell command line as the server's user: `loanql_pg` when root, else this user.
run_as() {
  if [ "$(id -u)" = 0 ]; then
    id loanql_pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin loanql_pg
    chown -R loanql_pg "$dir"
    su -s /bin/bash loanql_pg -c "$*"
  else
    bash -c "$*"
  fi
}

# pg_init DATA PORT: creates `$dir` and initdb's the cluster DATA in it (trust auth, UTF-8, log in
# `$dir/initdb.log`), with the settings both scripts share: 127.0.0.1:PORT, its socket in `$dir`,
# 200 connections, fsync and full-page writes off. The caller appends its own settings.
pg_init() {
  local data=$1 port=$2
  mkdir -p "$dir"
  chmod 0755 "$dir"
  run_as "'$PG_BIN/initdb' -D '$data' -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >'$dir/initdb.log' 2>&1"
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
fsync = off
full_page_writes = off
CONF
}

# pg_start DATA LOG: starts the cluster DATA, logging to LOG; waits until it accepts connections.
pg_start() {
  run_as "'$PG_BIN/pg_ctl' -D '$1' -l '$2' -w -t 60 start >/dev/null"
}

# pg_stop DATA MODE: stops the cluster DATA (MODE: fast or immediate) and waits for it.
pg_stop() {
  run_as "'$PG_BIN/pg_ctl' -D '$1' -m $2 -w stop >/dev/null"
}
