import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openTestDatabase, type TestDatabase } from '../support/testDatabase.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** docs/scaling.md from the line starting `## Citus` to the end: where each table's place under Citus is said. */
function citusSection(): string {
  const text = readFileSync(`${ROOT}docs/scaling.md`, 'utf8');
  const from = text.indexOf('\n## Citus');
  assert.ok(from >= 0, 'docs/scaling.md has a "## Citus" section');
  return text.slice(from);
}

/**
 * docs/scaling.md, "Citus": every table of the migrated schema is named there (distributed,
 * reference, local or needing work), so a table a migration adds does not go unplaced. Before
 * 2026-11-29 (audit docs3) it named the tables of issue 18: twelve later ones (fees,
 * distributions, remittances, the outbox, …) were in no list.
 */
describe('docs: every table has its place under Citus', () => {
  let database: TestDatabase;
  before(async () => {
    database = await openTestDatabase();
  });
  after(async () => {
    await database?.close();
  });

  it('docs/scaling.md names each table of the schema', async () => {
    const { rows } = await database.db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 1`,
    );
    const tables = rows.map((row) => row.name);
    assert.ok(tables.includes('loans') && tables.includes('webhook_outbox'), tables.join(', '));
    const section = citusSection();
    assert.deepEqual(tables.filter((table) => !section.includes(`\`${table}\``)), [], 'tables docs/scaling.md ("Citus") does not name');
  });
});
