import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The service's Node flags (README, Operations: "Node flags") are given in two places a user
 * starts it from — `npm start` and the Dockerfile's CMD — and the benchmarks read them from the
 * first: the two must not drift apart.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the shipped start command', () => {
  it('npm start and the Dockerfile run dist/server/main.js with the same Node flags', () => {
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.trim().split(/\s+/);
    assert.equal(start[0], 'node');
    assert.equal(start.at(-1), 'dist/server/main.js');
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n').filter((line) => line.startsWith('CMD ["node"') && line.includes('dist/server/main.js')).join('\n'));
    assert.ok(cmd, 'the Dockerfile has a CMD that runs dist/server/main.js');
    assert.deepEqual(JSON.parse(cmd[1]!), start);
    assert.ok(start.includes('--max-semi-space-size=32'));
  });
});

describe('the start-up banner', () => {
  it('gives the address the service listens on: localhost only when it listens on every address', async () => {
    const { listeningUrl } = await import('../../server/cluster.js');
    assert.equal(listeningUrl('0.0.0.0', 8080), 'http://localhost:8080');
    assert.equal(listeningUrl('::', 8080), 'http://localhost:8080');
    assert.equal(listeningUrl('127.0.0.1', 18282), 'http://127.0.0.1:18282');
    assert.equal(listeningUrl('::1', 8080), 'http://[::1]:8080');
  });

  it('counts the demo loans in words that agree with the number: 0 loans, 1 loan, 500 loans', async () => {
    const { bannerLines } = await import('../../server/cluster.js');
    const demo = { accountSlug: 'demo', adminEmail: 'admin@demo.loanql.test', adminPassword: 'pw', apiKey: 'lq_key' };
    const said = (loans: number) => bannerLines('http://localhost:8080', 'PGlite', { ...demo, loans }).find((line) => line.startsWith('Demo account'));
    assert.equal(said(0), 'Demo account "demo" created with 0 loans.');
    assert.equal(said(1), 'Demo account "demo" created with 1 loan.');
    assert.equal(said(500), 'Demo account "demo" created with 500 loans.');
  });
});
