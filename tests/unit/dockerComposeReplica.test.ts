import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * Issue 18: `docker compose --profile replica up` — a streaming standby (official postgres image,
 * cloned with pg_basebackup -R) and two API processes reading from it. Docker is not run here;
 * the files are read as compose and the image's entrypoint read them.
 */
const ROOT = new URL('../../', import.meta.url);
const text = (path: string): string => readFileSync(fileURLToPath(new URL(path, ROOT)), 'utf8');
interface Service {
  image?: string;
  profiles?: string[];
  environment: Record<string, string>;
  volumes?: (string | { source: string; target: string })[];
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  user?: string;
}
const compose = parse(text('docker-compose.yml')) as { services: Record<string, Service>; volumes: Record<string, unknown> };

describe('docker-compose.yml, profile replica', () => {
  const standby = compose.services['postgres-replica']!;
  const scaled = compose.services['loanql-replicated']!;

  it('is a profile: plain `docker compose up` starts neither the standby nor the second service', () => {
    assert.deepEqual(standby.profiles, ['replica']);
    assert.deepEqual(scaled.profiles, ['replica']);
    assert.equal(compose.services.postgres!.profiles, undefined);
  });

  it('gives the primary a replication role and pg_hba line on first initialisation', () => {
    assert.ok(compose.services.postgres!.volumes!.includes('./docker/replication-primary.sh:/docker-entrypoint-initdb.d/replication-primary.sh:ro'));
    const script = text('docker/replication-primary.sh');
    assert.match(script, /CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'password'/);
    assert.match(script, /host replication replicator all scram-sha-256/);
    assert.match(compose.services.postgres!.environment.REPLICATION_PASSWORD!, /^\$\{REPLICATION_PASSWORD:-replicator\}$/);
  });

  it('clones the primary with pg_basebackup -R into an empty volume, then runs PostgreSQL as a standby, as the postgres user', () => {
    assert.equal(standby.image, compose.services.postgres!.image);
    assert.equal(standby.user, 'postgres');
    assert.deepEqual(standby.command, ['bash', '/replication-standby.sh']);
    assert.ok(standby.volumes!.includes('postgres-replica-data:/var/lib/postgresql/data'));
    assert.ok('postgres-replica-data' in compose.volumes);
    const script = text('docker/replication-standby.sh');
    assert.match(script, /pg_basebackup -h "\$\{PRIMARY_HOST:-postgres\}" -U replicator -D "\$data" -R -X stream/);
    assert.match(script, /exec postgres -D "\$data"/);
    assert.equal(standby.environment.PGPASSWORD, compose.services.postgres!.environment.REPLICATION_PASSWORD);
    assert.equal(standby.depends_on!.postgres!.condition, 'service_healthy');
  });

  it('runs two API processes that write to the primary and read from the standby, after the first service set the database up', () => {
    assert.equal(scaled.environment.WORKERS, '2');
    assert.equal(scaled.environment.DATABASE_URL, compose.services.loanql!.environment.DATABASE_URL);
    assert.equal(scaled.environment.DATABASE_REPLICA_URLS, scaled.environment.DATABASE_URL!.replace('@postgres:', '@postgres-replica:'));
    assert.equal(scaled.depends_on!.loanql!.condition, 'service_healthy');
    assert.equal(scaled.depends_on!['postgres-replica']!.condition, 'service_healthy');
  });
});
