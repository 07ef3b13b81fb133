import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '../support/chromium.js';

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
