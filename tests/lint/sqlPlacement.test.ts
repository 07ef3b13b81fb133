import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Issue #27: SQL text is written only in engine/sql, db/ and the app's use cases (app/); the
 * outer layers — the HTTP server, the API routes, the dashboard, the CLI — call those, never run
 * a statement of their own. A statement in one of them would show as a `.query(` call or a
 * string opening with a SQL verb.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUTER_LAYERS = ['server', 'api', 'dashboard', 'http', 'cli'];
const SQL_TEXT = /['"`]\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS|EXPLAIN)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'client' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('Layers: where SQL is written', () => {
  it('no file of server/, api/, dashboard/, http/ or cli/ runs a statement or writes SQL text', () => {
    const offenders: string[] = [];
    for (const layer of OUTER_LAYERS) {
      for (const file of sourceFiles(join(ROOT, layer))) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, index) => {
            if (/^\s*(\*|\/\/)/.test(line)) return; // comments may name statements
            if (/\.query\s*[<(]/.test(line) || SQL_TEXT.test(line)) offenders.push(`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`);
          });
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('the check itself finds a statement written in a route', () => {
    const line = "      await db.query('SELECT 1');";
    assert.ok(/\.query\s*[<(]/.test(line) && SQL_TEXT.test(line));
  });
});
