/**
 * PostgreSQL's `EXPLAIN (FORMAT JSON)` output as the familiar indented text tree:
 * one line per plan node with its estimated cost and rows, and its conditions beneath.
 */
interface PlanNode {
  readonly 'Node Type'?: string;
  readonly 'Relation Name'?: string;
  readonly Alias?: string;
  readonly 'Index Name'?: string;
  readonly 'Startup Cost'?: number;
  readonly 'Total Cost'?: number;
  readonly 'Plan Rows'?: number;
  readonly Plans?: readonly PlanNode[];
  readonly [detail: string]: unknown;
}

const CONDITIONS = ['Index Cond', 'Recheck Cond', 'Hash Cond', 'Merge Cond', 'Join Filter', 'Filter', 'Sort Key', 'Group Key'] as const;

export function formatPlan(plan: unknown): string {
  const root = Array.isArray(plan) ? (plan[0] as { Plan?: PlanNode } | undefined)?.Plan : undefined;
  if (!root) return plan === null || plan === undefined ? '' : JSON.stringify(plan, null, 2);
  const lines: string[] = [];
  formatNode(root, 0, lines);
  return lines.join('\n');
}

function formatNode(node: PlanNode, depth: number, lines: string[]): void {
  const indent = depth === 0 ? '' : `${'      '.repeat(depth - 1)}  ->  `;
  const detailIndent = ' '.repeat(depth === 0 ? 2 : indent.length + 2);
  let title = node['Node Type'] ?? 'Node';
  if (node['Index Name']) title += ` using ${node['Index Name']}`;
  if (node['Relation Name']) title += ` on ${node['Relation Name']}${node.Alias && node.Alias !== node['Relation Name'] ? ` ${node.Alias}` : ''}`;
  const cost = node['Total Cost'] === undefined ? '' : `  (cost=${node['Startup Cost']?.toFixed(2)}..${node['Total Cost'].toFixed(2)} rows=${node['Plan Rows']})`;
  lines.push(`${indent}${title}${cost}`);
  for (const condition of CONDITIONS) {
    const value = node[condition];
    if (value !== undefined) lines.push(`${detailIndent}${condition}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  for (const child of node.Plans ?? []) formatNode(child, depth + 1, lines);
}
