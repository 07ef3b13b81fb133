/**
 * The subscriptions benchmark's (`bench/subscriptions.ts`, issue 34) results and its section of
 * RESULTS.md, between `<!-- subscriptions -->` markers that `npm run bench` and `render.ts` carry
 * over when they re-render the rest of the file.
 */

/** One phase (idle or writing) of one scheduler mode. */
export interface PhaseResult {
  /** Wall time of the phase: the writing phase includes the 3 s after the last write in which its refreshes arrive. */
  readonly seconds: number;
  /** Cohort statements the service ran (its own counter, `/healthz`) and PostgreSQL saw (pg_stat_statements calls). */
  readonly statements: number;
  readonly statementsSeen: number;
  /** Committed transactions in the database (pg_stat_database.xact_commit), the bench's writes included. */
  readonly commits: number;
  /** CPU seconds per second of wall time: the service process, every PostgreSQL process. */
  readonly serviceCpu: number;
  readonly postgresCpu: number;
  readonly messages: number;
  readonly writes: number;
  /** Commit → message, over every (write, subscriber that shows it) pair; ms. */
  readonly latency: { readonly samples: number; readonly missing: number; readonly p50: number; readonly p99: number; readonly max: number } | null;
  readonly load1: number;
}

export interface ModeResult {
  readonly mode: 'changes' | 'poll';
  readonly description: string;
  readonly subscribeSeconds: number;
  readonly cohorts: number;
  readonly idle: PhaseResult;
  readonly writing: PhaseResult;
}

export interface SubscriptionsBench {
  readonly at: string;
  readonly postgresVersion: string;
  readonly subscriptions: number;
  readonly loans: number;
  readonly documents: number;
  readonly connections: number;
  readonly writesPerSecond: number;
  readonly refreshWindowMs: number;
  readonly modes: readonly ModeResult[];
}

const START = '<!-- subscriptions -->';
const END = '<!-- /subscriptions -->';

/** `markdown` with its subscriptions section replaced by `section` (or `section` appended). */
export function keepSubscriptionsSection(markdown: string, section: string | null): string {
  if (section === null) return markdown;
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start >= 0 && end > start) return `${markdown.slice(0, start)}${section}${markdown.slice(end + END.length)}`;
  return `${markdown.trimEnd()}\n\n${section}\n`;
}

/** The subscriptions section of `markdown` (markers included), or null. */
export function subscriptionsSectionOf(markdown: string): string | null {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  return start >= 0 && end > start ? markdown.slice(start, end + END.length) : null;
}

const fixed = (value: number, digits = 1): string => value.toFixed(digits);
const percent = (cpu: number): string => `${(cpu * 100).toFixed(1)} %`;

export function renderSubscriptionsSection(r: SubscriptionsBench): string {
  const row = (name: string, phase: (m: ModeResult) => PhaseResult, cell: (p: PhaseResult, m: ModeResult) => string): string => `| ${name} | ${r.modes.map((m) => cell(phase(m), m)).join(' | ')} |`;
  const idle = (m: ModeResult): PhaseResult => m.idle;
  const writing = (m: ModeResult): PhaseResult => m.writing;
  const latency = (p: PhaseResult, which: 'p50' | 'p99' | 'max'): string => (p.latency ? `${fixed(p.latency[which], 0)} ms` : '—');
  const bound = 1000 / r.refreshWindowMs;
  return `${START}
## Subscriptions (\`bench/subscriptions.ts\`, issue 34)

\`node --import tsx bench/subscriptions.ts\` on ${r.at.slice(0, 16).replace('T', ' ')} UTC: PostgreSQL ${r.postgresVersion}, 2 shared cores, one service process. ${r.subscriptions.toLocaleString('en')} live queries (${r.documents} documents × ${r.loans} servicing loans × ${r.subscriptions / (r.documents * r.loans)}) on ${r.connections} WebSocket connections; then ${r.writesPerSecond} payment posts per second (one INSERT each, straight to PostgreSQL, spread over the loans). Each mode is the same service build: **changes** is loanql's scheduler (notices, ${r.refreshWindowMs} ms window; the 30 s fallback set beyond the run), **poll** is Hasura's design (\`SUBSCRIPTION_POLL_MS=1000\`: every cohort re-run every second, notices ignored).

| | ${r.modes.map((m) => m.mode).join(' | ')} |
|---|${r.modes.map(() => '---').join('|')}|
${row('cohorts (distinct plans)', idle, (_, m) => String(m.cohorts))}
${row('**idle**: cohort statements (service / pg_stat_statements)', idle, (p) => `${p.statements} / ${p.statementsSeen} in ${fixed(p.seconds, 0)} s`)}
${row('idle: commits in the database', idle, (p) => String(p.commits))}
${row('idle: service CPU', idle, (p) => `**${percent(p.serviceCpu)}** of a core`)}
${row('idle: PostgreSQL CPU', idle, (p) => `${percent(p.postgresCpu)} of a core`)}
${row('**writing**: posts (then 3 s for the last refreshes)', writing, (p) => `${p.writes} in ${fixed(p.seconds - 3, 0)} s`)}
${row('writing: cohort statements per second (over the phase)', writing, (p) => `**${fixed(p.statements / p.seconds)}** (${p.statementsSeen} seen by PostgreSQL)`)}
${row(`writing: bound (affected plans × ${fixed(bound, 0)} windows/s)`, writing, (_, m) => (m.mode === 'changes' ? `${m.cohorts * bound}` : `${m.cohorts} (one per cohort per s)`))}
${row('writing: messages sent', writing, (p) => String(p.messages))}
${row('writing: commit → message p50', writing, (p) => latency(p, 'p50'))}
${row('writing: commit → message **p99**', writing, (p) => `**${latency(p, 'p99')}**`)}
${row('writing: commit → message max', writing, (p) => latency(p, 'max'))}
${row('writing: (write, subscriber) pairs measured / never shown', writing, (p) => (p.latency ? `${p.latency.samples} / ${p.latency.missing}` : '—'))}
${row('writing: service CPU', writing, (p) => percent(p.serviceCpu))}
${row('writing: PostgreSQL CPU', writing, (p) => percent(p.postgresCpu))}
${row('load average (1 min) at the end', writing, (p) => fixed(p.load1))}
${END}`;
}
