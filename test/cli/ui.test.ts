/*
 * `llm-agent ui`: a local web view of a crashed tree, served by the real CLI in a child
 * process. Without the token nothing is served; a POST /revive without the token header, or
 * from a foreign origin, is refused and writes nothing; /run serves only runs of the tree. In
 * Chromium: the tree, the filters, a run's page with its call in flight, and the plan;
 * Confirm revives the tree, the log streams the revive, and the page redraws itself — after
 * the revive, and when a transcript appears — every request to the server itself, no console
 * error. In-process, with a command that never ends: one command at a time (409).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  copyFile,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findTranscripts } from '../../src/runs/find-transcripts.ts';
import { fileUiSource } from '../../src/ui/file-ui-source.ts';
import { escapeHtml } from '../../src/render/escape-html.ts';
import { startUiServer, type UiServer, type UiServerOptions } from '../../src/ui/ui-server.ts';
import { Session } from '../../src/transcript/session.ts';
import { startSessionWorker } from '../support/session-workers.ts';
import { sessionMeta } from '../support/transcripts.ts';
import { launchChromium } from './support/chromium.ts';
import {
  FIXTURE,
  REPO,
  temporaryFolder,
  writeFixtureAgents,
  writeFixtureTree,
} from './support/cli-fixtures.ts';
import { DOLLARS, SCRIPT, writeHostileTree } from './support/hostile-transcripts.ts';
import {
  assertScreenshots,
  assertSigtermStops,
  type CliChild,
  PageWatch,
  printedUrl,
  type Reply,
  send,
  startCli,
  uiAddress,
} from './support/ui-child.ts';

const OUTPUT = join(REPO, 'test-output', 'ui');

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function progress(text: string): void {
  process.stderr.write(`# ui.test: ${text}\n`);
}

/** Every transcript below the folder, with its bytes. */
async function snapshot(folder: string): Promise<Map<string, string>> {
  const bytes = new Map<string, string>();
  for (const path of await findTranscripts(['runs'], folder)) {
    bytes.set(path, (await readFile(path)).toString('base64'));
  }
  return bytes;
}

/** POSTs to /revive that must be refused: each without the token header or from elsewhere. */
function refusedPosts(base: string, token: string): [string, Record<string, string>][] {
  const cookie = `llm_agent_ui_${new URL(base).port}=${token}`;
  return [
    ['path token, no header', {}],
    ['cookie, no header', { Cookie: cookie }],
    ['wrong header', { 'X-LLM-Agent-Token': 'f'.repeat(64), Cookie: cookie }],
    ['foreign origin', { 'X-LLM-Agent-Token': token, Origin: 'http://evil.example' }],
    ['other port', { 'X-LLM-Agent-Token': token, Origin: 'http://127.0.0.1:1' }],
    ['null origin', { 'X-LLM-Agent-Token': token, Origin: 'null' }],
  ];
}

