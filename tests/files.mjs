// Prints the test files `npm test` runs, one per line: every `*.test.ts` under tests/, the
// longest-running first (so the files that run side by side end together instead of one long
// file running alone at the end), then the rest in name order. A file missing from SLOWEST only
// starts later; a name here that no longer exists is ignored.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The slowest files of a run (tests/README.md, "How long"), slowest first. */
const SLOWEST = [
  'tests/scale/workers.test.ts',
  'tests/scale/readYourWrites.test.ts',
  'tests/cli/cli.test.ts',
  'tests/cli/ledger.test.ts',
  'tests/engine/mutationModel.test.ts',
  'tests/engine/generated.test.ts',
  'tests/db/feeJob.test.ts',
  'tests/db/feeJobForward.test.ts',
  'tests/cli/productSettings.test.ts',
  'tests/scale/replicas.test.ts',
  'tests/engine/metadataReload.test.ts',
  'tests/fuzz/inputFuzz.test.ts',
  'tests/engine/patternLimits.test.ts',
  'tests/roles/generatedRoles.test.ts',
  'tests/roles/investorKey.test.ts',
  'tests/cli/schedulesRegenerate.test.ts',
  'tests/dashboard/consoleMetadataBrowser.test.ts',
  'tests/dashboard/servicingBrowser.test.ts',
  'tests/engine/explain.test.ts',
  'tests/db/seed.test.ts',
  'tests/engine/daysPastDue.test.ts',
  'tests/api/delinquencyExamples.test.ts',
  'tests/cli/lifecycle.test.ts',
  'tests/webhooks/processes.test.ts',
];

const root = fileURLToPath(new URL('..', import.meta.url));

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const all = testFiles(join(root, 'tests')).sort();
const first = SLOWEST.filter((file) => all.includes(file));
process.stdout.write([...first, ...all.filter((file) => !first.includes(file))].join('\n') + '\n');
