/*
 * The story end to end, with real processes only: `llm-agent demo DIR
 * --stop-after-crash` leaves the demo's tree crashed (a writer SIGKILLed mid write_file);
 * `llm-agent ui DIR` serves it; in Chromium the page shows the tree revivable and the plan
 * answering the write as interrupted, Confirm revives it, and the page redraws with every run
 * finished — every request to the server itself, no console error, screenshots of both.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_REPORT, DEMO_SECTIONS, sectionContent } from '../../src/demo/demo-script.ts';
import { launchChromium } from './support/chromium.ts';
import { type CliResult, REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

const OUTPUT = join(REPO, 'test-output', 'ui-demo');
const NODE = join(REPO, 'node_modules/.bin/node');
const MAIN = join(REPO, 'src/cli/main.ts');

function progress(text: string): void {
  process.stderr.write(`# ui-demo.test: ${text}\n`);
}

describe('llm-agent ui on the demo’s crashed tree', { timeout: 180_000 }, () => {
  let folder = '';
  let demo: CliResult;
  let child: ChildProcess | undefined;
  let url = '';
  let base = '';
  let stderr = '';
  let exited: Promise<number | null> = Promise.resolve(null);

  before(async () => {
    folder = await temporaryFolder();
    await mkdir(OUTPUT, { recursive: true });
    progress('running llm-agent demo demo --stop-after-crash');
    demo = await runCli(['demo', 'demo', '--stop-after-crash'], { cwd: folder });
    const env: Record<string, string | undefined> = { ...process.env };
    delete env.FORCE_COLOR;
    delete env.LLM_AGENT_DEBUG;
    // No --agents: the demo's transcripts are revived with the demo's own agents.
    progress('starting llm-agent ui demo');
    const started = spawn(NODE, [MAIN, 'ui', 'demo'], {
      cwd: folder,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    exited = new Promise((done) => started.on('exit', (code) => done(code)));
    started.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    url = await new Promise<string>((done, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error(`no URL in 15 s; stderr: ${stderr}`)), 15_000);
      started.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) {
          clearTimeout(timer);
          done(out.split('\n')[0] as string);
        }
      });
      started.on('exit', (code) => fail(new Error(`ui exited ${code}: ${stderr}`)));
    });
    progress(`serving at ${url}`);
    const match = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=[0-9a-f]{64}$/.exec(url);
    assert.ok(match, `the URL printed: ${url}`);
    base = `http://127.0.0.1:${match[1]}`;
  });

  after(async () => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
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
    const requests: string[] = [];
    const consoleLines: string[] = [];
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(20_000);
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`));
      progress('opening the page');
      await page.goto(url);
      await page.waitForSelector('body[data-events="open"]');

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
    for (const request of requests) {
      assert.ok(request.startsWith(`${base}/`), `a request elsewhere: ${request}`);
    }
    assert.ok(requests.includes(`${base}/revive`), 'the page posted /revive');
    assert.deepEqual(
      consoleLines.filter((line) => !line.includes('Content Security Policy')),
      [],
      'nothing logged but CSP reports',
    );
    for (const name of ['crashed.png', 'revived.png']) {
      const path = join(OUTPUT, name);
      assert.ok(existsSync(path) && statSync(path).size > 1000, `${path} was written`);
    }
    // The revived lead assembled the report from both sections, the rewritten one included.
    const report = await readFile(join(folder, 'demo', 'workspace', DEMO_REPORT), 'utf8');
    for (const section of DEMO_SECTIONS) {
      assert.ok(report.includes(sectionContent(section.title)), `${DEMO_REPORT}: ${section.file}`);
    }
  });

  test('SIGTERM stops the server (exit code 0)', async () => {
    child?.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise((done) => setTimeout(() => done('timeout'), 10_000)),
    ]);
    assert.equal(code, 0, stderr);
  });
});