/** Runs `body` in a fresh folder holding the fixture tree, and removes the folder after. */
async function inFixtureTree(body: (folder: string) => Promise<void>): Promise<void> {
  const folder = await temporaryFolder();
  try {
    await writeFixtureTree(folder);
    await body(folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** What `serving` serves: `roots` (default `runs`) of `folder`, and any server option to change. */
type Serving = { folder: string; roots?: string[] } & Partial<UiServerOptions>;

/** Serves in-process (env: this process's, port: any free one), runs `body`, closes the server. */
async function serving(
  { folder, roots = ['runs'], ...options }: Serving,
  /** `base` is the server's address with its token: `http://127.0.0.1:PORT/TOKEN`. */
  body: (server: UiServer, base: string) => Promise<void>,
): Promise<void> {
  const server = await startUiServer({
    source: fileUiSource(roots, folder),
    cwd: folder,
    env: process.env,
    port: 0,
    ...options,
  });
  try {
    await body(server, `http://127.0.0.1:${server.port}/${server.token}`);
  } finally {
    await server.close();
  }
}

/** POSTs a Confirm to the server's /revive, its token in the header. */
function postRevive(server: Pick<UiServer, 'port' | 'token'>): Promise<Reply> {
  return send(`http://127.0.0.1:${server.port}/${server.token}/revive`, {
    method: 'POST',
    headers: { 'X-LLM-Agent-Token': server.token },
  });
}

describe('llm-agent ui', { timeout: 120_000 }, () => {
  let folder = '';
  let ui: CliChild | undefined;
  let url = '';
  let base = '';
  let origin = '';
  let token = '';

  before(async () => {
    folder = await temporaryFolder();
    await mkdir(OUTPUT, { recursive: true });
    await writeFixtureTree(folder);
    // The fixture's runs record model test:none: reviving them needs the fixture's agents.
    await writeFixtureAgents(folder);
    progress('starting llm-agent ui runs --agents agents.ts');
    ui = startCli(['ui', 'runs', '--agents', 'agents.ts'], folder);
    url = await printedUrl(ui);
    progress(`serving at ${url}`);
    ({ base, origin, token } = uiAddress(url));
  });

  after(async () => {
    if (ui !== undefined && ui.child.exitCode === null) ui.child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  });

  test('without the token as the path, or with a wrong one, nothing is served (403); no cookie is set', async () => {
    const wrong = 'a'.repeat(64);
    for (const path of [
      '/',
      '/app.js',
      '/events',
      '/run?path=x',
      `/?token=${token}`,
      `/app.js?token=${token}`,
      `/${wrong}/`,
      `/${wrong}/app.js`,
      `/${token}`,
      `/x/${token}/`,
    ]) {
      const reply = await send(`${origin}${path}`);
      assert.equal(reply.status, 403, path);
      assert.equal(reply.headers['content-security-policy'], CSP, path);
      assert.equal(reply.headers['x-content-type-options'], 'nosniff');
      assert.equal(reply.headers['referrer-policy'], 'no-referrer');
      assert.doesNotMatch(reply.body, /worker-call_s2|<html/);
    }
    // A cookie or a header naming the token authorises no GET: only the path does.
    const byCookie = await send(`${origin}/`, {
      headers: { Cookie: `llm_agent_ui_${new URL(origin).port}=${token}` },
    });
    assert.equal(byCookie.status, 403);
    const byHeader = await send(`${origin}/`, { headers: { 'X-LLM-Agent-Token': token } });
    assert.equal(byHeader.status, 403);
    // Another host name resolving to us (DNS rebinding) is refused even with the token.
    const rebound = await send(url, { headers: { Host: `evil.example:${new URL(origin).port}` } });
    assert.equal(rebound.status, 403);

    const page = await send(url);
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-security-policy'], CSP);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['set-cookie'], undefined, 'no cookie: it would reach every port');
    assert.match(page.body, /worker-call_s2/);
    assert.doesNotMatch(page.body, /<script>|<script [^>]*src="(?!app\.js")/);
    assert.doesNotMatch(page.body, /http-equiv="Content-Security-Policy"/);
    // Every link of the page is relative (it keeps the token) or a fragment.
    for (const [, href] of page.body.matchAll(/href="([^"]*)"/g)) {
      assert.match(href as string, /^(run\?path=|\.\/|#)/, href);
    }
    const script = await send(`${base}/app.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers['content-type'] ?? '', /^text\/javascript/);
  });

  test('POST /revive without the token header, or from a foreign origin, is 403 and writes nothing', async () => {
    const before = await snapshot(folder);
    for (const [what, headers] of refusedPosts(base, token)) {
      const reply = await send(`${base}/revive`, { method: 'POST', headers });
      assert.equal(reply.status, 403, what);
    }
    const get = await send(`${base}/revive`);
    assert.equal(get.status, 404, 'a GET revives nothing: /revive is not a page');
    // That nothing was started is proved with a command that never ends, below; here, that
    // the page still offers the revive and nothing was written.
    assert.deepEqual(await snapshot(folder), before, 'the transcripts are byte for byte the same');
    const page = await send(url);
    assert.match(page.body, /<button id="confirm" type="button">Confirm: revive 2 runs<\/button>/);
  });

  test('/run shows one run of the tree; any other path is 404, never opened', async () => {
    const home = await send(`${base}/`);
    // The tree page holds the tree and the plan, not the conversations: it stays small.
    assert.doesNotMatch(home.body, /<section class="run"/);
    const link = /<a href="(run\?path=[^"]*worker-call_s2\.jsonl)">/.exec(home.body);
    assert.ok(link, 'the tree links the worker to its page');
    const worker = await send(`${base}/${(link[1] as string).replaceAll('&amp;', '&')}`);
    assert.equal(worker.status, 200);
    assert.equal((worker.body.match(/<section class="run"/g) ?? []).length, 1);
    // A run's page puts its conversation first: the plan and Confirm are one link away.
    assert.doesNotMatch(worker.body, /id="confirm"|id="plan"/);
    assert.match(worker.body, /2 runs to revive: <a href="\.\/#revive">the plan, and Confirm<\/a>/);
    assert.match(worker.body, /write_file/);
    assert.match(worker.body, /in flight when the process died: no result/);
    // Linked both ways: the child to the run that started it, the parent's calls to children.
    const mainHref = `run?path=${encodeURIComponent(join(folder, 'runs', 'main.jsonl'))}`;
    assert.ok(
      worker.body.includes(
        `<li>started by <a href="${mainHref}">main “Main run”</a> with call <code>call_s2</code></li>`,
      ),
      'the child links the run that started it',
    );
    const main = await send(`${base}/${mainHref}`);
    const workerHref = (link[1] as string).replaceAll('&amp;', '&');
    assert.match(
      main.body,
      new RegExp(
        `spawn_agent</strong> <code>call_s2</code><div class="runs">child run: <a href="${workerHref.replace(/[?.]/g, '\\$&')}">worker-call_s2 “B”</a>`,
      ),
    );
    assert.match(
      main.body,
      /task_wait<\/strong> <code>call_w<\/code>.*<div class="runs">child runs: <a [^>]*>worker-call_s1 “A”<\/a> <span class="state state-finished">finished<\/span>, <a [^>]*>worker-call_s2 “B”<\/a>/,
    );
    for (const path of [
      join(folder, 'other', 'noticed.jsonl'),
      '/etc/passwd',
      'runs/main.jsonl',
      '../runs/main.jsonl',
      '',
    ]) {
      const reply = await send(`${base}/run?path=${encodeURIComponent(path)}`);
      assert.equal(reply.status, 404, path);
      assert.doesNotMatch(reply.body, /root:|Noticed/);
    }
  });

  test('in Chromium: the tree, filters, a run page and the plan; Confirm revives, the log streams, the page redraws itself', async () => {
    const browser = await launchChromium();
    const watch = new PageWatch();
    try {
      progress('opening the page');
      const page = await watch.open(browser, url, 20_000);

      const nav = (await page.locator('nav').textContent()) ?? '';
      assert.match(nav, /main “Main run” revivable · waiting on 2 children/);
      assert.match(
        nav,
        /worker-call_s2 “B” revivable · 1 call in flight · revivals 0\/3 · open calls 1 · [\d.]+ (B|KB) · resuming sends about \d+ tokens/,
      );
      const plan = (await page.locator('#plan').textContent()) ?? '';
      assert.match(plan, /1\. revive worker-call_s2 \(worker\)/);
      assert.match(plan, /2\. revive main \(main\)/);
      assert.match(
        plan,
        /answer write_file call_x \(side-effect\) as interrupted, outcome unknown — NOT retried/,
      );
      assert.match(plan, /Total: 2 runs to revive, about \d+ tokens/);
      // The plan as a table: each run, what each call will be answered, the tokens.
      const rows = page.locator('#plan-table tr.plan-run');
      assert.equal(await rows.count(), 2);
      assert.match(
        (await rows.nth(0).textContent()) ?? '',
        /worker-call_s2 \(worker\)revival 1 of 3write_file call_x: interrupted, outcome unknown — NOT retried \(side-effect\)\d+/,
      );
      assert.match(
        (await rows.nth(1).textContent()) ?? '',
        /main \(main\).*task_wait call_w: kept open for/,
      );
      // Times in the viewer's zone, the exact UTC time on hover.
      const made = page.locator('header time').first();
      assert.match((await made.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\dT[\d:.]+Z \(UTC\)$/);
      assert.doesNotMatch((await made.textContent()) ?? '', /UTC|T\d\d:/);
      await page.screenshot({ path: join(OUTPUT, 'before.png'), fullPage: true });

      // Filters by state, without script: the finished child stays, the revivable one goes,
      // and its parent stays because a run below it is finished.
      const finishedChild = page.locator('nav a', { hasText: FIXTURE.finishedChild });
      const interruptedChild = page.locator('nav a', { hasText: FIXTURE.interruptedChild });
      assert.equal(await interruptedChild.isVisible(), true);
      await page.check('#filter-finished');
      assert.equal(await interruptedChild.isVisible(), false);
      assert.equal(await finishedChild.isVisible(), true);
      assert.equal(await page.locator('nav a', { hasText: 'Main run' }).isVisible(), true);
      assert.equal(await rows.first().isVisible(), false, 'the plan follows the filter');
      await page.screenshot({ path: join(OUTPUT, 'filtered.png'), fullPage: true });
      await page.check('#filter-revivable');
      assert.equal(await rows.first().isVisible(), true);
      assert.equal(await finishedChild.isVisible(), false);
      assert.equal(await interruptedChild.isVisible(), true);
      await page.check('#filter-all');

      progress("opening the interrupted run's page");
      await interruptedChild.click();
      const call = page.locator('.part.call.interrupted', { hasText: 'write_file' });
      assert.match(
        (await call.textContent()) ?? '',
        new RegExp(`${FIXTURE.writeCall}in flight when the process died`),
      );
      assert.equal(await page.locator('section.run').count(), 1);
      await page.screenshot({ path: join(OUTPUT, 'run.png'), fullPage: true });
      await page.click('a[href="./"]');
      await page.waitForSelector('body[data-events="open"]');
      // Set by the test, not the page: it survives a redraw and is gone after a reload.
      await page.evaluate(() => {
        (globalThis as { notReloaded?: boolean }).notReloaded = true;
      });

      progress('clicking Confirm');
      await page.click('#confirm');
      await page
        .locator('#revive-status', { hasText: /revive ended/ })
        .waitFor({ timeout: 60_000 });
      const status = (await page.locator('#revive-status').textContent()) ?? '';
      assert.equal(status, 'revive ended (exit code 0)');
      assert.equal(await page.locator('#revive-status').getAttribute('class'), 'ended');
      const log = (await page.locator('#log').textContent()) ?? '';
      assert.match(log, /\[worker-call_s2\] says: B checked after the interruption/);
      assert.match(log, /\[main\] finished/);
      assert.match(log, /revive ended \(exit code 0\)/);
      // The ui's terminal says what it started, and how it ended.
      for (let waited = 0; !/ui: revive ended/.test(ui?.output.stderr ?? ''); waited += 100) {
        assert.ok(waited < 5000, `the terminal: ${ui?.output.stderr}`);
        await new Promise((done) => setTimeout(done, 100));
      }
      assert.match(
        ui?.output.stderr ?? '',
        /ui: revive started from the page \(pid \d+\): llm-agent revive --yes --agents agents\.ts -- runs\nui: revive ended \(exit code 0\)\n/,
      );
      progress('revive ended; waiting for the tree to redraw');
      await page.locator('nav', { hasText: /main “Main run” finished/ }).waitFor();
      const after = (await page.locator('nav').textContent()) ?? '';
      assert.match(after, /worker-call_s2 “B” finished · revivals 1\/3/);
      assert.doesNotMatch(after, /revivable/);
      assert.equal(await page.locator('#confirm').count(), 0, 'nothing left to confirm');
      assert.match((await page.locator('#plan').textContent()) ?? '', /Nothing to revive\./);
      // The log survived the redraw.
      assert.match((await page.locator('#log').textContent()) ?? '', /revive ended/);
      await page.screenshot({ path: join(OUTPUT, 'after.png'), fullPage: true });

      // A transcript appearing below the PATH: the server says so (tree-changed), and the page
      // redraws itself with the new run — the filter chosen kept, no reload.
      await page.check('#filter-finished');
      progress('adding a transcript; waiting for the page to show it');
      assert.equal(await page.locator('nav', { hasText: 'Noticed' }).count(), 0);
      await copyFile(join(folder, 'other', 'noticed.jsonl'), join(folder, 'runs', 'noticed.jsonl'));
      await page.locator('nav', { hasText: /noticed “Noticed” finished/ }).waitFor();
      assert.equal(
        await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded),
        true,
        'redrawn in place, not reloaded',
      );
      assert.equal(await page.isChecked('#filter-finished'), true, 'the filter chosen is kept');
      // A state the page did not have when it loaded filters too (its rule was there all along).
      await writeFile(join(folder, 'runs', 'broken.jsonl'), 'not a transcript\n');
      await page.locator('#filter-unreadable').waitFor();
      await page.check('#filter-unreadable');
      assert.equal(await page.locator('nav a', { hasText: 'broken' }).isVisible(), true);
      assert.equal(await page.locator('nav a', { hasText: 'Noticed' }).isVisible(), false);
      assert.equal(await page.locator('nav a', { hasText: 'Main run' }).isVisible(), false);
      await page.close();
    } finally {
      await browser.close();
    }
    assert.ok(watch.requests.length >= 6, `requests: ${watch.requests.join(', ')}`);
    watch.assertStayedHome(base);
    watch.assertPostedRevive(base);
    assertScreenshots(OUTPUT, ['before.png', 'filtered.png', 'run.png', 'after.png']);
  });

  test('SIGTERM stops the server (exit code 0)', async () => {
    await assertSigtermStops(ui);
  });
});

/*
 * The command a Confirm starts, replaced by one that records how it was started and then waits
 * until it is stopped: so a revive is certainly still running when the next POST arrives.
 */
const BLOCKER = `import { writeFileSync } from 'node:fs';
const out = process.env.BLOCKER_OUT;
process.on('SIGTERM', () => {
  writeFileSync(out + '.stopped', 'SIGTERM');
  process.exit(0);
});
writeFileSync(out, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2) }));
console.log('blocker started');
setInterval(() => undefined, 1000);
`;

/** Writes BLOCKER into `folder`: the file it writes, and the options making it the command. */
async function writeBlocker(
  folder: string,
): Promise<{ out: string } & Pick<UiServerOptions, 'env' | 'command'>> {
  await writeFile(join(folder, 'blocker.mjs'), BLOCKER);
  const out = join(folder, 'blocker.json');
  return {
    out,
    env: { ...process.env, BLOCKER_OUT: out },
    command: [process.execPath, join(folder, 'blocker.mjs')],
  };
}

/**
 * The server's event stream up to its first event `name`, after `action` runs (once the stream
 * is connected, so that nothing it causes is missed).
 */
function heard(base: string, name: string, action: () => Promise<unknown>): Promise<string> {
  return new Promise((done, fail) => {
    const stream = httpRequest(`${base}/events`, (response) => {
      let text = '';
      let acted = false;
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (!acted && text.includes(': connected')) {
          acted = true;
          action().catch(fail);
        }
        if (new RegExp(`event: ${name}\n(data: .*\n)+\n`).test(text)) {
          stream.destroy();
          done(text);
        }
      });
    });
    stream.on('error', (error) => {
      if (!/socket hang up|aborted/.test(String(error))) fail(error);
    });
    stream.setTimeout(20_000, () => fail(new Error(`no ${name} within 20 s`)));
    stream.end();
  });
}

describe('llm-agent ui: one command at a time', { timeout: 60_000 }, () => {
  test('refused POSTs start nothing; two POSTs at once start one revive (202 and 409); close() stops it; nothing to revive is 409', async () => {
    await inFixtureTree(async (folder) => {
      const { out, ...blocking } = await writeBlocker(folder);
      await serving({ folder, ...blocking }, async (server, base) => {
        for (const [what, headers] of refusedPosts(base, server.token)) {
          const reply = await send(`${base}/revive`, {
            method: 'POST',
            headers,
          });
          assert.equal(reply.status, 403, what);
        }
        // Had a refused POST started the command (which never ends by itself), both of these
        // would be 409.
        const replies = await Promise.all([postRevive(server), postRevive(server)]);
        assert.deepEqual(replies.map((reply) => reply.status).sort(), [202, 409]);
        assert.match(
          replies.find((reply) => reply.status === 409)?.body ?? '',
          /a revive is already running/,
        );
        // The one started is the revive of the tree, as the plan says.
        let started: { pid: number; argv: string[] } | undefined;
        for (let wait = 0; started === undefined && wait < 100; wait += 1) {
          started = await readFile(out, 'utf8').then(JSON.parse, () => undefined);
          if (started === undefined) await new Promise((done) => setTimeout(done, 100));
        }
        assert.ok(started, 'the command started');
        assert.deepEqual(started.argv, ['revive', '--yes', '--', 'runs']);
        assert.equal((await postRevive(server)).status, 409, 'still running: refused again');
        const page = await send(`${base}/`);
        assert.match(page.body, /<button id="confirm" type="button" disabled>/);
        assert.match(page.body, /<span id="revive-status">running…<\/span>/);

        // (close() is idempotent: serving's own close after this one does nothing more.)
        await server.close();
        assert.equal(await readFile(`${out}.stopped`, 'utf8'), 'SIGTERM');
        assert.throws(() => process.kill(started.pid, 0), { code: 'ESRCH' }, 'it is gone');
      });

      // A tree with nothing to revive: a POST starts nothing.
      await rm(out, { force: true });
      await serving({ folder, roots: ['other'], ...blocking }, async (quiet) => {
        const reply = await postRevive(quiet);
        assert.equal(reply.status, 409);
        assert.equal(reply.body, 'nothing to revive');
      });
      assert.equal(existsSync(out), false, 'the command was never started');
    });
  });
});

describe('llm-agent ui: how a command ended, and what was not read', { timeout: 60_000 }, () => {
  test('a revive that fails says so with what its exit code means; a clean one says exit code 0', async () => {
    await inFixtureTree(async (folder) => {
      for (const [code, line] of [
        [7, 'revive failed (exit code 7: another reviver holds the tree; nothing was written)'],
        [
          1,
          'revive failed (exit code 1: a revival or a revived run failed; the log above says which)',
        ],
        [0, 'revive ended (exit code 0)'],
      ] as const) {
        // Ends at once with the code given, as revive would.
        const command = [process.execPath, '-e', `console.log('ending'); process.exit(${code})`];
        await serving({ folder, command }, async (server, base) => {
          const text = await heard(base, 'done', async () => {
            const reply = await postRevive(server);
            assert.equal(reply.status, 202);
          });
          assert.match(text, /event: progress\ndata: ending\n/, 'the command really ran');
          const ok = code === 0;
          assert.ok(text.includes(`event: done\ndata: ${JSON.stringify({ line, ok })}\n`), text);
        });
      }
    });
  });

  test('the command a Confirm starts is shown the way the user ran llm-agent, quoted, so it pastes', async () => {
    await inFixtureTree(async (folder) => {
      await rename(join(folder, 'runs'), join(folder, 'my runs'));
      const command = [process.execPath, '-e', "console.log('one')"];
      const logged: string[] = [];
      const invocation = 'npx llm-agent-revival';
      const log = (line: string) => logged.push(line);
      await serving(
        { folder, roots: ['my runs'], command, invocation, log },
        async (server, base) => {
          const shown = "npx llm-agent-revival revive --yes -- 'my runs'";
          const home = await send(`${base}/`);
          assert.ok(home.body.includes(`<code>${escapeHtml(shown)}</code>`), home.body);
          const text = await heard(base, 'done', () => postRevive(server));
          assert.ok(text.includes(`event: progress\ndata: $ ${shown}\n`), text);
          assert.match(logged[0] ?? '', /^revive started from the page \(pid \d+\): /);
          assert.ok(logged[0]?.endsWith(`): ${shown}`), logged[0]);
        },
      );
    });
  });

  test('a page that connects later is sent the last command’s log; one that reconnects, only what it missed', async () => {
    await inFixtureTree(async (folder) => {
      const command = [process.execPath, '-e', "console.log('one'); console.log('two')"];
      await serving({ folder, command }, async (server, base) => {
        await heard(base, 'done', () => postRevive(server));
        // A new page: the whole log, ids in order, its end included.
        const late = await heard(base, 'done', async () => undefined);
        assert.deepEqual(
          [...late.matchAll(/id: (\d+)\nevent: (\w+)\ndata: (.*)\n/g)].map((m) => [
            Number(m[1]),
            m[2],
            m[2] === 'done' ? JSON.parse(m[3] as string).ok : m[3],
          ]),
          [
            [1, 'progress', '$ llm-agent revive --yes -- runs'],
            [2, 'progress', 'one'],
            [3, 'progress', 'two'],
            [4, 'done', true],
          ],
        );
        // A page whose stream dropped after id 2: only 3 and 4 again.
        const resumed = await new Promise<string>((done, fail) => {
          const stream = httpRequest(
            `${base}/events`,
            { headers: { 'X-LLM-Agent-Token': server.token, 'Last-Event-ID': '2' } },
            (response) => {
              let text = '';
              response.setEncoding('utf8').on('data', (chunk: string) => {
                text += chunk;
                if (text.includes('event: done')) {
                  stream.destroy();
                  done(text);
                }
              });
            },
          );
          stream.on('error', (error) => {
            if (!/socket hang up|aborted/.test(String(error))) fail(error);
          });
          stream.end();
        });
        assert.deepEqual(
          [...resumed.matchAll(/id: (\d+)/g)].map((m) => Number(m[1])),
          [3, 4],
        );
      });
    });
  });

  test('a command that cannot be started is a 500, and the next Confirm is not refused as busy', async () => {
    await inFixtureTree(async (folder) => {
      await serving({ folder, command: [join(folder, 'no-such-program')] }, async (server) => {
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const reply = await postRevive(server);
          assert.equal(reply.status, 500, reply.body);
          assert.equal(reply.body, 'the command could not be started');
        }
      });
    });
  });

  test('a Confirm still making its plan when the server closes starts nothing (503)', async () => {
    await inFixtureTree(async (folder) => {
      const { out, ...blocking } = await writeBlocker(folder);
      const files = fileUiSource(['runs'], folder);
      let planning: () => void = () => undefined;
      const planned = new Promise<void>((done) => {
        planning = done;
      });
      // The plan takes until the test has closed the server.
      const release = new Promise<void>((done) => setTimeout(done, 300));
      const server = await startUiServer({
        source: {
          ...files,
          async action(roots) {
            planning();
            await release;
            return files.action(roots);
          },
        },
        cwd: folder,
        port: 0,
        ...blocking,
      });
      const reply = postRevive(server);
      await planned;
      const closed = server.close();
      const answered = await reply;
      await closed;
      // Answered before the door shut, and nothing started: the server is gone, so nothing
      // can start later either.
      assert.equal(answered.status, 503, answered.body);
      assert.equal(answered.body, 'the server is stopping');
      assert.equal(existsSync(out), false, 'the command was never started');
    });
  });

  test('a run whose process dies while the page is open: the page is told, and shows it revivable', async () => {
    const folder = await temporaryFolder();
    const worker = await startSessionWorker();
    try {
      const path = join(folder, 'runs', 'r.jsonl');
      await mkdir(join(folder, 'runs'));
      const session = await Session.create(path, sessionMeta('r'));
      await session.appendDurable({
        type: 'message',
        role: 'user',
        content: [{ type: 'text', text: 'hi' }],
      });
      await session.close();
      await worker.send({ op: 'open', path });
      // Polled every 200 ms, and nothing of the file changes when its process dies: only the
      // poll, reading the locks, can tell.
      await serving({ folder, pollMs: 200 }, async (server, base) => {
        const stateOf = async () =>
          /class="state state-([a-z]+)"/.exec((await send(server.url)).body)?.[1];
        assert.equal(await stateOf(), 'running', 'the fault: a process holds the run');
        const size = (await stat(path)).size;
        const text = await heard(base, 'tree-changed', async () => {
          process.kill(worker.pid, 'SIGKILL');
        });
        assert.match(text, /event: tree-changed/);
        assert.equal((await stat(path)).size, size, 'not a byte of the file changed');
        assert.equal(await stateOf(), 'revivable');
      });
    } finally {
      await worker.stop().catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    }
  });

  test('Ctrl-C in the terminal reaches the ui, not its command: the command is stopped once, by the ui', async () => {
    await inFixtureTree(async (folder) => {
      const signals = join(folder, 'signals.txt');
      // Records every signal; ends on SIGTERM only (as revive ends at once on a second one).
      await writeFile(
        join(folder, 'command.mjs'),
        `import { appendFileSync } from 'node:fs';
for (const name of ['SIGINT', 'SIGTERM']) {
  process.on(name, () => {
    appendFileSync(${JSON.stringify(signals)}, name + '\\n');
    if (name === 'SIGTERM') process.exit(0);
  });
}
appendFileSync(${JSON.stringify(signals)}, '');
appendFileSync(${JSON.stringify(join(folder, 'command.pid'))}, String(process.pid));
setInterval(() => undefined, 1000);
`,
      );
      // The ui as a terminal runs it: the leader of a process group that Ctrl-C signals whole.
      await writeFile(
        join(folder, 'serve.ts'),
        `import { startUiServer } from ${JSON.stringify(join(REPO, 'src/ui/ui-server.ts'))};
import { fileUiSource } from ${JSON.stringify(join(REPO, 'src/ui/file-ui-source.ts'))};
const server = await startUiServer({
  source: fileUiSource(['runs'], ${JSON.stringify(folder)}),
  cwd: ${JSON.stringify(folder)},
  env: process.env,
  port: 0,
  command: [process.execPath, ${JSON.stringify(join(folder, 'command.mjs'))}],
});
process.on('SIGINT', async () => {
  console.log('ui got SIGINT');
  await server.close();
  process.exit(0);
});
console.log(server.port + ' ' + server.token);
`,
      );
      const ui = spawn(process.execPath, [join(folder, 'serve.ts')], {
        cwd: folder,
        detached: true,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      ui.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
      });
      const exited = new Promise<number | null>((done) => ui.on('exit', (code) => done(code)));
      try {
        for (let waited = 0; !out.includes('\n'); waited += 50) {
          assert.ok(waited < 15_000 && ui.exitCode === null, 'the ui never printed its address');
          await new Promise((done) => setTimeout(done, 50));
        }
        const [port, token] = (out.split('\n')[0] as string).split(' ');
        const posted = await postRevive({ port: Number(port), token: token as string });
        assert.equal(posted.status, 202);
        // The command has started once its (empty) record of signals exists.
        for (let waited = 0; !existsSync(signals); waited += 50) {
          assert.ok(waited < 10_000, 'the command never started');
          await new Promise((done) => setTimeout(done, 50));
        }
        process.kill(-(ui.pid as number), 'SIGINT');
        assert.equal(await exited, 0);
        assert.match(out, /ui got SIGINT/, 'the fault: Ctrl-C reached the ui’s process group');
        assert.equal(await readFile(signals, 'utf8'), 'SIGTERM\n', 'one signal, from the ui');
      } finally {
        if (ui.exitCode === null) process.kill(-(ui.pid as number), 'SIGKILL');
        // The command is in a group of its own: a failed test must not leave it behind.
        const pid = Number(await readFile(join(folder, 'command.pid'), 'utf8').catch(() => ''));
        if (pid > 0) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      }
    });
  });

  test('a folder below PATH that cannot be read is named on the page, as status names it', async () => {
    const folder = await temporaryFolder();
    try {
      const name = 'n'.repeat(200);
      // Deeper than the system's path limit (ENAMETOOLONG), which holds for root too.
      execFileSync('bash', [
        '-c',
        `mkdir -p "${folder}/runs" && cd "${folder}/runs" && for i in $(seq 1 25); do mkdir ${name} && cd ${name}; done && echo '{}' > deep.jsonl`,
      ]);
      assert.deepEqual(await readdir(join(folder, 'runs', name)), [name], 'the fault exists');
      await serving({ folder }, async (_server, base) => {
        const page = await send(`${base}/`);
        assert.equal(page.status, 200);
        assert.match(
          page.body,
          /<p class="halt">Not read: <code>[^<]*n{200}<\/code> \(ENAMETOOLONG\): the runs in it are not shown<\/p>/,
        );
      });
    } finally {
      execFileSync('rm', ['-rf', folder]);
    }
  });
});

describe('llm-agent ui: a hostile tree', { timeout: 60_000 }, () => {
  test('in Chromium: nothing of it runs or loads, on the tree page, on its run page, or after a redraw', async () => {
    const folder = await temporaryFolder();
    try {
      const root = await writeHostileTree(join(folder, 'hostile'));
      await serving({ folder, roots: ['hostile'] }, async (server, base) => {
        const browser = await launchChromium();
        try {
          const page = await browser.newPage();
          page.setDefaultTimeout(20_000);
          const watch = new PageWatch();
          watch.attach(page);
          let dialogs = 0;
          page.on('dialog', async (dialog) => {
            dialogs += 1;
            await dialog.dismiss();
          });
          const pwned = () =>
            page.evaluate(() => typeof (globalThis as { __pwned?: unknown }).__pwned);

          await page.goto(server.url);
          await page.waitForSelector('body[data-events="open"]');
          assert.match((await page.locator('nav').textContent()) ?? '', /safe\\u202etxt\.exe/);
          // The root's link carries its file name (a breakout attempt) only URL-encoded.
          await page.locator('nav a').first().click();
          await page.waitForURL(`${base}/run?path=${encodeURIComponent(root)}`);
          await page.waitForSelector('body[data-events="open"]');
          await page.locator('details').evaluateAll((all) => {
            for (const element of all) element.setAttribute('open', '');
          });
          const shown = (await page.locator('main').textContent()) ?? '';
          assert.ok(shown.includes(SCRIPT), 'the script is shown as text');
          assert.equal(await page.locator('script').count(), 1, 'only the page script');
          assert.equal(await page.locator('meta[name="llm-agent-token"]').count(), 1, 'one head');
          // The call in flight is named in the plan as it is, $-patterns and all.
          assert.ok(
            ((await page.locator('#revive').textContent()) ?? '').includes('2 runs to revive'),
            'a run page links the plan',
          );
          await page.goto(`${base}/#revive`);
          assert.ok(
            ((await page.locator('#plan').textContent()) ?? '').includes(
              `call_${SCRIPT}${DOLLARS}`,
            ),
          );
          await page.goBack();
          assert.equal(await page.locator('script[src="app.js"]').count(), 1);
          assert.equal(await page.locator('img, svg, iframe, link, object, embed').count(), 0);

          // A change to the tree: the page fetches and swaps in the new page, hostile text
          // included.
          const refreshed = page.locator('body[data-refreshed]');
          assert.equal(await refreshed.count(), 0);
          const later = new Date(Date.now() + 5000);
          await utimes(root, later, later);
          await refreshed.waitFor({ timeout: 20_000 });
          await page.locator('details').evaluateAll((all) => {
            for (const element of all) element.setAttribute('open', '');
          });
          assert.ok(((await page.locator('main').textContent()) ?? '').includes(SCRIPT));
          assert.equal(await page.locator('script').count(), 1, 'still only the page script');
          await page.screenshot({ path: join(OUTPUT, 'hostile.png'), fullPage: true });
          assert.equal(await pwned(), 'undefined', 'no payload ran');
          assert.equal(dialogs, 0);
          watch.assertStayedHome(base);
        } finally {
          await browser.close();
        }
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('llm-agent ui: file watching', { timeout: 60_000 }, () => {
  test('a watched folder removed and made again is watched again from the next check', async () => {
    await inFixtureTree(async (folder) => {
      const source = fileUiSource(['runs'], folder);
      let heardChanges = 0;
      const stop = source.watch?.(() => {
        heardChanges += 1;
      });
      assert.ok(stop !== undefined);
      const until = async (what: string, holds: () => boolean): Promise<void> => {
        for (let waited = 0; !holds(); waited += 20) {
          assert.ok(waited < 5000, `timed out waiting until ${what}`);
          await new Promise((done) => setTimeout(done, 20));
        }
      };
      try {
        await source.signature();
        await rm(join(folder, 'runs'), { recursive: true });
        await until('the removal is heard', () => heardChanges > 0);
        await mkdir(join(folder, 'runs'));
        await copyFile(
          join(folder, 'other', 'noticed.jsonl'),
          join(folder, 'runs', 'noticed.jsonl'),
        );
        await source.signature();
        const before = heardChanges;
        await writeFile(join(folder, 'runs', 'noticed.jsonl'), '\n', { flag: 'a' });
        await until('a change in the new folder is heard', () => heardChanges > before);
      } finally {
        stop();
        await source.close();
      }
    });
  });

  test('a change below a folder PATH, or in a transcript PATH’s children, is announced without waiting for the poll', async () => {
    await inFixtureTree(async (folder) => {
      for (const [given, change] of [
        [
          'runs',
          () =>
            copyFile(join(folder, 'other', 'noticed.jsonl'), join(folder, 'runs', 'noticed.jsonl')),
        ],
        [
          'runs/main.jsonl',
          async () => {
            const child = join(folder, 'runs', 'main.agents', `${FIXTURE.interruptedChild}.jsonl`);
            await writeFile(child, await readFile(child), { flag: 'a' });
          },
        ],
      ] as const) {
        // Polled once an hour: only the watch can announce the change within the test.
        await serving({ folder, roots: [given], pollMs: 3_600_000 }, async (_server, base) => {
          progress(`watching ${given}`);
          const text = await heard(base, 'tree-changed', change);
          assert.match(text, /event: tree-changed/, given);
        });
      }
    });
  });
});
