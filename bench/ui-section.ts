import { rm } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { showCommand } from '../src/cli/show-command.ts';
import { createStyle } from '../src/render/terminal-style.ts';
import { fileUiSource } from '../src/ui/file-ui-source.ts';
import { startUiServer, type UiServer } from '../src/ui/ui-server.ts';
import type { UiSource } from '../src/ui/ui-source.ts';
import { launchChromium } from '../test/cli/support/chromium.ts';
import { median, timeProcess } from './run-child.ts';
import { addExtraRun, type UiTreeManifest, uiTree } from './ui-corpus.ts';
import { interactiveFigures, type UiInteractive } from './ui-interactive.ts';

/** Some timings in milliseconds, and their median. */
export interface Timed {
  ms: number[];
  medianMs: number;
}

/** One page the server sent: how long to its whole body, and its size as sent and gzipped. */
export interface TimedPage extends Timed {
  /** The unmeasured first request (the server's first page after start-up, for `/`). */
  firstMs: number;
  bytes: number;
  /** What a compressing proxy would send (node:zlib gzip, default level): the server sends `bytes`. */
  gzipBytes: number;
}

/** What Chromium saw of the tree page, or why it could not look. */
export type UiBrowser =
  | {
      ok: true;
      chromium: string;
      /** From the navigation entry, relative to its start: each navigation, and medians. */
      responseEnd: Timed;
      domContentLoaded: Timed;
      load: Timed;
      /** From `page.goto` to `body[data-events="open"]` (the page's event stream connected). */
      eventsOpen: Timed;
      /** The navigation's and every resource's `transferSize` (headers included), summed. */
      transferBytes: number;
      /** The same with `encodedBodySize` (bodies only). */
      encodedBodyBytes: number;
      resources: number;
      domElements: number;
      /** Clicking `#filter-revivable` then forcing style and layout, timed in the page. */
      filterClick: Timed;
      /** The same as Playwright drives it: `page.check` and a forced layout, from the bench. */
      filterCheck: Timed;
      /** The tree's runs (`nav li`) still shown once the filter is on. */
      shownAfterFilter: number;
      shownBeforeFilter: number;
      /**
       * A run copied into the folder until the page has swapped in the new tree
       * (`body[data-refreshed]`, stamped by the page with `Date.now()`).
       */
      redraw: Timed;
      /** From the copy to the server's `tree-changed` event (seen by a client of the bench's own). */
      redrawEvent: Timed;
      /** The same redraw with the source's file watching off: only the poll finds the change. */
      redrawPollOnly: Timed;
      redrawPollOnlyEvent: Timed;
    }
  | { ok: false; reason: string };

/** The `ui` section's figures: `llm-agent ui` on a generated 1,000-run tree. */
export interface UiSection {
  manifest: UiTreeManifest;
  generatedMs: number;
  /** How often the server checks the runs for a change, and how soon after a watch event. */
  pollMs: number;
  watchDelayMs: number;
  /** GET `/`: the tree, the plan and the activity log, no conversation. */
  tree: TimedPage;
  appJsBytes: number;
  /** GET `/run?path=…` of a run of the median size, and of the largest run. */
  medianRun: TimedPage;
  largestRun: TimedPage;
  /** `llm-agent show --html ROOT`: the same tree with every conversation inline. */
  showHtml: {
    /** As a process (`node src/cli/main.ts show --html ROOT`), start-up included. */
    process: Timed;
    /** The command in this process (modules loaded). */
    command: Timed;
    bytes: number;
    gzipBytes: number;
  };
  browser: UiBrowser;
  /**
   * The tree page, the largest run's page (first and last) and a 48 MiB run's page in
   * Chromium: until each is interactive, cold and warm (bench/ui-interactive.ts).
   */
  interactive?: UiInteractive;
  /** Set when the section was measured on its own and merged into a full run's results. */
  measuredAt?: string;
  commit?: { id: string; dirty: boolean };
  loadAverage?: { start: number; end?: number };
  note?: string;
}

const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;
/** The server's default poll and watch delay (src/ui/change-announcer.ts). */
const POLL_MS = 1000;
const WATCH_DELAY_MS = 100;
/** Measured runs of each figure, after one unmeasured. */
const RUNS = 7;
const SLOW_RUNS = 3;
/** Measured redraws, after one unmeasured: each starts at a different point of the poll's second. */
const REDRAW_RUNS = 5;

function timed(ms: number[]): Timed {
  return { ms, medianMs: median(ms) };
}

