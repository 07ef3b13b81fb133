/**
 * Whether a prepared statement may run on PostgreSQL's generic plan instead of being planned
 * again for every execution — decided per statement by comparing the two plans.
 *
 * PostgreSQL plans a prepared statement's first five executions with the values given ("custom
 * plans") and then keeps the generic plan only when its estimated cost is no higher. A parameter
 * whose value a generic plan cannot see — `LIMIT $3 OFFSET $4` is costed at a tenth of the
 * table, an `ILIKE $2` pattern at a default selectivity — makes the generic plan look dear even
 * when it is the very plan chosen for the values, and the statement is then planned anew on
 * every execution: 0.4–0.5 ms of a 1 ms page of loans (bench/README.md). PostgreSQL 15 has no
 * per-statement setting for this, so:
 *
 * - The first `CHECKS` times a statement runs on a connection where it is prepared, the adapter
 *   first asks PostgreSQL for both plans in one round trip: `EXPLAIN` of the statement with the
 *   request's values bound (the plan made for those values; once for each value a parameter
 *   listed in `oneOf` can take), and `EXPLAIN EXECUTE` of the prepared statement under
 *   `plan_cache_mode = force_generic_plan` with every argument NULL (a generic plan is made
 *   without values; nothing is spliced into SQL text).
 * - When the plans have the same shape every time (`planShape`: node types, tables, indexes,
 *   join types and strategies, scan directions, subplans — not the conditions' texts, where one
 *   shows `$2` and the other the value) and the generic plan's estimated cost is above the
 *   average of the others (so PostgreSQL would keep planning anew), the statement runs from then
 *   on after `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`, in one round
 *   trip: the setting lasts until the batch's implicit transaction ends, committed or rolled
 *   back, so the connection is always left as it was (the setter is prepared on each connection;
 *   until issue 36's session 16 it was an unnamed SET before and RESET after the statement, ~10 µs
 *   more of backend CPU). Otherwise PostgreSQL keeps choosing, as before: when the generic plan
 *   costs no more, it picks that plan by itself after five executions.
 *
 * Only statements the caller marks `genericPlanSafe` take part: ones whose parameters cannot
 * choose another plan from one execution to the next (the engine's `genericPlanSafety`: values
 * written in the document, which a cached statement always has the same, the account, limits
 * and offsets) — or a variable compared with a column that takes only a few values (a CHECK
 * constraint's list), whose every value the check tries. Any other request variable compared
 * with a column may: the generic plan of `status = $1` can be the index scan that suits a rare
 * status and not a common one, and the checks would see only the values that came. The tenant
 * predicate is the one bet left, the one PostgreSQL itself makes for every statement whose
 * generic plan it keeps: one plan for all accounts. Statements inside transactions never take part, so a check never touches a
 * request's transaction. A decision lasts for the process (a restart, or a new statement text
 * after a metadata change, checks again).
 */

/** Executions whose two plans are compared before a statement is decided. */
export const CHECKS = 3;
/** Statements remembered at most (then forgotten all at once, and checked again when they return). */
const MAX_STATEMENTS = 2000;

/** One check: whether the two plans had the same shape, and their estimated total costs. */
export interface PlanComparison {
  readonly sameShape: boolean;
  readonly genericCost: number;
  readonly forValuesCost: number;
}

type Choice = 'generic' | 'planned' | { readonly checks: readonly PlanComparison[] };

export class PlanChoices {
  readonly #choices = new Map<string, Choice>();

  /** What to do for the next execution of the statement `name`: check its plans first, run it on the generic plan, or leave it to PostgreSQL. */
  next(name: string): 'check' | 'generic' | 'planned' {
    const choice = this.#choices.get(name);
    return choice === undefined || typeof choice === 'object' ? 'check' : choice;
  }

  /** Records one check of `name` (null: it failed, and PostgreSQL keeps choosing). */
  record(name: string, comparison: PlanComparison | null): void {
    const choice = this.#choices.get(name);
    if (typeof choice === 'string') return;
    if (!comparison?.sameShape) {
      this.#remember(name, 'planned');
      return;
    }
    const checks = [...(choice?.checks ?? []), comparison];
    if (checks.length < CHECKS) {
      this.#remember(name, { checks });
      return;
    }
    const forValues = checks.reduce((sum, check) => sum + check.forValuesCost, 0) / checks.length;
    this.#remember(name, checks[0]!.genericCost > forValues ? 'generic' : 'planned');
  }

  #remember(name: string, choice: Choice): void {
    if (!this.#choices.has(name) && this.#choices.size >= MAX_STATEMENTS) this.#choices.clear();
    this.#choices.set(name, choice);
  }
}

interface PlanNode {
  readonly 'Total Cost'?: number;
  readonly 'Node Type'?: string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Join Type'?: string;
  readonly Strategy?: string;
  readonly 'Scan Direction'?: string;
  readonly 'Parent Relationship'?: string;
  readonly 'Subplan Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** The root of the plan `EXPLAIN (FORMAT JSON)` answered. */
function rootOf(explained: unknown): PlanNode {
  const root = (explained as { Plan?: PlanNode }[] | undefined)?.[0]?.Plan;
  if (!root) throw new Error('EXPLAIN (FORMAT JSON) gave no plan');
  return root;
}

/** What makes two plans the same plan: every node's kind, table, index, join type, strategy, direction and place — not costs or condition texts. */
export function planShape(explained: unknown): string {
  const shape = (node: PlanNode): string =>
    [node['Node Type'], node['Relation Name'], node['Index Name'], node['Join Type'], node.Strategy, node['Scan Direction'], node['Parent Relationship'], node['Subplan Name']].map((part) => part ?? '').join('|') +
    `(${(node.Plans ?? []).map(shape).join(',')})`;
  return shape(rootOf(explained));
}

/** Compares `EXPLAIN (FORMAT JSON)` answers: the plans made for values, each against the generic plan. */
export function comparePlans(forValues: readonly unknown[], generic: unknown): PlanComparison {
  const genericShape = planShape(generic);
  return {
    sameShape: forValues.every((plan) => planShape(plan) === genericShape),
    genericCost: rootOf(generic)['Total Cost'] ?? 0,
    forValuesCost: forValues.reduce<number>((sum, plan) => sum + (rootOf(plan)['Total Cost'] ?? 0), 0) / forValues.length,
  };
}
