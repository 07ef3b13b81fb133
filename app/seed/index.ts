/** Public surface of `app/seed/`: the demo portfolio — its pure generation and the seeder that writes it. */
export { seedPortfolio, SeedError, type SeedOptions, type SeedSummary } from './seedPortfolio.js';
export { seedExistingAccount } from './seedAccount.js';
export { BASE_COUNTS, isSeedDay, MAX_SEED_SCALE, REFERENCE_DATE, SEED_DAYS, seedCounts, type SeedCounts } from './generate.js';
