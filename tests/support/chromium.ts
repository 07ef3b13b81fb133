/**
 * The browser tests' one home for Chromium: finding it, deciding whether to skip, launching it
 * and opening a watched page.
 *
 * Where the browser tests find Chromium, in this order: `CHROMIUM_PATH` (used as given, so a
 * wrong path fails loudly), Debian's `/usr/bin/chromium`, then a Chromium that Playwright
 * downloaded (`~/.cache/ms-playwright/chromium-<n>/chrome-linux/chrome` or `chrome-linux64`,
 * newest build first; `PLAYWRIGHT_BROWSERS_PATH` moves that cache). Nothing is downloaded here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** How to make the browser tests run, for the line printed when they are skipped. */
export const HOW_TO_RUN_BROWSER_TESTS =
  'install Chromium (Debian/Ubuntu: `apt-get install chromium`; anywhere: `npx playwright install chromium`) or set CHROMIUM_PATH to a Chromium binary';

/** The Chromium to drive, or null when there is none. `debianPath` is a parameter for tests. */
export function findChromium(env: NodeJS.ProcessEnv = process.env, debianPath = DEBIAN_CHROMIUM): string | null {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  if (existsSync(debianPath)) return debianPath;
  const cache = env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), '.cache', 'ms-playwright');
  let builds: string[];
  try {
    builds = readdirSync(cache).filter((name) => /^chromium-\d+$/.test(name));
  } catch {
    return null;
  }
  builds.sort((a, b) => Number(b.slice('chromium-'.length)) - Number(a.slice('chromium-'.length)));
  for (const build of builds) {
    for (const folder of ['chrome-linux', 'chrome-linux64']) {
      const binary = join(cache, build, folder, 'chrome');
      if (existsSync(binary)) return binary;
    }
  }
  return null;
}

/**
 * Whether the browser tests must run: `REQUIRE_BROWSER_TESTS=1` (set by `.ci/run`) or `CI=true`.
 * Then a missing Chromium fails them instead of skipping them.
 */
export function browserTestsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.REQUIRE_BROWSER_TESTS === '1' || env.CI === 'true';
}

/** Why the browser tests are skipped (no Chromium and not required), or false when they run. */
export function browserTestSkip(executablePath: string | null, env: NodeJS.ProcessEnv = process.env): string | false {
  return executablePath || browserTestsRequired(env) ? false : `no Chromium found: ${HOW_TO_RUN_BROWSER_TESTS}`;
}

/** How long a browser test waits for Chromium and for any page action. */
export const BROWSER_TIMEOUT_MS = 30_000;

/**
 * The Chromium of one browser test file. Without one (and not required) the file prints one
 * loud line, `*** SKIPPED: <what> (<file>) — <why> ***`, on stderr when it is loaded (`.ci/run`
 * greps the dashboard's), and its suite is a single skipped test.
 */
export class ChromiumSuite {
  readonly executablePath: string | null;
  readonly skip: string | false;

  /** `env` and `debianPath` are parameters for tests. */
  constructor(what: string, file: string, env: NodeJS.ProcessEnv = process.env, debianPath = DEBIAN_CHROMIUM) {
    this.executablePath = findChromium(env, debianPath);
    this.skip = browserTestSkip(this.executablePath, env);
    if (this.skip) process.stderr.write(`\n*** SKIPPED: ${what} (${file}) — ${this.skip} ***\n\n`);
  }

  /**
   * Call first in the suite's `describe`: when skipped it registers one skipped test named
   * `name` (so the run's summary counts it; a skipped suite is not counted) and answers true.
   */
  skipped(name: string): boolean {
    if (this.skip) it(name, { skip: this.skip }, () => {});
    return this.skip !== false;
  }

  /** Headless Chromium; fails, saying why, when it is required but missing. */
  async launch(): Promise<Browser> {
    if (!this.executablePath) throw new Error(`the browser tests are required (REQUIRE_BROWSER_TESTS=1 or CI=true) but no Chromium found: ${HOW_TO_RUN_BROWSER_TESTS}`);
    return chromium.launch({
      executablePath: this.executablePath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: BROWSER_TIMEOUT_MS,
    });
  }
}

export interface WatchedPageOptions {
  readonly viewport: { readonly width: number; readonly height: number };
  /** Where the page's problems are collected: a test asserts there are none. */
  readonly problems: string[];
  /** Permissions granted to this origin (the clipboard, say). */
  readonly grant?: { readonly permissions: readonly string[]; readonly origin: string };
  /** Also count console errors (not Chromium's own "Failed to load resource", which the response check names better). */
  readonly consoleErrors?: boolean;
  /** Also count requests that failed without a response. */
  readonly failedRequests?: boolean;
  /** A response of status ≥ 400 the test provokes on purpose, not counted. */
  readonly expectedRefusal?: (response: Response) => boolean;
}

/**
 * A new context (the viewport, the action timeout) and its page, with its problems collected:
 * script errors, responses of status 400 or more (but `expectedRefusal`), and as asked console
 * errors and failed requests.
 */
export async function openWatchedPage(browser: Browser, options: WatchedPageOptions): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { ...options.viewport } });
  if (options.grant) await context.grantPermissions([...options.grant.permissions], { origin: options.grant.origin });
  context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  const page = await context.newPage();
  const problems = options.problems;
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  if (options.consoleErrors) {
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console error: ${message.text()}`);
    });
  }
  page.on('response', (response) => {
    if (response.status() >= 400 && !options.expectedRefusal?.(response)) problems.push(`${response.status()} from ${response.url()}`);
  });
  if (options.failedRequests) page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  return { context, page };
}

/**
 * Logs into the dashboard on its log-in page (already open in `page`) as the e-mail and password
 * given, and waits for the overview: the log-in every browser file starts with.
 */
export async function logInToDashboard(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${baseUrl}/dashboard`);
}

/**
 * A screenshot of the page for a person to look at (`tests/artifacts/dashboard/`), taken only
 * with `SCREENSHOTS=all`: a full-page shot costs Chromium about 0.6 CPU-seconds, some 40 a run
 * for the walks' 60-odd pages, and nothing is asserted on them. The screenshots issue 28 asks for
 * (`outcomesBrowser`: the overview, the loan page, the new-loan form and the settings at 1366×768
 * and 1920×1080) are taken on every run, with `page.screenshot` itself.
 */
export async function pageScreenshot(page: Page, path: string, fullPage = true): Promise<void> {
  if (process.env.SCREENSHOTS === 'all') await page.screenshot({ path, fullPage });
}

