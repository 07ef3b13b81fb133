import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * package.json says what loanql depends on (README "Decisions" explains each choice): every
 * package a file imports is declared there (not merely present because another package pulled
 * it in, which a lock-file update can take away), every runtime dependency is used by the
 * product (not only by tests, where it belongs among devDependencies), and every development
 * dependency is used — imported, or run as the tool the scripts, tests or README name.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.shards', '.scratch', 'artifacts']);
const SOURCE = /\.(ts|tsx|mjs|cjs|js)$/;
/** `from '…'`, `import('…')`, `require('…')` and `require.resolve('…')`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*)['"]([^'"\s]+)['"]/g;
/** Imports the dashboard's bundle resolves to a file of ours instead (dashboard/client/build.mjs). */
const ALIASED = new Map([['@graphiql/toolkit', 'dashboard/client/build.mjs']]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(join(dir, entry.name));
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [join(dir, entry.name)] : [];
  });
}

function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Package name → the project files that import it. */
function importers(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(ROOT)) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const name = packageOf(match[1]!);
      if (name === null || !/^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/.test(name)) continue;
      const files = found.get(name) ?? [];
      files.push(relative(ROOT, file));
      found.set(name, files);
    }
  }
  return found;
}

const imported = importers();
const scripts = Object.values(manifest.scripts).join('\n');

/** Development tools run rather than imported, each with where it is run from. */
const TOOLS: Record<string, () => boolean> = {
  tsx: () => scripts.includes('--import tsx'),
  typescript: () => /\btsc\b/.test(scripts),
  'dependency-cruiser': () => /\bdepcruise\b/.test(scripts),
  '@graphql-codegen/cli': () => readFileSync(join(ROOT, 'tests', 'docs', 'codegen.test.ts'), 'utf8').includes("'@graphql-codegen', 'cli'"),
  '@graphql-codegen/typescript': () => readFileSync(join(ROOT, 'README.md'), 'utf8').includes("plugins: ['typescript',"),
  '@graphql-codegen/typescript-operations': () => readFileSync(join(ROOT, 'README.md'), 'utf8').includes("'typescript-operations']"),
};

describe('package.json declares what the code uses, and uses what it declares', () => {
  it('every imported package is declared in package.json', () => {
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
    const undeclared = [...imported]
      .filter(([name]) => !declared.has(name))
      .filter(([name]) => !(ALIASED.has(name) && readFileSync(join(ROOT, ALIASED.get(name)!), 'utf8').includes(name)))
      .map(([name, files]) => `${name} (${files.join(', ')})`);
    assert.deepEqual(undeclared, []);
  });

  it('every runtime dependency is imported by the product, not only by tests or benchmarks', () => {
    const unused = Object.keys(manifest.dependencies).filter((name) => !(imported.get(name) ?? []).some((file) => !/^(tests|bench)\//.test(file)));
    assert.deepEqual(unused, []);
  });

  it('every development dependency is imported or run as a tool', () => {
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
    const unused = Object.keys(manifest.devDependencies).filter((name) => {
      if (imported.has(name)) return false;
      if (name.startsWith('@types/')) {
        const typed = name.slice('@types/'.length);
        return !(typed === 'node' || declared.has(typed));
      }
      return !(TOOLS[name]?.() ?? false);
    });
    assert.deepEqual(unused, []);
  });
});
