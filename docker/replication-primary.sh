#!/usr/bin/env bash
# Run once by the official postgres image when it initialises an empty data directory
# (/docker-entrypoint-initdb.d, see docker-compose.yml): a role that may stream the WAL, and a
# pg_hba.conf line that lets it connect for replication (the image's own line, "host all all
# all", does not cover replication connections). The password is REPLICATION_PASSWORD, passed
# to psql as a variable (quoted by psql, never spliced into the SQL text).
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v password="${REPLICATION_PASSWORD:-replicator}" <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'password';
SQL
echo "host replication replicator all scram-sha-256" >>"$PGDATA/pg_hba.conf"