/** GET a path (after the token): the time to the whole body, and the body. */
async function fetchPage(server: UiServer, path: string): Promise<{ ms: number; body: Buffer }> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${server.port}/${server.token}${path}`);
  const body = Buffer.from(await response.arrayBuffer());
  const ms = performance.now() - started;
  if (response.status !== 200) {
    throw new Error(`GET ${path}: ${response.status} ${body.toString('utf8').slice(0, 200)}`);
  }
  return { ms, body };
}

async function timePage(server: UiServer, path: string, runs: number): Promise<TimedPage> {
  const first = await fetchPage(server, path);
  const ms: number[] = [];
  let body = first.body;
  for (let run = 0; run < runs; run += 1) {
    const fetched = await fetchPage(server, path);
    ms.push(fetched.ms);
    body = fetched.body;
  }
  return {
    ...timed(ms),
    firstMs: first.ms,
    bytes: body.length,
    gzipBytes: gzipSync(body).length,
  };
}

/** `show --html ROOT` in this process: its time, and the page it printed. */
async function showInProcess(root: string): Promise<{ ms: number; page: Buffer }> {
  const chunks: Buffer[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  const started = performance.now();
  const code = await showCommand.run([root, '--html'], {
    stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: {},
    cwd: process.cwd(),
    out: createStyle(false),
    err: createStyle(false),
  });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`show --html ${root} exited ${code}`);
  return { ms, page: Buffer.concat(chunks) };
}

/**
 * The server's event stream as a client of the bench's own: resolves `next()` when the next
 * `tree-changed` event arrives, with the time it arrived (`performance.now()`).
 */
function treeEvents(server: UiServer): { next(): Promise<number>; close(): void } {
  let waiting: ((at: number) => void) | undefined;
  let rest = '';
  const request = get(
    {
      host: '127.0.0.1',
      port: server.port,
      path: `/${server.token}/events`,
    },
    (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const at = performance.now();
        const frames = (rest + chunk).split('\n\n');
        rest = frames.pop() ?? '';
        for (const frame of frames) {
          if (!frame.startsWith('event: tree-changed')) continue;
          const done = waiting;
          waiting = undefined;
          done?.(at);
        }
      });
    },
  );
  request.on('error', () => undefined);
  return {
    next: () =>
      new Promise((resolve) => {
        waiting = resolve;
      }),
    close: () => request.destroy(),
  };
}

/** The source without its file watching: the server finds a change by its poll alone. */
function pollOnly(source: UiSource): UiSource {
  const { watch: _watch, ...rest } = source;
  return rest;
}

/** The page's document, as the functions run in Chromium see it (the bench has no DOM types). */
interface PageDocument {
  body: { offsetHeight: number; getAttribute(name: string): string | null };
  getElementById(id: string): { click(): void } | null;
  querySelectorAll(selector: string): {
    length: number;
    [index: number]: { offsetParent: unknown };
  };
  getElementsByTagName(name: string): { length: number };
}
interface PageEntry {
  transferSize: number;
  encodedBodySize: number;
  responseEnd: number;
  domContentLoadedEventEnd: number;
  loadEventEnd: number;
}

async function browserFigures(
  dataFolder: string,
  folder: string,
  manifest: UiTreeManifest,
  log: (line: string) => void,
): Promise<UiBrowser> {
  const browser = await launchChromium();
  const servers: UiServer[] = [];
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const cwd = process.cwd();
    const server = await startUiServer({
      source: fileUiSource([folder], cwd),
      cwd,
      env: process.env,
      port: 0,
    });
    servers.push(server);
    log(`  Chromium ${browser.version()}: ${RUNS + 1} navigations to the tree page`);
    const responseEnd: number[] = [];
    const domContentLoaded: number[] = [];
    const load: number[] = [];
    const eventsOpen: number[] = [];
    let transferBytes = 0;
    let encodedBodyBytes = 0;
    let resources = 0;
    let domElements = 0;
    for (let run = 0; run <= RUNS; run += 1) {
      const started = performance.now();
      await page.goto(server.url);
      await page.waitForSelector('body[data-events="open"]');
      const opened = performance.now() - started;
      const seen = await page.evaluate(() => {
        const document = (globalThis as unknown as { document: PageDocument }).document;
        const timing = performance as unknown as { getEntriesByType(type: string): PageEntry[] };
        const [navigation] = timing.getEntriesByType('navigation');
        const loaded = timing.getEntriesByType('resource');
        const entries = [...(navigation === undefined ? [] : [navigation]), ...loaded];
        return {
          responseEnd: navigation?.responseEnd ?? Number.NaN,
          domContentLoaded: navigation?.domContentLoadedEventEnd ?? Number.NaN,
          load: navigation?.loadEventEnd ?? Number.NaN,
          transfer: entries.reduce((sum, entry) => sum + entry.transferSize, 0),
          encoded: entries.reduce((sum, entry) => sum + entry.encodedBodySize, 0),
          resources: loaded.length,
          elements: document.getElementsByTagName('*').length,
        };
      });
      if (run === 0) continue;
      responseEnd.push(seen.responseEnd);
      domContentLoaded.push(seen.domContentLoaded);
      load.push(seen.load);
      eventsOpen.push(opened);
      transferBytes = seen.transfer;
      encodedBodyBytes = seen.encoded;
      resources = seen.resources;
      domElements = seen.elements;
    }

    log('  filtering by state: revivable, then all again');
    const shown = () =>
      page.evaluate(() => {
        const items = (
          globalThis as unknown as { document: PageDocument }
        ).document.querySelectorAll('nav li');
        let count = 0;
        for (let index = 0; index < items.length; index += 1) {
          if (items[index]?.offsetParent !== null) count += 1;
        }
        return count;
      });
    const shownBeforeFilter = await shown();
    const click = (id: string) =>
      page.evaluate((filter) => {
        const document = (globalThis as unknown as { document: PageDocument }).document;
        const started = performance.now();
        document.getElementById(filter)?.click();
        void document.body.offsetHeight;
        return performance.now() - started;
      }, id);
    const filterClick: number[] = [];
    const filterCheck: number[] = [];
    let shownAfterFilter = 0;
    for (let run = 0; run <= RUNS; run += 1) {
      const clicked = await click('filter-revivable');
      if (run === 0) shownAfterFilter = await shown();
      await click('filter-all');
      const started = performance.now();
      await page.check('#filter-revivable');
      await page.evaluate(() => {
        void (globalThis as unknown as { document: PageDocument }).document.body.offsetHeight;
      });
      const checked = performance.now() - started;
      await click('filter-all');
      if (run === 0) continue;
      filterClick.push(clicked);
      filterCheck.push(checked);
    }

    const redrawOn = async (on: UiServer, label: string) => {
      if (on !== server) {
        await page.goto(on.url);
        await page.waitForSelector('body[data-events="open"]');
      }
      const events = treeEvents(on);
      const redraw: number[] = [];
      const event: number[] = [];
      try {
        for (let run = 0; run <= REDRAW_RUNS; run += 1) {
          log(`  redraw ${label}: ${run === 0 ? 'unmeasured' : `${run}/${REDRAW_RUNS}`}`);
          // Spread over the poll's period, so the figures are not all taken at one phase of it.
          await new Promise((done) => setTimeout(done, (run * POLL_MS) / (REDRAW_RUNS + 1)));
          const before = await page.getAttribute('body', 'data-refreshed');
          const path = join(folder, `late-${run}.jsonl`);
          const changed = events.next();
          const wroteAt = Date.now();
          const started = performance.now();
          await addExtraRun(dataFolder, manifest, path);
          const eventAt = await changed;
          await page.waitForFunction(
            (previous) =>
              (globalThis as unknown as { document: PageDocument }).document.body.getAttribute(
                'data-refreshed',
              ) !== previous,
            before,
          );
          const stamp = Number(await page.getAttribute('body', 'data-refreshed'));
          // The page's own stamp (Date.now() when it swapped the tree in), not when the
          // bench noticed it.
          if (run > 0) {
            redraw.push(stamp - wroteAt);
            event.push(eventAt - started);
          }
          // Back as it was: the run removed, and that redraw waited for.
          const again = await page.getAttribute('body', 'data-refreshed');
          await rm(path);
          await page.waitForFunction(
            (previous) =>
              (globalThis as unknown as { document: PageDocument }).document.body.getAttribute(
                'data-refreshed',
              ) !== previous,
            again,
          );
        }
      } finally {
        events.close();
      }
      return { redraw: timed(redraw), event: timed(event) };
    };
    const watched = await redrawOn(server, 'with file watching');
    const polled = await startUiServer({
      source: pollOnly(fileUiSource([folder], cwd)),
      cwd,
      env: process.env,
      port: 0,
    });
    servers.push(polled);
    const unwatched = await redrawOn(polled, 'by the poll alone');
    return {
      ok: true,
      chromium: browser.version(),
      responseEnd: timed(responseEnd),
      domContentLoaded: timed(domContentLoaded),
      load: timed(load),
      eventsOpen: timed(eventsOpen),
      transferBytes,
      encodedBodyBytes,
      resources,
      domElements,
      filterClick: timed(filterClick),
      filterCheck: timed(filterCheck),
      shownBeforeFilter,
      shownAfterFilter,
      redraw: watched.redraw,
      redrawEvent: watched.event,
      redrawPollOnly: unwatched.redraw,
      redrawPollOnlyEvent: unwatched.event,
    };
  } finally {
    for (const server of servers) await server.close();
    await browser.close();
    for (let run = 0; run <= REDRAW_RUNS; run += 1) {
      await rm(join(folder, `late-${run}.jsonl`), { force: true });
    }
  }
}

/**
 * `llm-agent ui` on a generated 1,000-run tree (bench/ui-corpus.ts), the server in this
 * process (`startUiServer` over `fileUiSource`, from src/): GET `/`, `/app.js`, and the run
 * pages of a median-size and of the largest run, each once unmeasured then {@link RUNS} times;
 * `show --html` of the same tree for comparison (as a process and in-process,
 * {@link SLOW_RUNS} times after one unmeasured); then the tree page in Chromium — navigation
 * timing and bytes transferred, a filter click, and redraws after a run appears in the folder.
 *
 * @example
 * const section = await uiSection('bench/data', console.error);
 */
export async function uiSection(
  dataFolder: string,
  log: (line: string) => void,
): Promise<UiSection> {
  const { folder, manifest, generatedMs } = await uiTree(dataFolder, 1000, log);
  const absolute = join(process.cwd(), folder);
  log(
    `  tree: ${manifest.count} runs (${manifest.children} children, ${manifest.grandchildren} grandchildren), ` +
      `${(manifest.bytes / 1048576).toFixed(0)} MiB` +
      (generatedMs > 0 ? ` (generated in ${(generatedMs / 1000).toFixed(1)} s)` : ' (reused)'),
  );
  const cwd = process.cwd();
  const server = await startUiServer({
    source: fileUiSource([folder], cwd),
    cwd,
    env: process.env,
    port: 0,
  });
  let tree: TimedPage;
  let appJsBytes: number;
  let medianRun: TimedPage;
  let largestRun: TimedPage;
  try {
    log(`  GET / (${RUNS + 1} times)`);
    tree = await timePage(server, '/', RUNS);
    appJsBytes = (await fetchPage(server, '/app.js')).body.length;
    const runPath = (path: string) => `/run?path=${encodeURIComponent(join(absolute, path))}`;
    log(`  GET /run of a median-size run (${manifest.median.bytes} bytes)`);
    medianRun = await timePage(server, runPath(manifest.median.path), RUNS);
    log(`  GET /run of the largest run (${manifest.largest.bytes} bytes)`);
    largestRun = await timePage(server, runPath(manifest.largest.path), RUNS);
  } finally {
    await server.close();
  }
  log(
    `  / ${tree.medianMs.toFixed(0)} ms, ${tree.bytes} bytes (${tree.gzipBytes} gzipped); ` +
      `/run median ${medianRun.medianMs.toFixed(0)} ms, largest ${largestRun.medianMs.toFixed(0)} ms`,
  );

  const root = join(folder, manifest.root);
  log(`  show --html of the same tree as a process (${SLOW_RUNS + 1} times)`);
  const processMs: number[] = [];
  let processBytes = 0;
  for (let run = 0; run <= SLOW_RUNS; run += 1) {
    const timedRun = await timeProcess([CLI, 'show', root, '--html']);
    if (timedRun.exitCode !== 0) throw new Error(`show --html: ${timedRun.stderr}`);
    processBytes = timedRun.stdoutBytes;
    if (run > 0) processMs.push(timedRun.ms);
  }
  log(`  show --html in-process (${SLOW_RUNS + 1} times)`);
  const commandMs: number[] = [];
  let page: Buffer = Buffer.alloc(0);
  for (let run = 0; run <= SLOW_RUNS; run += 1) {
    const shown = await showInProcess(root);
    page = shown.page;
    if (run > 0) commandMs.push(shown.ms);
  }
  if (page.length !== processBytes) {
    log(
      `  note: show --html printed ${processBytes} bytes as a process, ${page.length} in-process`,
    );
  }
  const showHtml = {
    process: timed(processMs),
    command: timed(commandMs),
    bytes: page.length,
    gzipBytes: gzipSync(page).length,
  };
  page = Buffer.alloc(0);
  log(
    `  show --html ${showHtml.command.medianMs.toFixed(0)} ms in-process, ${showHtml.bytes} bytes: ` +
      `/ is ${(showHtml.bytes / tree.bytes).toFixed(0)}× smaller and ${(showHtml.command.medianMs / tree.medianMs).toFixed(0)}× faster`,
  );

  log('  the tree page in Chromium');
  let browser: UiBrowser;
  try {
    browser = await browserFigures(dataFolder, folder, manifest, log);
  } catch (error) {
    browser = { ok: false, reason: String(error).split('\n')[0] ?? 'failed' };
    log(`  Chromium: ${browser.reason}`);
  }
  log('  the pages in Chromium until interactive, each on a fresh server (its first visit cold)');
  const interactive = await interactiveFigures(dataFolder, folder, manifest, RUNS, log);
  return {
    manifest,
    generatedMs,
    interactive,
    pollMs: POLL_MS,
    watchDelayMs: WATCH_DELAY_MS,
    tree,
    appJsBytes,
    medianRun,
    largestRun,
    showHtml,
    browser,
  };
}
