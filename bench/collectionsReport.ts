/**
 * The collections queue's benchmark (`bench/collections.ts`, issue 31): its results' shape and
 * its section of bench/RESULTS.md, kept between two markers so that `npm run bench` (which
 * re-renders the rest of the file from results.json) carries it over unchanged.
 */
export interface CollectionsBench {
  readonly at: string;
  readonly postgresVersion: string;
  /** The seed's scale, or null for an account given with --account. */
  readonly scale: number | null;
  /** How the data was made, when not by the seeder here. */
  readonly note: string | null;
  readonly runs: number;
  readonly loans: number;
  readonly servicing: number;
  readonly late: number;
  readonly schedules: number;
  readonly payments: number;
  readonly businessDate: string;
  readonly cases: readonly {
    readonly name: string;
    readonly rowsReturned: number;
    /** Late loans matching (a queue), or buckets (the summary). */
    readonly matching: number;
    readonly medianMs: number;
    readonly p90Ms: number;
    readonly minMs: number;
    readonly maxMs: number;
    readonly load1: number;
    readonly plan: readonly string[];
  }[];
}

const START = '<!-- collections -->';
const END = '<!-- /collections -->';

/** `markdown` with its collections section replaced by `section` (or `section` appended). */
export function keepCollectionsSection(markdown: string, section: string | null): string {
  if (section === null) return markdown;
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start >= 0 && end > start) return `${markdown.slice(0, start)}${section}${markdown.slice(end + END.length)}`;
  return `${markdown.trimEnd()}\n\n${section}\n`;
}

/** The collections section of `markdown` (markers included), or null. */
export function collectionsSectionOf(markdown: string): string | null {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  return start >= 0 && end > start ? markdown.slice(start, end + END.length) : null;
}

export function renderCollectionsSection(results: CollectionsBench): string {
  const rows = results.cases.map((c) => `| ${c.name} | ${c.rowsReturned} | ${c.matching} | **${c.medianMs}** | ${c.p90Ms} | ${c.minMs}–${c.maxMs} | ${c.load1} |`);
  const plans = results.cases.map((c) => `#### ${c.name}\n\n\`\`\`\n${c.plan.join('\n')}\n\`\`\``);
  return `${START}
## Collections queue (\`bench/collections.ts\`, issue 31)

\`node --import tsx bench/collections.ts\` on ${results.at.slice(0, 10)}: PostgreSQL ${results.postgresVersion}, ${
    results.scale === null ? `one account${results.note ? ` (${results.note})` : ''}` : `one account seeded at scale ${results.scale}`
  } — ${results.loans.toLocaleString('en')} loans, ${results.servicing.toLocaleString('en')} in servicing, ${results.late.toLocaleString('en')} late on the business date ${results.businessDate}; ${results.schedules.toLocaleString('en')} schedule rows, ${results.payments.toLocaleString('en')} payments. Each statement is the one \`app/collectionsQueue.ts\` runs, timed in the client around the query (loopback round trip included), ${results.runs} runs after 3 warm-up runs; the load average is the machine's (2 shared cores). Done-when 3 asks for the queue's query under 100 ms: the first row.

| Statement | Rows returned | Matching | Median ms | p90 ms | Range ms | Load (1 min) |
|---|---|---|---|---|---|---|
${rows.join('\n')}

### Plans (EXPLAIN (ANALYZE, BUFFERS), one run after the timed ones)

${plans.join('\n\n')}
${END}`;
}
