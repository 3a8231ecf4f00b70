/*
 * The story end to end, with real processes only: `llm-agent demo DIR
 * --stop-after-crash` leaves the demo's tree crashed (a writer SIGKILLed mid write_file);
 * `llm-agent ui DIR` serves it; in Chromium the page shows the tree revivable and the plan
 * answering the write as interrupted, Confirm revives it, and the page redraws with every run
 * finished — every request to the server itself, no console error, screenshots of both.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_REPORT, DEMO_SECTIONS, sectionContent } from '../../src/demo/demo-script.ts';
import { launchChromium } from './support/chromium.ts';
import { type CliResult, REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';
import {
  assertScreenshots,
  assertSigtermStops,
  type CliChild,
  PageWatch,
  printedUrl,
  startCli,
  uiAddress,
} from './support/ui-child.ts';

const OUTPUT = join(REPO, 'test-output', 'ui-demo');

function progress(text: string): void {
  process.stderr.write(`# ui-demo.test: ${text}\n`);
}

describe('llm-agent ui on the demo’s crashed tree', { timeout: 180_000 }, () => {
  let folder = '';
  let demo: CliResult;
  let ui: CliChild | undefined;
  let url = '';
  let base = '';

  before(async () => {
    folder = await temporaryFolder();
    await mkdir(OUTPUT, { recursive: true });
    progress('running llm-agent demo demo --stop-after-crash');
    demo = await runCli(['demo', 'demo', '--stop-after-crash'], { cwd: folder });
    // No --agents: the demo's transcripts are revived with the demo's own agents.
    progress('starting llm-agent ui demo');
    ui = startCli(['ui', 'demo'], folder);
    url = await printedUrl(ui);
    progress(`serving at ${url}`);
    ({ base } = uiAddress(url));
  });

  after(async () => {
    if (ui !== undefined && ui.child.exitCode === null) ui.child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  });

  test('the demo stopped after the crash, its checks holding, nothing revived', async () => {
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.match(demo.stdout, /child pid \d+ exit signal: SIGKILL \(exit code none\)/);
    assert.match(demo.stdout, /All 4 checks held\./);
    assert.match(demo.stdout, /llm-agent ui demo /);
    await assert.rejects(readFile(join(folder, 'demo', 'workspace', DEMO_REPORT)), {
      code: 'ENOENT',
    });
  });

  test('in Chromium: the crashed tree and the plan; Confirm revives it; the page shows it finished', async () => {
    const browser = await launchChromium();
    const watch = new PageWatch();
    try {
      progress('opening the page');
      const page = await watch.open(browser, url, 20_000);

      const nav = (await page.locator('nav').textContent()) ?? '';
      assert.match(nav, /lead “Report” revivable · waiting on 1 child/);
      assert.match(nav, /writer-\S+ “Coming back honestly” revivable · 1 call in flight/);
      assert.match(nav, /writer-\S+ “Why runs die” finished/);
      const plan = (await page.locator('#plan').textContent()) ?? '';
      assert.match(plan, /1\. revive writer-\S+ \(writer\)/);
      assert.match(plan, /2\. revive lead \(lead\)/);
      assert.match(
        plan,
        /answer write_file \S+ \(side-effect\) as interrupted, outcome unknown — NOT retried/,
      );
      await page.screenshot({ path: join(OUTPUT, 'crashed.png'), fullPage: true });

      progress('clicking Confirm; waiting (60 s at most) for the revive to end');
      await page.click('#confirm');
      await page
        .locator('#revive-status', { hasText: /revive ended/ })
        .waitFor({ timeout: 60_000 });
      const status = (await page.locator('#revive-status').textContent()) ?? '';
      assert.match(status, /exit code 0/, (await page.locator('#log').textContent()) ?? '');
      assert.match((await page.locator('#log').textContent()) ?? '', /revive ended/);
      progress('revive ended; waiting for the tree to redraw');
      await page.locator('nav', { hasText: /lead “Report” finished/ }).waitFor();
      const after = (await page.locator('nav').textContent()) ?? '';
      assert.match(after, /writer-\S+ “Coming back honestly” finished/);
      assert.doesNotMatch(after, /revivable/);
      await page.screenshot({ path: join(OUTPUT, 'revived.png'), fullPage: true });
      await page.close();
    } finally {
      await browser.close();
    }
    watch.assertStayedHome(base);
    watch.assertPostedRevive(base);
    assertScreenshots(OUTPUT, ['crashed.png', 'revived.png']);
    // The revived lead assembled the report from both sections, the rewritten one included.
    const report = await readFile(join(folder, 'demo', 'workspace', DEMO_REPORT), 'utf8');
    for (const section of DEMO_SECTIONS) {
      assert.ok(report.includes(sectionContent(section.title)), `${DEMO_REPORT}: ${section.file}`);
    }
  });

  test('SIGTERM stops the server (exit code 0)', async () => {
    await assertSigtermStops(ui);
  });
});
