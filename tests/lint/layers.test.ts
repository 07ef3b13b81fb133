import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What `npm run lint` reads: the source folders, the configuration and the scripts. */
const COPIED = ['server', 'api', 'dashboard', 'http', 'app', 'cli', 'engine', 'metadata', 'db', 'domain', '.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'];

/**
 * A run takes a few CPU-seconds; on a loaded 2-core machine it took 85 s (a full suite beside
 * eight other workers), and a run stopped by the timeout reads as a failed lint (status null).
 */
const LINT_TIMEOUT_MS = 300_000;

/** `npm run lint` in `cwd`: its exit status and everything it printed. */
function lint(cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'lint'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: LINT_TIMEOUT_MS });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

// The two runs take a few seconds of CPU each, mostly waiting: side by side they end sooner.
describe('npm run lint: the layers and their one direction (.dependency-cruiser.cjs)', { concurrency: true }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'loanql-layers-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('passes on the source tree as it is', async () => {
    const { status, output } = await lint(ROOT);
    assert.equal(status, 0, output);
    assert.match(output, /no dependency violations found/);
  });

  it('fails on a copy with forbidden imports, naming each rule broken', async () => {
    for (const entry of COPIED) cpSync(join(ROOT, entry), join(scratch, entry), { recursive: true, filter: (source) => !source.includes(`${join('dashboard', 'client')}`) });
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    // db/ below engine/, api/ beside dashboard/, and engine/plan before engine/sql.
    writeFileSync(join(scratch, 'db', 'forbiddenEngine.ts'), "import { GraphEngine } from '../engine/index.js';\nexport const engineClass = GraphEngine;\n");
    writeFileSync(join(scratch, 'api', 'forbiddenDashboard.ts'), "import { dashboardRoutes } from '../dashboard/index.js';\nexport const routes = dashboardRoutes;\n");
    writeFileSync(join(scratch, 'engine', 'plan', 'forbiddenSql.ts'), "export * from '../sql/fragment.js';\n");

    const { status, output } = await lint(scratch);
    assert.notEqual(status, 0, output);
    assert.match(output, /error db-imports-only-inner-layers: db\/forbiddenEngine\.ts → engine\/index\.ts/);
    assert.match(output, /error api-not-dashboard: api\/forbiddenDashboard\.ts → dashboard\/index\.ts/);
    assert.match(output, /error plan-not-sql: engine\/plan\/forbiddenSql\.ts → engine\/sql\//);
  });
});
