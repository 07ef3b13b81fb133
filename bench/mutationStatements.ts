/**
 * Issue 30: a write's response statement read the written rows' keys as the table's row type
 * (`json_populate_recordset(NULL::<table>, $n::json) WITH ORDINALITY … JOIN`, main at d7a234e)
 * where the build before it (db13bd7) read one uuid from an array (`t.id = ($n::uuid[])[1]`);
 * a one-row response now casts each key column from the JSON (`($n::json -> 0 ->> 'id')::uuid`). Over HTTP on this
 * shared machine the difference drowns in noise, so this times the two statements themselves:
 * m1's and m2's response statements (bench/queries.ts) as each build compiles them (texts from
 * `loanql sql` of each checkout), on ONE connection, both named prepared statements, interleaved
 * (old, new, new, old, …) over the sample's rows, after warm-up; and m2's write statement of
 * each build in a transaction rolled back after each run. Prints the medians and their ratios.
 *
 * `DATABASE_URL=… node --import tsx bench/mutationStatements.ts --account SLUG [--runs 2000]`
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { accountIdOf, sampleData } from './queries.js';

const { values: args } = parseArgs({ options: { account: { type: 'string' }, runs: { type: 'string', default: '2000' } } });

const M1_LOAN = `'{"principal_outstanding":', coalesce(to_json("_t3"."principal_outstanding"), 'null'), ',"interest_due":', coalesce(to_json("_t3"."interest_due"), 'null'), ',"fees_due":', coalesce(to_json("_t3"."fees_due"), 'null'), ',"credit_balance":', coalesce(to_json("_t3"."credit_balance"), 'null'), ',"status":', to_json("_t3"."status"), ',"schedules":', (SELECT concat('[', string_agg("_r5"."j", ',' ORDER BY "_r5"."k0" ASC NULLS LAST), ']') FROM (SELECT concat('{"number":', to_json("_t4"."number"), ',"due":', to_json("_t4"."due"), '}') AS "j", "_t4"."id" AS "k0" FROM "schedules" AS "_t4" WHERE "_t4"."account_id" = $1 AND "_t4"."loan_id" = "_t3"."id" AND ("_t4"."is_next" = true)) AS "_r5"), '}') FROM "loans" AS "_t3" WHERE "_t3"."account_id" = $1 AND "_t3"."id" = "_t1"."loan_id" LIMIT 1), 'null'), '}')`;
const M1_ROW = `SELECT concat('{"amount":', to_json("_t1"."amount"), ',"date":', to_json("_t1"."date"), ',"loan":', coalesce((SELECT concat(${M1_LOAN}`;
const M2_ROW = `SELECT concat('{"id":', to_json("_t1"."id"), ',"name":', to_json("_t1"."name"), ',"status":', to_json("_t1"."status"), '}')`;
const wrap = (field: string, inner: string): string => `SELECT concat('{"data":', concat('{"${field}":', coalesce((${inner}), 'null'), '}'), '}') AS "response"`;

/** One row's response statement of each build: `$1` the account, `$2` the keys as the build passes them. */
const RESPONSES = [
  {
    id: 'm1 response',
    table: 'payments',
    before: wrap('insert_payments_one', `${M1_ROW} FROM "payments" AS "_t1" WHERE "_t1"."account_id" = $1 AND "_t1"."id" = ($2::uuid[])[1]`),
    after: wrap('insert_payments_one', `${M1_ROW} FROM "payments" AS "_t1" WHERE "_t1"."account_id" = $1 AND "_t1"."id" = ($2::json -> 0 ->> 'id'::text)::uuid`),
    populate: wrap('insert_payments_one', `${M1_ROW} FROM json_populate_recordset(NULL::"payments", $2::json) WITH ORDINALITY AS "_i2" JOIN "payments" AS "_t1" ON "_t1"."account_id" = $1 AND "_t1"."id" = "_i2"."id" ORDER BY "_i2"."ordinality" LIMIT 1`),
  },
  {
    id: 'm2 response',
    table: 'tasks',
    before: wrap('update_tasks_by_pk', `${M2_ROW} FROM "tasks" AS "_t1" WHERE "_t1"."account_id" = $1 AND "_t1"."id" = ($2::uuid[])[1]`),
    after: wrap('update_tasks_by_pk', `${M2_ROW} FROM "tasks" AS "_t1" WHERE "_t1"."account_id" = $1 AND "_t1"."id" = ($2::json -> 0 ->> 'id'::text)::uuid`),
    populate: wrap('update_tasks_by_pk', `${M2_ROW} FROM json_populate_recordset(NULL::"tasks", $2::json) WITH ORDINALITY AS "_i2" JOIN "tasks" AS "_t1" ON "_t1"."account_id" = $1 AND "_t1"."id" = "_i2"."id" ORDER BY "_i2"."ordinality" LIMIT 1`),
  },
] as const;

