import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Issue #27's shape of the engine, held: small files (none over 400 lines, `GraphEngine` under
 * 200), and engine/README.md's numbered walk of one request naming, for each step, one file
 * that exists.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}
const lines = (file: string): number => readFileSync(file, 'utf8').split('\n').length;

describe('The engine: files small enough to read', () => {
  it('no file in engine/ is over 400 lines', () => {
    const long = sourceFiles(join(ROOT, 'engine'))
      .filter((file) => lines(file) > 400)
      .map((file) => `${relative(ROOT, file)}: ${lines(file)} lines`);
    assert.deepEqual(long, []);
  });

  it('GraphEngine is under 200 lines', () => {
    assert.ok(lines(join(ROOT, 'engine', 'execute', 'graphEngine.ts')) < 200);
  });
});

describe("engine/README.md: one request's walk", () => {
  const readme = readFileSync(join(ROOT, 'engine', 'README.md'), 'utf8');
  const walk = readme.slice(readme.indexOf('## One GraphQL request, step by step'), readme.indexOf('## Phases'));
  const steps = walk.split(/\n(?=\[?\d+\. )/).filter((step) => /^\[?\d+\. /.test(step));

  it('has numbered steps, in order', () => {
    assert.ok(steps.length >= 10, `only ${steps.length} steps`);
    steps.forEach((step, index) => assert.ok(step.startsWith(`${index + 1}. `), `step ${index + 1} reads: ${step.slice(0, 40)}`));
  });

  it('each step starts by naming one file, and every file it names exists', () => {
    for (const step of steps) {
      const first = /^\d+\. \[?`([^`]+)`/.exec(step)?.[1];
      assert.ok(first && /\.ts$/.test(first), `a step that names no file first: ${step.slice(0, 60)}`);
      for (const named of step.matchAll(/`((?:[\w.-]+\/)+[\w.-]+\.ts)`/g)) {
        // A path is the project's, or the engine's (`plan/ir.ts`), or beside the step's first file.
        const candidates = [join(ROOT, named[1]!), join(ROOT, 'engine', named[1]!), join(ROOT, dirname(first), named[1]!)];
        assert.ok(candidates.some((path) => existsSync(path)), `${named[1]} (named in: ${step.slice(0, 40)}…) does not exist`);
      }
    }
  });
});
