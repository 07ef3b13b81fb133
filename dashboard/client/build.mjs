// Bundles the dashboard's browser code and styles with esbuild into dist/dashboard/assets
// (`npm run build` runs this after tsc). Everything the pages load comes from there: no CDN.
//   console.js/.css  GraphiQL + the SQL panel (graphiql.css is imported by console.tsx)
//   copyKey.js       the Copy button of a new key
//   keyRoleFields.js the API-key form shows only the chosen role's variables
//   formGuard.js     every page: a POST form is sent once (its buttons disabled once submitted)
//   dashboard.css    the server-rendered pages
// When nothing it reads has changed since the last bundle (this folder, package-lock.json, i.e.
// the bundled packages), the bundle is kept: a second `npm start` or `npm test` does not redo it.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const outdir = join(root, 'dist', 'dashboard', 'assets');
const stamp = join(outdir, '.inputs.sha256');
const OUTPUTS = ['console.js', 'console.css', 'copyKey.js', 'keyRoleFields.js', 'formGuard.js', 'dashboard.css'];

/** A digest of every input of the bundle: the sources here and the locked package versions. */
function inputsDigest() {
  const hash = createHash('sha256');
  const files = readdirSync(here).sort().map((name) => join(here, name));
  for (const file of [...files, join(root, 'package-lock.json')]) {
    hash.update(file.slice(root.length)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const digest = inputsDigest();
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest && OUTPUTS.every((name) => existsSync(join(outdir, name)))) {
  console.log('dashboard assets up to date (inputs unchanged)');
  process.exit(0);
}
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

/**
 * GraphiQL's imports of `@graphiql/toolkit` resolve to `graphiqlToolkit.ts` (the package with
 * the console's `formatResult`, which keeps the response's numbers exact); that file's own
 * import of the package resolves as usual.
 */
const toolkitShim = join(here, 'graphiqlToolkit.ts');
const exactResults = {
  name: 'exact-results',
  setup(builder) {
    builder.onResolve({ filter: /^@graphiql\/toolkit$/ }, (args) => (args.importer === toolkitShim ? undefined : { path: toolkitShim }));
  },
};

const started = Date.now();
const result = await build({
  plugins: [exactResults],
  entryPoints: {
    console: join(here, 'console.tsx'),
    copyKey: join(here, 'copyKey.ts'),
    keyRoleFields: join(here, 'keyRoleFields.ts'),
    formGuard: join(here, 'formGuard.ts'),
    dashboard: join(here, 'dashboard.css'),
  },
  outdir,
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'iife',
  target: ['es2020'],
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
});
const sizes = Object.entries(result.metafile.outputs)
  .filter(([file]) => !file.endsWith('.map') && !file.endsWith('.LEGAL.txt'))
  .map(([file, output]) => `${file.split('/').pop()} ${(output.bytes / 1024).toFixed(0)} kB`);
writeFileSync(stamp, digest);
console.log(`dashboard assets built in ${Date.now() - started} ms: ${sizes.join(', ')}`);
