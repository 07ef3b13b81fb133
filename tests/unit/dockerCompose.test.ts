import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * Issue 12, item 8: `docker compose up` keeps the documented "edit the metadata file" workflow
 * (the metadata folder is mounted, not baked in) and takes the database password from `.env`
 * with a documented default. Docker is not run here; the files are read as compose reads them.
 */
const ROOT = new URL('../../', import.meta.url);
const text = (path: string): string => readFileSync(fileURLToPath(new URL(path, ROOT)), 'utf8');
const compose = parse(text('docker-compose.yml')) as {
  services: Record<string, { environment: Record<string, string>; volumes?: ({ type: string; source: string; target: string } | string)[]; ports?: string[] }>;
};
const lines = (path: string): string[] => text(path).split('\n').map((line) => line.trim());

describe('docker-compose.yml', () => {
  it('mounts ./metadata over the image’s metadata folder, so edits live on the host and survive a recreate', () => {
    assert.deepEqual(compose.services.loanql!.volumes, [{ type: 'bind', source: './metadata', target: '/app/metadata' }]);
    assert.ok(lines('.dockerignore').includes('metadata/loanql.yaml'), 'an admin’s edited file is never baked into the image');
  });

  it('takes the database password from POSTGRES_PASSWORD (.env), with the default .env.example documents', () => {
    const fromEnv = /\$\{POSTGRES_PASSWORD:-([^}]+)\}/;
    const server = fromEnv.exec(compose.services.postgres!.environment.POSTGRES_PASSWORD!);
    const client = fromEnv.exec(compose.services.loanql!.environment.DATABASE_URL!);
    assert.ok(server && client, 'both the server and the service read it');
    assert.equal(server[1], client[1], 'the same default on both sides');
    assert.ok(lines('.env.example').includes(`POSTGRES_PASSWORD=${server[1]}`));
    assert.match(compose.services.loanql!.environment.DATABASE_URL!, /^postgres:\/\/loanql:\$\{POSTGRES_PASSWORD:-[^}]+\}@postgres:5432\/loanql$/);
    assert.ok(lines('.gitignore').includes('.env') && lines('.dockerignore').includes('.env'), '.env is neither committed nor sent to the build');
  });
});
