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

interface ScrapeJob {
  job_name: string;
  metrics_path?: string;
  authorization?: { type?: string; credentials_file?: string; credentials?: string };
  static_configs?: { targets: string[] }[];
  dns_sd_configs?: { names: string[]; type?: string; port?: number }[];
}

describe('docker-compose.yml and docker/prometheus.yml: every loanql service is scraped with the token', () => {
  const prometheus = parse(text('docker/prometheus.yml')) as { scrape_configs: ScrapeJob[] };
  const tokenFile = '/prometheus/metrics-token';
  const metricsService = compose.services.prometheus as Service & { entrypoint: string[] };
  // The services that run loanql: built from this repository.
  const loanqlServices = Object.entries(compose.services).filter(([, service]) => (service as { build?: unknown }).build === '.');
  /** The `host:port` addresses a job scrapes: static targets and DNS names with their port. */
  const targetsOf = (job: ScrapeJob): string[] => [
    ...(job.static_configs ?? []).flatMap((config) => config.targets),
    ...(job.dns_sd_configs ?? []).flatMap((config) => config.names.map((name) => `${name}:${config.port}`)),
  ];

  it('finds both loanql services (the first and the replica profile\'s)', () => {
    assert.deepEqual(loanqlServices.map(([name]) => name).sort(), ['loanql', 'loanql-replicated']);
  });

  it('gives each the METRICS_TOKEN that Prometheus writes to its token file', () => {
    assert.match(metricsService.entrypoint.join(' '), new RegExp(`"\\$\\$METRICS_TOKEN" > ${tokenFile}`));
    for (const [name, service] of loanqlServices) assert.equal(service.environment.METRICS_TOKEN, metricsService.environment.METRICS_TOKEN, `${name}'s METRICS_TOKEN`);
  });

  it('scrapes each on its port at /metrics with the bearer token from that file (never the token itself)', () => {
    for (const [name, service] of loanqlServices) {
      const port = service.environment.PORT;
      const jobs = prometheus.scrape_configs.filter((job) => targetsOf(job).includes(`${name}:${port}`));
      assert.equal(jobs.length, 1, `one job scrapes ${name}:${port}`);
      const [job] = jobs;
      assert.equal(job!.metrics_path, '/metrics');
      assert.deepEqual(job!.authorization, { type: 'Bearer', credentials_file: tokenFile }, `${name}'s job authorization`);
    }
  });

  it('finds the replica profile\'s service by DNS, so it has no target while that profile is down', () => {
    const job = prometheus.scrape_configs.find((candidate) => targetsOf(candidate).includes('loanql-replicated:8080'))!;
    assert.deepEqual(job.dns_sd_configs, [{ names: ['loanql-replicated'], type: 'A', port: 8080 }]);
  });
});