/** m2's write statement of each build (`$1` status, `$2` account, `$3` task id). */
const M2_WRITE = {
  before: `WITH "_w" AS (UPDATE "tasks" AS "_t1" SET "status" = $1::text WHERE "_t1"."account_id" = $2 AND ("_t1"."id" = $3::uuid) RETURNING "_t1"."id" AS "id") SELECT coalesce(json_agg("_w"."id" ORDER BY "_w"."id"), '[]'::json)::text AS "ids", count(*)::int AS "count" FROM "_w"`,
  after: `WITH "_w" AS (UPDATE "tasks" AS "_t1" SET "status" = $1::text WHERE "_t1"."account_id" = $2 AND ("_t1"."id" = $3::uuid) RETURNING "_t1"."id") SELECT (SELECT coalesce(json_agg("_k" ORDER BY "_k"."id"), '[]'::json) FROM (SELECT "_w"."id" FROM "_w") AS "_k")::text AS "ids", count(*)::int AS "count" FROM "_w"`,
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

async function timed(client: pg.PoolClient, config: pg.QueryConfig): Promise<number> {
  const start = process.hrtime.bigint();
  await client.query(config);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main(): Promise<void> {
  if (!args.account || !process.env.DATABASE_URL) throw new Error('usage: DATABASE_URL=… mutationStatements.ts --account SLUG');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  const accountId = await accountIdOf(pool, args.account);
  const sample = await sampleData(pool, accountId);
  const client = await pool.connect();
  try {
    const runs = Number(args.runs);
    const lines: string[] = [];
    for (const statement of RESPONSES) {
      const { rows } = await client.query<{ id: string }>(`SELECT id FROM ${statement.table} WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 200`, [accountId]);
      const keys = rows.map((row) => row.id);
      const times = { before: [] as number[], populate: [] as number[], after: [] as number[] };
      const run = async (side: 'before' | 'populate' | 'after', i: number, record: boolean): Promise<void> => {
        const id = keys[i % keys.length]!;
        const values = side === 'before' ? [accountId, `{${id}}`] : [accountId, JSON.stringify([{ id }])];
        const ms = await timed(client, { name: `${statement.id}-${side}`, text: statement[side], values });
        if (record) times[side].push(ms);
      };
      for (let i = 0; i < 20; i++) for (const side of ['before', 'populate', 'after'] as const) await run(side, i, false);
      for (let i = 0; i < runs; i++) for (const side of i % 2 ? (['after', 'populate', 'before'] as const) : (['before', 'populate', 'after'] as const)) await run(side, i, true);
      const [before, populate, after] = [median(times.before), median(times.populate), median(times.after)];
      lines.push(`| ${statement.id} | ${runs} | ${before.toFixed(3)} | ${populate.toFixed(3)} (${(populate / before).toFixed(2)}) | ${after.toFixed(3)} (${(after / before).toFixed(2)}) |`);
    }
    const tasks = sample.taskIds;
    if (tasks.length) {
      const times = { before: [] as number[], after: [] as number[] };
      for (let i = 0; i < runs + 20; i++) {
        for (const side of i % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
          await client.query('BEGIN');
          const ms = await timed(client, { name: `m2 write-${side}`, text: M2_WRITE[side], values: ['completed', accountId, tasks[i % tasks.length]] });
          await client.query('ROLLBACK');
          if (i >= 20) times[side].push(ms);
        }
      }
      const [before, after] = [median(times.before), median(times.after)];
      lines.push(`| m2 write (rolled back) | ${runs} | ${before.toFixed(3)} | ${after.toFixed(3)} (${(after / before).toFixed(2)}) | (same as the middle column) |`);
    }
    const header = '| statement | runs each | db13bd7: `($n::uuid[])[1]`, median ms | json_populate_recordset (d7a234e), median ms (/ db13bd7) | keys cast from the JSON (this branch), median ms (/ db13bd7) |';
    process.stdout.write([header, '|---|---:|---:|---:|---:|', ...lines, ''].join('\n'));
  } finally {
    client.release();
    await pool.end();
  }
}

await main();
