/*
 * `llm-agent ui --database URL --schema S`: the web view over the PostgreSQL store, served by
 * the real CLI in a child process. The store is made as a crash makes it: a worker process
 * runs a finished run and a parent whose child is inside a side-effecting tool, and is
 * SIGKILLed there; a supervisor (`worker --once`, policy ask) fences both dead runs and parks
 * them awaiting approval. Over plain HTTP: nothing without the token, both runs with their
 * states, a run's conversation, 404 for a run not in the store, no password anywhere. In
 * Chromium: the tree and the plan (the call in flight "NOT retried"); Confirm approves (the
 * rows say `approved`); a worker then revives both, the tool not run again, and the page
 * redraws itself until both read finished — every request to the server itself. SIGTERM stops
 * the ui (exit 0). Then, in-process: a store where nothing waits offers nothing to confirm,
 * and the command shown masks the password; the command line's mistakes are one line each.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { databaseUiSource } from '../../src/ui/database-ui-source.ts';
import { PostgresStore, type StoreRunRow } from '../../src/store/postgres/postgres-store.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { launchChromium } from './support/chromium.ts';
import { REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';
import {
  assertScreenshots,
  assertSigtermStops,
  type CliChild,
  PageWatch,
  printedUrl,
  send,
  startCli,
  uiAddress,
} from './support/ui-child.ts';

const OUTPUT = join(REPO, 'test-output', 'ui-database');

function progress(text: string): void {
  process.stderr.write(`# ui-database.test: ${text}\n`);
}

/*
 * The family of test/fleet: `lead` spawns a `fetcher` for a task starting "fetch" and joins
 * it; `quick` answers at once. The fetch is a side effect: it is recorded in ledger.txt and
 * never returns, so the worker is killed inside it.
 */
const AGENTS = `import { appendFileSync } from 'node:fs';
import { familyAgents } from ${JSON.stringify(join(REPO, 'test/fleet/support/family-agents.ts'))};

export default ({ cwd }) =>
  familyAgents(() => {
    appendFileSync(cwd + '/ledger.txt', 'fetch\\n');
    return new Promise(() => undefined);
  });
`;

/** Poll `check` every 100 ms until it holds, at most `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/**
 * `url` with `secret` as its password, when it has none and none comes from PGPASSWORD:
 * a server that trusts this connection ignores it, so the ui works with a URL holding a
 * secret the page must never show. Otherwise the URL's own password (if any) is the secret.
 */
function withSecret(url: string, secret: string): { url: string; secret: string | undefined } {
  const parsed = new URL(url);
  if (parsed.password !== '') return { url, secret: decodeURIComponent(parsed.password) };
  if ((process.env.PGPASSWORD ?? '') !== '' || parsed.hostname === '') {
    return { url, secret: undefined };
  }
  parsed.password = secret;
  return { url: parsed.toString(), secret };
}

// One server for the file (DATABASE_URL, or a throw-away cluster); each test a fresh schema.
let database: TestDatabase;
before(async () => {
  database = await testDatabase();
  progress(`PostgreSQL from ${database.source}`);
});
after(async () => {
  await database?.stop();
});

