/**
 * Where the browser tests find Chromium, in this order: `CHROMIUM_PATH` (used as given, so a
 * wrong path fails loudly), Debian's `/usr/bin/chromium`, then a Chromium that Playwright
 * downloaded (`~/.cache/ms-playwright/chromium-<n>/chrome-linux/chrome` or `chrome-linux64`,
 * newest build first; `PLAYWRIGHT_BROWSERS_PATH` moves that cache). Nothing is downloaded here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

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
