/** The servicing ledger of SPEC §12 as pure functions: see domain/ledger/README.md. */
export { replayLedger, payoffQuote, assessLateFees, replayOrder } from './replay.js';
export { distribute, adjustments, distributionHistory, splitComponent, checkSources, type DistributionTerms } from './distribute.js';
export { DEFAULT_SETTINGS, resolveSettings } from './settings.js';
export { LedgerError } from './money.js';
export type * from './types.js';
