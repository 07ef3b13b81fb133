import type { Metadata } from '../../../metadata/index.js';
import type { OperationPlan } from '../ir.js';
import type { MutationPlan } from '../mutationIr.js';
import { foreignKeyShortcuts, foreignKeyShortcutsInMutation } from './foreignKeyShortcuts.js';
import { sharedScans } from './sharedScans.js';

/** A rewrite of the query IR into IR the compiler renders as it is. */
export type PlanPass = (plan: OperationPlan, metadata: Metadata) => OperationPlan;

/**
 * The passes a query plan goes through after `planOperation`, in order: relationship filters
 * shortened through foreign keys first, so that a shared scan's members carry their shortened
 * `where`s; then root aggregates grouped into shared scans.
 */
export const PLAN_PASSES: readonly PlanPass[] = [foreignKeyShortcuts, (plan) => sharedScans(plan)];

/** Runs `PLAN_PASSES` over a query plan. Pure: the input plan is left as it is. */
export function runPlanPasses(plan: OperationPlan, metadata: Metadata): OperationPlan {
  return PLAN_PASSES.reduce((current, pass) => pass(current, metadata), plan);
}

/** The passes of a mutation plan: only the foreign-key shortcuts (its `where`s and `returning`s). */
export function runMutationPasses(plan: MutationPlan, metadata: Metadata): MutationPlan {
  return foreignKeyShortcutsInMutation(plan, metadata);
}
