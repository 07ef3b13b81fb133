/**
 * The EXPLAIN of a compiled statement (the console's plan view): JSON, and without PostgreSQL's
 * cost, row and width estimates unless asked (`estimates`), since those follow table-wide
 * statistics that a tenant's key must not read (README "Security").
 */
export function explainStatement(text: string, estimates: boolean): string {
  return `EXPLAIN (FORMAT JSON${estimates ? '' : ', COSTS OFF'}) ${text}`;
}
