// Bundles the dashboard's browser code and styles with esbuild into dist/dashboard/assets
// (`npm run build` runs this after tsc). Everything the pages load comes from there: no CDN.
//   console.js/.css  GraphiQL + the SQL panel (graphiql.css is imported by console.tsx)
//   copyKey.js       the Copy button of a new key
//   dashboard.css    the server-rendered pages
import { build } from 'esbuild';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, '..', '..', 'dist', 'dashboard', 'assets');
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const started = Date.now();
const result = await build({
  entryPoints: {
    console: join(here, 'console.tsx'),
    copyKey: join(here, 'copyKey.ts'),
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
console.log(`dashboard assets built in ${Date.now() - started} ms: ${sizes.join(', ')}`);