describe('llm-agent ui --database', { timeout: 240_000 }, () => {
  let schema = '';
  let store: PostgresStore;
  let folder = '';
  let databaseUrl = '';
  let secret: string | undefined;
  let ui: CliChild | undefined;
  const workers: ChildProcess[] = [];
  let url = '';
  let base = '';
  let childRun = '';

  const rows = async (): Promise<Map<string, StoreRunRow>> =>
    new Map((await store.runs()).map((row) => [row.run, row]));
  const ledger = async (): Promise<string> =>
    readFile(join(folder, 'ledger.txt'), 'utf8').catch(() => '');

  before(async () => {
    schema = await database.newSchema();
    ({ url: databaseUrl, secret } = withSecret(database.url, 'ui-test-hunter2'));
    if (secret === undefined) {
      // Said, not silent: the masking is then proved only by the in-process test below.
      progress(
        'no password can be put in this server’s URL: the page-level password checks are not made',
      );
    }
    await PostgresStore.migrate({ connectionString: database.url, schema });
    store = await PostgresStore.connect({ connectionString: database.url, schema });
    folder = await temporaryFolder();
    await mkdir(OUTPUT, { recursive: true });
    await writeFile(join(folder, 'agents.ts'), AGENTS);
    const target = ['--database', database.url, '--schema', schema];

    await store.submit(
      'hello',
      { agentId: 'hello', agentType: 'quick', label: 'hello', model: 'scripted' },
      'say hello',
    );
    await store.submit(
      'main',
      { agentId: 'main', agentType: 'lead', label: 'lead', model: 'scripted' },
      'fetch the page',
    );
    progress('a worker takes the runs; it is killed inside the fetch');
    const doomed = startCli(
      ['worker', ...target, '--agents', 'agents.ts', '--lease', '1000', '--poll', '100'],
      folder,
    );
    workers.push(doomed.child);
    await until(
      `the fetch started and hello finished (worker: ${doomed.output.stderr})`,
      async () => (await ledger()) !== '' && (await rows()).get('hello')?.status === 'finished',
    );
    doomed.child.kill('SIGKILL');
    assert.equal(await doomed.exited, 'SIGKILL');
    childRun = [...(await rows()).keys()].find((run) => run.startsWith('main.agents/')) ?? '';
    assert.match(childRun, /^main\.agents\/fetcher-/, 'the lead spawned its fetcher');
    progress('waiting for the leases to run out');
    await until('both leases ran out', async () => {
      const now = await rows();
      return now.get('main')?.leaseExpired === true && now.get(childRun)?.leaseExpired === true;
    });
    const supervise = await runCli(['worker', ...target, '--agents', 'agents.ts', '--once'], {
      cwd: folder,
    });
    assert.equal(supervise.code, 0, supervise.stderr);
    const parked = await rows();
    assert.deepEqual(
      [parked.get('main')?.status, parked.get(childRun)?.status, parked.get('hello')?.status],
      ['awaiting-approval', 'awaiting-approval', 'finished'],
      supervise.stderr,
    );

    progress('starting llm-agent ui --database URL --schema S');
    ui = startCli(['ui', '--database', databaseUrl, '--schema', schema], folder);
    // 20 s, not 15: the ui connects to the database before it listens.
    url = await printedUrl(ui, 20_000);
    progress(`serving at ${url}`);
    ({ base } = uiAddress(url));
  });

  after(async () => {
    for (const child of [...workers, ...(ui === undefined ? [] : [ui.child])]) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await store?.close();
    if (folder !== '') await rm(folder, { recursive: true, force: true });
  });

  test('over HTTP: nothing without the token; the tree, a run, 404 for a run not in the store; no password', async () => {
    for (const path of ['/', '/run?path=main', '/app.js', '/events']) {
      const reply = await send(`${new URL(base).origin}${path}`);
      assert.equal(reply.status, 403, path);
      assert.doesNotMatch(reply.body, /fetcher|<html/);
    }
    const home = await send(url);
    assert.equal(home.status, 200);
    const nav = /<nav[\s\S]*<\/nav>/.exec(home.body)?.[0] ?? '';
    assert.match(nav, /hello “hello”<\/a> <span class="state state-finished">finished<\/span>/);
    assert.match(
      nav,
      /main “lead”<\/a> <span class="state state-revivable">revivable<\/span> · awaiting approval: waiting on 1 child/,
    );
    assert.match(
      nav,
      /fetcher-[^<]*<\/a> <span class="state state-revivable">revivable<\/span> · awaiting approval: 1 call in flight/,
    );
    assert.match(home.body, /<button id="confirm" type="button">Confirm: approve 2 runs<\/button>/);
    assert.ok(
      home.body.includes(`--schema ${schema} --yes -- main ${childRun}</code>`),
      'the command Confirm runs',
    );
    if (secret !== undefined) {
      assert.ok(!home.body.includes(secret), 'the page never holds the password');
      assert.match(home.body, /<code>llm-agent revive --database [^<]*:\*\*\*@/);
    }

    const run = await send(`${base}/run?path=${encodeURIComponent(childRun)}`);
    assert.equal(run.status, 200);
    assert.equal((run.body.match(/<section class="run"/g) ?? []).length, 1);
    assert.match(run.body, /fetch the page/);
    assert.match(run.body, /in flight when the process died: no result/);
    if (secret !== undefined) assert.ok(!run.body.includes(secret));
    for (const path of ['nope', 'main.agents', '', '../main']) {
      const reply = await send(`${base}/run?path=${encodeURIComponent(path)}`);
      assert.equal(reply.status, 404, path);
    }
  });

  test('in Chromium: the tree and the plan; Confirm approves; a worker revives both; the page redraws itself to finished', async () => {
    const browser = await launchChromium();
    const watch = new PageWatch();
    try {
      progress('opening the page');
      const page = await watch.open(browser, url, 30_000);

      const nav = (await page.locator('nav').textContent()) ?? '';
      assert.match(nav, /hello “hello” finished/);
      assert.match(nav, /main “lead” revivable · awaiting approval: waiting on 1 child/);
      assert.match(nav, /fetcher-\S+ “fetcher” revivable · awaiting approval: 1 call in flight/);
      const plan = (await page.locator('#plan').textContent()) ?? '';
      assert.match(plan, /^Plan:\n {2}1\. revive main \(its worker died\)/);
      assert.ok(plan.includes(`2. revive ${childRun} (its worker died)`), plan);
      assert.match(
        plan,
        /answer fetch \S+ \(side-effect\) as interrupted, outcome unknown — NOT retried/,
      );
      // The parent's join is kept open for the child, not answered as interrupted.
      assert.ok(
        plan.includes(`open for ${childRun.slice('main.agents/'.length)}: their ends answer it`),
        plan,
      );
      assert.doesNotMatch(plan, /answer task_wait/);
      const section = (await page.locator('#revive').textContent()) ?? '';
      assert.match(section, /a worker then revives each run once/);
      assert.ok(
        section.includes(`--schema ${schema} --yes -- main ${childRun}`),
        `the command shown: ${section}`,
      );
      if (secret !== undefined) assert.ok(!section.includes(secret), 'no password on the page');
      await page.screenshot({ path: join(OUTPUT, 'before.png'), fullPage: true });

      progress("opening the fetcher's page");
      await page.locator('nav a', { hasText: 'fetcher-' }).click();
      const call = page.locator('.part.call.interrupted', { hasText: 'fetch' });
      assert.match((await call.textContent()) ?? '', /in flight when the process died/);
      await page.screenshot({ path: join(OUTPUT, 'run.png'), fullPage: true });
      await page.click('a[href="./"]');
      await page.waitForSelector('body[data-events="open"]');
      await page.evaluate(() => {
        (globalThis as { notReloaded?: boolean }).notReloaded = true;
      });

      progress('clicking Confirm');
      await page.click('#confirm');
      await page
        .locator('#revive-status', { hasText: /approve ended/ })
        .waitFor({ timeout: 60_000 });
      assert.equal(
        (await page.locator('#revive-status').textContent()) ?? '',
        'approve ended (exit code 0)',
      );
      const log = (await page.locator('#log').textContent()) ?? '';
      assert.match(log, /Approved main: the next worker of this store to look revives it/);
      assert.ok(
        log.includes(`Approved ${childRun}: the next worker of this store to look revives it`),
        log,
      );
      if (secret !== undefined) assert.ok(!log.includes(secret), 'no password in the log');
      const approved = await rows();
      assert.deepEqual(
        [approved.get('main'), approved.get(childRun)].map((row) => [row?.status, row?.owner]),
        [
          ['approved', null],
          ['approved', null],
        ],
        'the database says both are approved, nobody holds them',
      );
      await page.locator('nav', { hasText: /approved, waiting for a worker/ }).waitFor();
      assert.equal(await page.locator('#confirm').count(), 0, 'nothing left to confirm');
      assert.equal((await page.locator('#plan').textContent()) ?? '', 'Nothing to approve.\n');
      await page.screenshot({ path: join(OUTPUT, 'approved.png'), fullPage: true });

      progress('starting a worker; waiting for the page to show both runs finished');
      const worker = startCli(
        [
          'worker',
          '--database',
          database.url,
          '--schema',
          schema,
          '--agents',
          'agents.ts',
          '--poll',
          '100',
        ],
        folder,
      );
      workers.push(worker.child);
      try {
        await page
          .locator('nav', { hasText: /main “lead” finished/ })
          .waitFor({ timeout: 60_000 })
          .catch((error: unknown) => {
            throw new Error(`${String(error)}\nworker: ${worker.output.stderr}`);
          });
        const after = (await page.locator('nav').textContent()) ?? '';
        assert.match(after, /fetcher-\S+ “fetcher” finished · revivals 1\/3/);
        assert.match(after, /main “lead” finished · revivals 1\/3/);
        assert.doesNotMatch(after, /revivable|approved/);
        assert.equal(
          await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded),
          true,
          'redrawn in place, not reloaded',
        );
        await page.screenshot({ path: join(OUTPUT, 'after.png'), fullPage: true });
      } finally {
        worker.child.kill('SIGTERM');
        assert.equal(await worker.exited, 130, worker.output.stderr);
      }
      assert.match(worker.output.stderr, /main\.agents\/fetcher-\S+: revived/);
      assert.equal(
        await ledger(),
        'fetch\n',
        'the fetch was answered as interrupted, never run again',
      );
      // As the plan said: the parent's join was answered by the revived child's end.
      const parent = await store.read('main');
      assert.ok(parent.ok);
      const joined = parent.records
        .filter(isKnownRecord)
        .flatMap((record) =>
          record.type === 'message' && record.role === 'tool'
            ? record.content.filter(
                (part) => part.type === 'tool-result' && part.toolName === 'task_wait',
              )
            : [],
        );
      assert.equal(joined.length, 1, 'one answer for the one join');
      assert.match(JSON.stringify(joined[0]), /fetch interrupted/);
      await page.close();
    } finally {
      await browser.close();
    }
    assert.ok(watch.requests.length >= 5, `requests: ${watch.requests.join(', ')}`);
    watch.assertStayedHome(base);
    watch.assertPostedRevive(base);
    assertScreenshots(OUTPUT, ['before.png', 'run.png', 'approved.png', 'after.png']);
  });

  test('SIGTERM stops the ui (exit code 0)', async () => {
    await assertSigtermStops(ui);
  });
});

