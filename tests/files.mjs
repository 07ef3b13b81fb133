// Prints what `npm test` hands to `node --test`, one path a line: generated entries under
// tests/.shards/, each a process of its own. First the slowest files, in the groups of SLOWEST
// (the heaviest alone, the others two or three to a process, so that the processes that run
// side by side end together instead of one long file running alone at the end), then every
// other `*.test.ts` under tests/ grouped into shards of FILES_PER_SHARD: an entry imports its
// files one after another in its one process, each inside a `describe` named after the file. A
// process per file costs about 1.5 CPU-seconds before the first test (Node, tsx, the app's
// modules, PGlite's first start, code not yet optimised) and runs its code cold; a shard pays
// that once for its files (four of the slowest files: 38.6 CPU-seconds alone, 29.9 together).
// The entries are numbered in the order they should start: Node 20's runner sorts the paths it
// is given, so a list of the test files themselves would start in name order whatever this
// printed. A file missing from SLOWEST and ALONE only lands in a shard; a name here that no
// longer exists is ignored. `--one-per-file` prints the test files themselves instead (the old
// way, to compare).
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The slowest files of a run (tests/README.md, "How long"), heaviest first, in groups: a group is
 * one process (its files one after another, as in a shard). In the comments, CPU-seconds of each
 * group in a warm run of the whole suite (its process and the service, CLI and Chromium processes
 * it starts). Each process costs about 2 CPU-seconds before its first test, so groups are as
 * large as lets the heaviest start first and the run end with short shards: the machine's two
 * cores are busy until the last minute either way.
 */
const SLOWEST = [
  // The two longest by wall time first, mostly waiting on PostgreSQL servers of their own: they
  // end before the heavy files beside them instead of running on alone at the end of the run.
  ['tests/scale/readYourWrites.test.ts', 'tests/scale/subscriptions.test.ts'], // 14 with its children, about a minute; 17 s, most of it waiting
  ['tests/scale/replicas.test.ts', 'tests/scale/workers.test.ts'], // 12 + 11 with their children, 40 + 45 s
  ['tests/scale/replicaOperations.test.ts'], // 7 with its service; about 60 s, most of it waiting (a 13 s pause, a standby's start)
  ['tests/cli/cli.test.ts'], // 33 with its children (17 of them the real first start)
  ['tests/engine/generated.test.ts'], // 21 (about 60 when its dump is built)
  ['tests/engine/mutationModel.test.ts', 'tests/db/seed.test.ts'], // 18 + 17
  ['tests/cli/ledger.test.ts', 'tests/webhooks/processes.test.ts', 'tests/cli/lifecycle.test.ts', 'tests/cli/investors.test.ts'], // 14 + 13 with their children; 17 s
  ['tests/engine/metadataReload.test.ts', 'tests/cli/schedulesRegenerate.test.ts', 'tests/engine/patternLimits.test.ts', 'tests/fuzz/inputFuzz.test.ts'], // 18 with their children + 20
  ['tests/roles/generatedRoles.test.ts', 'tests/roles/investorKey.test.ts', 'tests/cli/backup.test.ts'], // 19 with their children; backup about 30 with its two services and CLIs
  ['tests/dashboard/servicingBrowser.test.ts', 'tests/dashboard/consoleMetadataBrowser.test.ts'], // 18 with Chromium's share
  ['tests/db/feeJob.test.ts', 'tests/db/feeJobForward.test.ts', 'tests/cli/productSettings.test.ts', 'tests/engine/explain.test.ts', 'tests/engine/daysPastDue.test.ts', 'tests/api/delinquencyExamples.test.ts'], // 20 + 15
];

/** Files that need a process of their own for another reason than their length (none today). */
const ALONE = [];

/** How many files share a shard: more saves more start-ups, fewer keeps the last shards short. */
const FILES_PER_SHARD = 20;

const root = fileURLToPath(new URL('..', import.meta.url));
const shardDir = join(root, 'tests', '.shards');

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith('.') ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const all = testFiles(join(root, 'tests')).sort();
const firstGroups = [...SLOWEST, ...ALONE.map((file) => [file])].map((group) => group.filter((file) => all.includes(file))).filter((group) => group.length > 0);
const first = firstGroups.flat();
const rest = all.filter((file) => !first.includes(file));

if (process.argv.includes('--one-per-file')) {
  process.stdout.write([...first, ...rest].join('\n') + '\n');
} else {
  // Dealt round-robin over the name-sorted list, so each shard mixes folders (the engine's files
  // are heavier than the unit tests').
  const count = Math.max(1, Math.ceil(rest.length / FILES_PER_SHARD));
  const dealt = Array.from({ length: count }, (_, i) => rest.filter((_, j) => j % count === i));
  // The last shard in two halves: the run ends with two short processes instead of one long one
  // alone on a core (a shard of 19 files started last ran 41 s, the other core idle meanwhile).
  const last = dealt.pop() ?? [];
  const shards = [...dealt, ...[last.filter((_, j) => j % 2 === 0), last.filter((_, j) => j % 2 === 1)].filter((half) => half.length > 0)];
  const groups = [...firstGroups, ...shards];
  mkdirSync(shardDir, { recursive: true });
  const entries = groups.map((files, i) => {
    const short = (file) => file.replace(/^tests\//, '').replace(/\.test\.ts$/, '').replaceAll('/', '-');
    const name = i < firstGroups.length ? files.map(short).join('+') : 'shard';
    const path = join(shardDir, `${String(i + 1).padStart(3, '0')}-${name}.test.mjs`);
    // Written under a unique name and renamed into place: a run started beside this one (another
    // `npm test` in the same checkout) reads a whole entry, the same one.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, shardEntry(files));
    renameSync(partial, path);
    return relative(root, path);
  });
  for (const name of readdirSync(shardDir)) {
    if (/^\d{3}-.*\.test\.mjs$/.test(name) && !entries.includes(relative(root, join(shardDir, name)))) rmSync(join(shardDir, name), { force: true });
  }
  process.stdout.write(entries.join('\n') + '\n');
}

/** The source of a shard's entry: its files, each imported inside a `describe` named after it. */
function shardEntry(files) {
  return `// Generated by tests/files.mjs for \`npm test\`: these test files in one process, one after another.
import { appendFileSync, readFileSync } from 'node:fs';
import { after, before, describe } from 'node:test';

// TEST_FILE_CPU=PATH: each file's CPU-seconds (this process's and its reaped children's, from
// /proc/self/stat around the file's hooks and tests), its wall seconds, process and start (ms since
// the epoch), the embedded databases it opened and the child processes it ran (tests/support/testTally.ts) appended to PATH as a JSON line.
const cpuLog = process.env.TEST_FILE_CPU;
const cpu = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
};

for (const file of ${JSON.stringify(files, null, 2)}) {
  describe(file, async () => {
    let start = 0;
    let started = 0;
    const tally = (globalThis.loanqlTestTally ??= { opens: 0, children: 0 });
    let opens = 0;
    let children = 0;
    if (cpuLog) before(() => { start = cpu(); started = Date.now(); opens = tally.opens; children = tally.children; });
    await import(new URL(\`../../\${file}\`, import.meta.url).href);
    if (cpuLog) after(() => appendFileSync(cpuLog, JSON.stringify({ file, pid: process.pid, started, cpu: +(cpu() - start).toFixed(2), wall: (Date.now() - started) / 1000, opens: tally.opens - opens, children: tally.children - children }) + '\\n'));
  });
}
`;
}
