/**
 * Accessibility check for the browser tests: injects axe-core (npm `axe-core`, from
 * node_modules — nothing is fetched) into the page and returns the violations of the impacts
 * asked for (`serious` and `critical` by default; `keyboardBrowser` asks for `moderate` too), each
 * as one readable line, so a test can assert the list is empty and print what is wrong when it is not.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
let axeSource: string | null = null;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** How much a violation matters, as axe-core grades it. */
export type AxeImpact = 'minor' | 'moderate' | 'serious' | 'critical';

/** The serious and critical axe-core violations of the page as it is now ("rule: help — targets"). */
export function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  return accessibilityViolations(page, ['serious', 'critical']);
}

/** The page's axe-core violations of these impacts ("impact rule: help — targets"). */
export async function accessibilityViolations(page: Page, impacts: readonly AxeImpact[]): Promise<string[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  const loaded = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined');
  // Evaluated through the DevTools protocol, which the pages' Content-Security-Policy (no inline
  // scripts) does not apply to; a <script> tag would be refused.
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    // The page's document (tests are type-checked without the DOM library).
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations
    .filter((v) => (impacts as readonly (string | null)[]).includes(v.impact))
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}
