/** Public surface of `db/seed/`: the demo-portfolio seeder. */
export { seedPortfolio, SeedError, type SeedOptions, type SeedSummary } from './seedPortfolio.js';
export { BASE_COUNTS, REFERENCE_DATE, seedCounts, type SeedCounts } from './generate.js';
