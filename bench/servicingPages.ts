/**
 * Time of the dashboard's servicing pages (issue 17: under 100 ms server time at scale 1).
 *
 *   npm run build && node --import tsx bench/servicingPages.ts [--scale 1] [--runs 30]
 *
 * Seeds one account at the scale (10,000 loans at 1) in the test database — embedded PGlite, or
 * a fresh database on TEST_DATABASE_URL's server — starts the service in-process, logs in, and
 * requests each page `runs` times after 3 warm-up requests, one at a time over a keep-alive
 * loopback connection. The time printed is the whole request as the client sees it (so an upper
 * bound of the server's time): median, p95 and max per page.
 */
import { openTestDatabase } from '../tests/support/testDatabase.js';
import { startTestServer } from '../tests/support/http.js';
import { seedAccount } from '../tests/support/seededService.js';
import { DashboardClient } from '../tests/dashboard/dashboardClient.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const scale = Number(args.get('scale') ?? '1');
const runs = Number(args.get('runs') ?? '30');

const database = await openTestDatabase();
const started = Date.now();
const seeded = await seedAccount(database.db, { scale });
await database.db.query('ANALYZE');
process.stdout.write(`seeded scale ${scale} (${seeded.summary.loans} loans) in ${((Date.now() - started) / 1000).toFixed(0)} s on ${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'}\n`);
const one = async <T>(sql: string, values: unknown[]): Promise<T> => (await database.db.query<T & Record<string, unknown>>(sql, values)).rows[0]! as T;
const account = seeded.account.id;
// The loan with the longest schedule and the most payments: the heaviest loan page.
const heavy = await one<{ id: string }>(
  `SELECT loan_id AS id FROM (SELECT loan_id FROM schedules WHERE account_id = $1 UNION ALL SELECT loan_id FROM payments WHERE account_id = $1) rows_of_loans
    GROUP BY loan_id ORDER BY count(*) DESC, loan_id LIMIT 1`,
  [account],
);
const borrower = await one<{ name: string }>('SELECT p.name FROM borrows b JOIN people p ON p.account_id = b.account_id AND p.id = b.person_id WHERE b.account_id = $1 ORDER BY b.id LIMIT 1', [account]);
const person = await one<{ id: string }>('SELECT person_id AS id FROM borrows WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC LIMIT 1', [account]);
const investor = await one<{ id: string }>('SELECT person_id AS id FROM funding_sources WHERE account_id = $1 GROUP BY person_id ORDER BY count(*) DESC LIMIT 1', [account]);

const server = await startTestServer(database.db, { logLevel: 'warn' });
const client = new DashboardClient(server.url);
const login = await client.logIn(`admin@${seeded.account.slug}.test`, 'correct horse battery');
if (login.status !== 303) throw new Error(`login failed: ${login.status}`);

const pages: [string, string][] = [
  ['loans (first page, counts)', '/dashboard/loans'],
  ['loans, search by borrower', `/dashboard/loans?q=${encodeURIComponent(borrower.name)}`],
  ['loans, search by a common word', '/dashboard/loans?q=st'],
  ['loans, servicing by amount, page 100', '/dashboard/loans?status=servicing&sort=amount_desc&page=100'],
  ['loans, by maturity', '/dashboard/loans?sort=maturity'],
  ['loan page (heaviest loan)', `/dashboard/loans/${heavy.id}`],
  ['loan edit form', `/dashboard/loans/${heavy.id}/edit`],
  ['new loan form', '/dashboard/loans/new'],
  ['people (first page)', '/dashboard/people'],
  ['people, search', '/dashboard/people?q=son'],
  ['person (most loans borrowed)', `/dashboard/people/${person.id}`],
  ['person (most loans funded)', `/dashboard/people/${investor.id}`],
];

const lines: string[] = [];
for (const [name, path] of pages) {
  const times: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const start = performance.now();
    const reply = await client.get(path);
    const ms = performance.now() - start;
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status}`);
    if (i >= 3) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  lines.push(`| ${name} | ${at(0.5).toFixed(1)} | ${at(0.95).toFixed(1)} | ${times[times.length - 1]!.toFixed(1)} |`);
}
process.stdout.write(`\n| page | median ms | p95 ms | max ms |\n|---|---|---|---|\n${lines.join('\n')}\n`);
await server.close();
await database.close();
