import assert from 'node:assert/strict';

/**
 * Debian's Chromium through playwright-core, headless, making no connection of its own — or a
 * test failure that says how to get it (a browser test never skips).
 */
export async function launchChromium() {
  try {
    const { chromium } = await import('playwright-core');
    return await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      timeout: 30_000,
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-default-apps',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  } catch (error) {
    assert.fail(
      `Chromium could not start (${String(error).split('\n')[0]}): apt-get install chromium (and npm ci for playwright-core)`,
    );
  }
}