describe('databaseUiSource', { timeout: 60_000 }, () => {
  test('a store where nothing awaits approval: nothing to confirm; the command shown masks the password', async () => {
    const schema = await database.newSchema();
    await PostgresStore.migrate({ connectionString: database.url, schema });
    const store = await PostgresStore.connect({ connectionString: database.url, schema });
    // The source's own `url` is only what Confirm passes on: the store is already connected.
    const given = 'postgres://bob:hunter2@db.example:5432/runs?sslmode=require';
    const source = databaseUiSource(store, { url: given, schema });
    try {
      await store.submit(
        'queued-1',
        { agentId: 'queued-1', agentType: 'quick', label: 'q', model: 'scripted' },
        'later',
      );
      const { roots, notRead } = await source.tree();
      assert.deepEqual(notRead, []);
      assert.deepEqual(
        roots.map((node) => [node.path, node.state]),
        [['queued-1', 'queued']],
      );
      const action = await source.action(roots);
      assert.equal(action.runs, 0);
      assert.equal(action.verb, 'approve');
      assert.equal(action.text, 'Nothing to approve.\n');
      assert.deepEqual(action.argv, [
        'revive',
        '--database',
        given,
        '--schema',
        schema,
        '--yes',
        '--',
      ]);
      assert.equal(
        action.shown,
        `revive --database 'postgres://bob:***@db.example:5432/runs?sslmode=require' --schema ${schema} --yes --`,
      );
      const records = await source.records(roots[0] as (typeof roots)[number]);
      assert.ok('records' in records && records.records.length === 2);
      const missing = await source.records({
        ...(roots[0] as (typeof roots)[number]),
        path: 'nope',
      });
      assert.ok('error' in missing && /#nope: no such run$/.test(missing.error), String(missing));

      const queryPassword = databaseUiSource(store, {
        url: 'postgres://db.example/runs?password=hunter2&sslmode=require',
      });
      const shown = (await queryPassword.action([])).shown ?? '';
      assert.equal(
        shown,
        "revive --database 'postgres://db.example/runs?password=***&sslmode=require' --yes --",
      );
      assert.ok(!shown.includes('hunter2'));

      // A change to a run changes the signature the server polls.
      const before = await source.signature();
      assert.equal(await source.signature(), before, 'nothing changed, the same signature');
      assert.ok(await store.mark('queued-1', 'queued', 'capped'));
      assert.notEqual(await source.signature(), before);
    } finally {
      await source.close();
    }
  });
});

describe('llm-agent ui --database: mistakes', { timeout: 60_000 }, () => {
  test('PATHs or --agents with --database, --schema without it: one line, exit 2; a schema not migrated: exit 1; a port taken: exit 2', async () => {
    const folder = await temporaryFolder();
    const unmigrated = await database.newSchema();
    try {
      for (const [args, said] of [
        [['ui', 'runs', '--database', database.url], /ui: give PATHs or --database URL, not both/],
        [['ui', '--database', database.url, '--agents', 'agents.ts'], /ui: --agents is for files/],
        [['ui', '--schema', 'x'], /ui: --schema goes with --database URL/],
      ] as const) {
        const result = await runCli([...args], { cwd: folder });
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, said);
        assert.equal(result.stdout, '', 'nothing served');
      }
      const refused = await runCli(['ui', '--database', database.url, '--schema', unmigrated], {
        cwd: folder,
      });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /ui: cannot use the database: .*llm-agent db migrate/);
      assert.equal(refused.stdout, '');

      // A port taken: said in one line; the store connected for it is closed again.
      await PostgresStore.migrate({ connectionString: database.url, schema: unmigrated });
      const taken = createServer();
      await new Promise<void>((done) => taken.listen(0, '127.0.0.1', () => done()));
      try {
        const port = String((taken.address() as AddressInfo).port);
        const busy = await runCli(
          ['ui', '--database', database.url, '--schema', unmigrated, '--port', port],
          { cwd: folder },
        );
        assert.equal(busy.code, 2, busy.stderr);
        assert.match(
          busy.stderr,
          new RegExp(`ui: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`),
        );
      } finally {
        await new Promise((done) => taken.close(done));
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
