import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserTestSkip, ChromiumSuite, findChromium, HOW_TO_RUN_BROWSER_TESTS } from '../support/chromium.js';

/** Where the browser tests look for Chromium (issue 12): CHROMIUM_PATH, Debian's, Playwright's cache. */
describe('findChromium', () => {
  const root = mkdtempSync(join(tmpdir(), 'loanql-chromium-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const file = (path: string): string => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '');
    return path;
  };
  const debian = file(join(root, 'usr-bin', 'chromium'));
  const noDebian = join(root, 'absent', 'chromium');
  const cache = join(root, 'ms-playwright');
  const older = file(join(cache, 'chromium-1090', 'chrome-linux', 'chrome'));
  const newer = file(join(cache, 'chromium-1155', 'chrome-linux64', 'chrome'));
  mkdirSync(join(cache, 'chromium-1200', 'chrome-linux'), { recursive: true }); // a build without its binary
  mkdirSync(join(cache, 'firefox-1400'), { recursive: true });

  it('takes CHROMIUM_PATH first, as given', () => {
    assert.equal(findChromium({ CHROMIUM_PATH: '/opt/chrome/chrome', PLAYWRIGHT_BROWSERS_PATH: cache }, debian), '/opt/chrome/chrome');
  });

  it('then Debian’s /usr/bin/chromium', () => {
    assert.equal(findChromium({ PLAYWRIGHT_BROWSERS_PATH: cache }, debian), debian);
  });

  it('then the newest Chromium build in Playwright’s cache that has its binary', () => {
    assert.equal(findChromium({ PLAYWRIGHT_BROWSERS_PATH: cache }, noDebian), newer);
    rmSync(newer);
    assert.equal(findChromium({ PLAYWRIGHT_BROWSERS_PATH: cache }, noDebian), older);
  });

  it('finds none when there is none (the browser tests are then skipped, or fail under REQUIRE_BROWSER_TESTS=1)', () => {
    assert.equal(findChromium({ PLAYWRIGHT_BROWSERS_PATH: join(root, 'no-cache') }, noDebian), null);
  });
});

describe('Skipping the browser tests', () => {
  it('skips them, saying how to run them, only when no Chromium is found and they are not required', () => {
    assert.equal(browserTestSkip(null, {}), `no Chromium found: ${HOW_TO_RUN_BROWSER_TESTS}`);
    assert.equal(browserTestSkip('/usr/bin/chromium', {}), false);
    assert.equal(browserTestSkip(null, { REQUIRE_BROWSER_TESTS: '1' }), false, '.ci/run requires them');
    assert.equal(browserTestSkip(null, { CI: 'true' }), false, 'CI requires them');
    assert.equal(browserTestSkip(null, { REQUIRE_BROWSER_TESTS: '0', CI: 'false' }), `no Chromium found: ${HOW_TO_RUN_BROWSER_TESTS}`);
  });

  it('prints one loud line naming the tests and the file when it skips them, none when they run', () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    let skipped: ChromiumSuite;
    let running: ChromiumSuite;
    let required: ChromiumSuite;
    try {
      const none = { PLAYWRIGHT_BROWSERS_PATH: join(tmpdir(), `loanql-no-cache-${process.pid}`) };
      skipped = new ChromiumSuite('the dashboard browser tests', 'tests/dashboard/browser.test.ts', none, join(tmpdir(), 'no-such-chromium'));
      running = new ChromiumSuite('the dashboard browser tests', 'tests/dashboard/browser.test.ts', { CHROMIUM_PATH: '/opt/chrome/chrome' });
      required = new ChromiumSuite('the dashboard browser tests', 'tests/dashboard/browser.test.ts', { ...none, CI: 'true' }, join(tmpdir(), 'no-such-chromium'));
    } finally {
      process.stderr.write = write;
    }
    assert.deepEqual(written, [`\n*** SKIPPED: the dashboard browser tests (tests/dashboard/browser.test.ts) — no Chromium found: ${HOW_TO_RUN_BROWSER_TESTS} ***\n\n`]);
    assert.equal(skipped.executablePath, null);
    assert.equal(running.skip, false);
    assert.equal(required.skip, false);
    assert.equal(required.executablePath, null);
    // Required but missing: launching fails, saying why, instead of skipping.
    return assert.rejects(required.launch(), /required \(REQUIRE_BROWSER_TESTS=1 or CI=true\) but no Chromium found/);
  });
});
