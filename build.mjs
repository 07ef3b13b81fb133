// `npm run build` (also before `npm start` and `npm test`): turns the TypeScript into dist/ and
// bundles the dashboard's browser code, each only when its inputs changed.
//   1. esbuild transpiles each .ts file of tsconfig.json's folders to dist/ (ES modules, source
//      maps; the JSON files they import are copied beside them): about half a second for the
//      whole tree, where `tsc -b` took 8 s of a fresh clone's first `npm test` with the other core
//      idle. Types are checked by `npm run typecheck` (CI runs it), not here: tsconfig.json's
//      `verbatimModuleSyntax` makes every type-only import explicit, so a file's JavaScript does
//      not depend on other files' types and transpiling files one by one is exact. Not even
//      started when no file or folder under those folders, nor tsconfig.json, package-lock.json
//      or this file, is newer than dist/.build-stamp. `rm -rf dist` forces a full build.
//   2. dashboard/client/build.mjs — keeps the bundle when a digest of its inputs is unchanged.
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
const excluded = new Set(config.exclude.map((path) => join(root, path)));

/** The newest modification time under `path` (files and folders: a deleted file changes its folder's). */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/** Every file under `dir` outside tsconfig.json's `exclude`. */
function files(dir) {
  if (excluded.has(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

/** Files the service and the CLI run from: a stamp without them is stale. */
const entryPoints = [join(dist, 'server', 'main.js'), join(dist, 'cli', 'main.js')];
const folders = config.include.map((folder) => join(root, folder));

function upToDate() {
  if (!existsSync(stamp) || !entryPoints.every((file) => existsSync(file))) return false;
  const inputs = [...folders, join(root, 'tsconfig.json'), join(root, 'package-lock.json'), fileURLToPath(import.meta.url)];
  const built = statSync(stamp).mtimeMs;
  return inputs.every((input) => newest(input) <= built);
}

if (upToDate()) {
  console.log('TypeScript up to date (no source newer than dist/.build-stamp)');
} else {
  const started = performance.now();
  const sources = folders.flatMap(files);
  const typescript = sources.filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'));
  rmSync(join(dist, '.tsbuildinfo'), { force: true }); // left by the tsc build this replaced
  await build({
    entryPoints: typescript,
    outdir: dist,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    supported: { 'import-attributes': true }, // `with { type: 'json' }` (Node 20.10+) is kept, not dropped
    sourcemap: true,
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'warning',
  });
  const json = sources.filter((file) => file.endsWith('.json'));
  for (const file of json) {
    const target = join(dist, relative(root, file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  // Output of files since deleted or renamed would linger (and be importable): removed. The
  // dashboard's bundle (dist/dashboard/assets) is dashboard/client/build.mjs's.
  const outputs = new Set([
    ...typescript.flatMap((file) => {
      const js = join(dist, relative(root, file)).replace(/\.tsx?$/, '.js');
      return [js, `${js}.map`];
    }),
    ...json.map((file) => join(dist, relative(root, file))),
  ]);
  const assets = join(dist, 'dashboard', 'assets');
  for (const folder of config.include.map((name) => join(dist, name)).filter((path) => existsSync(path))) {
    for (const file of files(folder)) if (!file.startsWith(assets) && !outputs.has(file)) rmSync(file);
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  console.log(`TypeScript transpiled in ${Math.round(performance.now() - started)} ms: ${typescript.length} files, ${json.length} JSON files copied`);
}

await import('./dashboard/client/build.mjs');
