// `npm run build` (also before `npm start` and `npm test`): compiles the TypeScript into dist/ and
// bundles the dashboard's browser code, each only when its inputs changed, so a second start with
// no source change spends well under a second here instead of ~20 s.
//   1. tsc -b (incremental, dist/.tsbuildinfo) — not even started when no file or folder under the
//      compiled folders, nor tsconfig.json or package-lock.json, is newer than dist/.tsbuildinfo.
//      Loading the compiler alone costs about half a second; `rm -rf dist` forces a full build.
//   2. dashboard/client/build.mjs — keeps the bundle when a digest of its inputs is unchanged.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const buildInfo = join(root, 'dist', '.tsbuildinfo');

/** The newest modification time under `path` (files and folders: a deleted file changes its folder's). */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/** Files the service and the CLI run from: a build info without them (e.g. written by `tsc --noEmit`) is stale. */
const entryPoints = [join(root, 'dist', 'server', 'main.js'), join(root, 'dist', 'cli', 'main.js')];

function typescriptUpToDate() {
  if (!existsSync(buildInfo)) return false;
  if (!entryPoints.every((file) => existsSync(file))) {
    // tsc -b would trust the build info and emit nothing: start from scratch.
    rmSync(buildInfo, { force: true });
    return false;
  }
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
  const inputs = [...config.include.map((folder) => join(root, folder)), join(root, 'tsconfig.json'), join(root, 'package-lock.json')];
  const built = statSync(buildInfo).mtimeMs;
  return inputs.every((input) => newest(input) <= built);
}

if (typescriptUpToDate()) {
  console.log('TypeScript up to date (no source newer than dist/.tsbuildinfo)');
} else {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { status } = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}

await import('./dashboard/client/build.mjs');
