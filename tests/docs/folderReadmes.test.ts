import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder READMEs say which files a folder holds and which libraries it uses, at which pinned
 * version, and why. Those claims drift quietly: a file renamed, a library bumped or added without
 * its README saying so. This reads the code and package.json and holds each README to them.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['api', 'app', 'cli', 'db', 'domain', 'http', 'server', 'engine'] as const;

/** Files a README names as gone or moved (with the words that say so), not as present. */
const FORMER_FILES: ReadonlyMap<string, readonly string[]> = new Map([
  ['app', ['ledgerRefresh.ts']], // "(`ledgerRefresh.ts`, removed)"
  ['http', ['api/unavailable.ts']], // "(it was `api/unavailable.ts`)"
]);

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file !== '');
const trackedSet = new Set(tracked);
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const declared = new Map(Object.entries({ ...packageJson.dependencies, ...packageJson.devDependencies }));

const readmeOf = (folder: string): string => readFileSync(join(ROOT, folder, 'README.md'), 'utf8');

/** The packages a folder's source imports (statically or dynamically), by package name. */
function importedPackages(folder: string): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  for (const file of tracked.filter((path) => path.startsWith(`${folder}/`) && /\.tsx?$/.test(path))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/(?:^import|^export)[^;]*?\sfrom\s+'([^'.][^']*)'|import\(\s*'([^'.][^']*)'\s*\)/gm)) {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('node:')) continue;
      const parts = specifier.split('/');
      const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
      packages.set(name, [...new Set([...(packages.get(name) ?? []), file])]);
    }
  }
  return packages;
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('docs: the folder READMEs match the code', () => {
  for (const folder of FOLDERS) {
    it(`${folder}/README.md names each library ${folder}/ imports, at the exact version package.json pins`, () => {
      const readme = readmeOf(folder);
      const packages = importedPackages(folder);
      assert.ok(packages.size > 0, `the scan finds ${folder}/'s imports (each of these folders uses a library)`);
      for (const [name, files] of packages) {
        const version = declared.get(name);
        assert.ok(version !== undefined, `${files[0]} imports ${name}, which package.json does not declare (it would come with another package, at no version of ours)`);
        assert.match(version, /^\d+\.\d+\.\d+$/, `package.json pins ${name} to one version (not a range)`);
        const named = new RegExp(`\`${escaped(name)}\`[^\`]{0,20}?\\b${escaped(version)}\\b`);
        assert.match(readme, named, `${folder}/README.md names \`${name}\` with its version ${version} (imported by ${files.join(', ')})`);
      }
    });

    it(`every file ${folder}/README.md names is there`, () => {
      const readme = readmeOf(folder);
      const former = FORMER_FILES.get(folder) ?? [];
      const named = new Set([...readme.matchAll(/`([\w./-]+\.(?:ts|tsx|mjs|cjs|sh|yml|yaml))`/g)].map((match) => match[1]!));
      const missing = [...named].filter((name) => {
        if (former.includes(name)) return false;
        if (trackedSet.has(name) || trackedSet.has(posix.join(folder, name))) return false;
        // A name without its subfolder (`planCache.ts` in engine/README.md is engine/execute/planCache.ts).
        return !tracked.some((path) => path.startsWith(`${folder}/`) && (path.endsWith(`/${name}`) || basename(path) === name));
      });
      assert.deepEqual(missing, [], `${folder}/README.md names files that do not exist`);
      for (const name of former) assert.ok(readme.includes(`\`${name}\``), `${folder}/README.md still mentions ${name} as gone (else drop it from FORMER_FILES)`);
    });
  }
});
