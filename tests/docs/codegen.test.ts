import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccountWithKey, startTestServer, type TestServer } from '../support/http.js';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

/**
 * README "Typed clients" as a new user runs it (issue #28): the README's codegen.ts, operation and
 * usage, written into a scratch project, GraphQL Code Generator run against the live service with
 * an API key, and the result type-checked with the project's TypeScript. Also: a usage that treats
 * a nullable field as always there, or a number as a string, does NOT type-check — the types are
 * real, not `any`. And the collection added last, `remittances`, as the generator types it:
 * NOT NULL columns non-null, a line's `remittance` nullable (tests/api/remittancesGraph.test.ts).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block right after `<!-- marker -->`. */
function blockAfter(marker: string): string {
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  if (!match) throw new Error(`README.md has no fenced block after <!-- ${marker} -->`);
  return match[1]!;
}

/** Runs a Node script as a child process, without blocking this process (the service under test answers from it). */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [command, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

const tsc = (cwd: string, files: readonly string[]) =>
  run(join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), ['--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', '--skipLibCheck', ...files], cwd);

describe('README: typed clients with GraphQL Code Generator', () => {
  let database: TestDatabase;
  let server: TestServer;
  let key: string;
  let project: string;
  /** The compiler's run over the generated types, the README's usage and a wrong usage. */
  let checked: { status: number | null; output: string } | undefined;
  /** The generated file (the test before). */
  let generatedTypes: string | undefined;

  before(async () => {
    database = await openTestDatabase();
    server = await startTestServer(database.db);
    key = (await createAccountWithKey(database.db)).apiKey.key;
    mkdirSync(join(ROOT, '.scratch'), { recursive: true });
    // Inside the checkout, so the scratch project resolves @graphql-codegen/* from its node_modules.
    project = mkdtempSync(join(ROOT, '.scratch', 'codegen-'));
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'codegen.ts'), blockAfter('codegen-config').replace('http://localhost:8080', server.url));
    writeFileSync(join(project, 'src', 'loans.graphql'), blockAfter('codegen-operation'));
    writeFileSync(join(project, 'src', 'usage.ts'), blockAfter('codegen-usage'));
  });

  after(async () => {
    if (!process.env.KEEP_CODEGEN) rmSync(project, { recursive: true, force: true });
    await server?.close();
    await database?.close();
  });

  it('generates types from the live schema and the usage type-checks', async () => {
    const generated = await run(join(ROOT, 'node_modules', '@graphql-codegen', 'cli', 'cjs', 'bin.js'), ['--config', 'codegen.ts'], project, { LOANQL_KEY: key });
    assert.equal(generated.status, 0, generated.output);
    const types = readFileSync(join(project, 'src', 'generated', 'graphql.ts'), 'utf8');
    generatedTypes = types;
    const page = /export type LoansPageQuery = ([^\n]*);/.exec(types)?.[1] ?? '';
    // NOT NULL columns are non-null; nullable ones are `| null`; the scalars are mapped; term is an Int.
    assert.match(page, /name: string,/);
    assert.match(page, /status: string,/);
    assert.match(page, /id: string,/);
    assert.match(page, /amount: number \| null,/);
    assert.match(page, /term: number \| null,/);
    assert.match(page, /custom_fields: unknown/);
    // One compiler run for both tests (each run costs about 3 CPU-seconds, mostly loading the
    // compiler and the standard library's types): the README's usage beside a usage that ignores
    // the types, each judged by the diagnostics that name its file.
    writeFileSync(
      join(project, 'src', 'wrong.ts'),
      `import type { LoansPageQuery } from './generated/graphql';\nexport const wrong = (data: LoansPageQuery): string[] => data.loans.map((loan) => loan.amount.toFixed(2) + loan.term.toString());\nexport const alsoWrong = (data: LoansPageQuery): string => data.loans[0]!.amount;\n`,
    );
    checked = await tsc(project, ['src/generated/graphql.ts', 'src/usage.ts', 'src/wrong.ts']);
    const diagnosed = new Set(checked.output.split('\n').map((line) => /^(src\/[^(]+)\(\d+,\d+\): error TS/.exec(line)?.[1]).filter((file) => file !== undefined));
    assert.deepEqual([...diagnosed], ['src/wrong.ts'], `only wrong.ts has errors:\n${checked.output}`);
  });

  it('a usage that ignores the types does not type-check', () => {
    assert.ok(checked, 'the compiler ran (the test before)');
    assert.notEqual(checked.status, 0);
    assert.match(checked.output, /src\/wrong\.ts\(\d+,\d+\): error TS\d+: '[^']+' is possibly 'null'/);
    assert.match(checked.output, /src\/wrong\.ts\(\d+,\d+\): error TS\d+: Type 'number \| null' is not assignable to type 'string'/);
  });

  it("an admin key's schema types the remittances: every column non-null, their lines a list, a line's remittance nullable", () => {
    assert.ok(generatedTypes, 'the generator ran (the first test)');
    const typeOf = (name: string): string => new RegExp(`export type ${name} = \\{\\n([\\s\\S]*?)\\n\\};`).exec(generatedTypes!)?.[1] ?? '';
    const remittances = typeOf('Remittances');
    for (const [field, scalar] of [['id', 'uuid'], ['period_from', 'date'], ['period_to', 'date'], ['remitted_at', 'timestamptz'], ['remitted_by', 'String'], ['total', 'numeric'], ['line_count', 'Int']])
      assert.match(remittances, new RegExp(`\\b${field}: Scalars\\['${scalar}'\\]\\['output'\\];`), `${field} in\n${remittances}`);
    assert.match(remittances, /\blines: Array<Distributions>;/);
    assert.doesNotMatch(remittances, /remitted_by_(key|admin)_id/);
    assert.match(typeOf('Distributions'), /\bremittance: Maybe<Remittances>;/);
  });
});
