import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A measuring aid for the test suite's speed (tests/README.md, "How long"): with
 * `LOANQL_TEST_STATEMENT_PROFILE=DIR` set, every statement PGlite runs in this process (and in
 * the service and CLI children, which inherit the variable) adds the process's CPU time it took to its
 * normalized text, and the totals are written to `DIR/<pid>.json` every few seconds and at exit. PGlite runs
 * in-process and synchronously inside its WebAssembly, so that is its work. Off (one check of a
 * constant) when the variable is unset.
 */
const dir = process.env.LOANQL_TEST_STATEMENT_PROFILE;

interface Entry {
  count: number;
  ms: number;
}

const totals = new Map<string, Entry>();

export const statementProfileOn = Boolean(dir);

/** This process's CPU time so far in ms (user + system): PGlite's work is this process's, and wall time counts waits for a busy CPU. */
export function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Adds `ms` to the statement `text` (whitespace collapsed, numbers and literals kept). */
export function profileStatement(text: string, ms: number): void {
  const label = text.replace(/\s+/g, ' ').trim().slice(0, 240);
  const entry = totals.get(label);
  if (entry) {
    entry.count += 1;
    entry.ms += ms;
  } else totals.set(label, { count: 1, ms });
}

function write(): void {
  if (!dir || totals.size === 0) return;
  const rows = [...totals].map(([text, entry]) => ({ text, ...entry })).sort((a, b) => b.ms - a.ms);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ argv: process.argv.slice(1).join(' '), rows }));
  } catch {
    /* a measuring aid: never fail the process */
  }
}

if (dir) {
  setInterval(write, 3000).unref();
  process.on('exit', write);
}
