/**
 * Re-renders `bench/RESULTS.md` from `bench/results.json` (`node --import tsx bench/render.ts`):
 * the same `renderResults` that `npm run bench` uses, for when only the report's wording changed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes.js';
import { renderResults, type BenchResults } from './report.js';
import { collectionsSectionOf, keepCollectionsSection } from './collectionsReport.js';
import { keepSubscriptionsSection, subscriptionsSectionOf } from './subscriptionsReport.js';
import { keepOperationsSection, operationsSectionOf } from './operationsReport.js';

const dir = join(ROOT, process.argv[2] ?? 'bench');
const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as BenchResults;
// The collections, subscriptions and operations sections (bench/collections.ts, bench/subscriptions.ts, run.ts --operations) are not in results.json: they are carried over.
const previous = readFileSync(join(dir, 'RESULTS.md'), 'utf8');
writeFileSync(
  join(dir, 'RESULTS.md'),
  keepOperationsSection(keepSubscriptionsSection(keepCollectionsSection(renderResults(results), collectionsSectionOf(previous)), subscriptionsSectionOf(previous)), operationsSectionOf(previous)),
);
process.stderr.write(`wrote ${join(dir, 'RESULTS.md')}\n`);
