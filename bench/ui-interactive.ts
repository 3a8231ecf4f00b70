import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileUiSource } from '../src/ui/file-ui-source.ts';
import { startUiServer } from '../src/ui/ui-server.ts';
import { Session } from '../src/transcript/session.ts';
import { launchChromium } from '../test/cli/support/chromium.ts';
import { median } from './run-child.ts';
import type { UiTreeManifest } from './ui-corpus.ts';

/**
 * One page of the ui as Chromium opens it: interactive is the navigation's
 * `domContentLoadedEventEnd`, from its start — the page parsed and its script (at the end of
 * `<body>`) run, so that a click is answered.
 */
export interface InteractivePage {
  name: string;
  /** The first navigation after the server started: its render worker cold, nothing cached. */
  coldMs: number;
  /** The navigations after it. */
  ms: number[];
  medianMs: number;
  /** The HTML's size as sent (`encodedBodySize`), and the page's elements. */
  bytes: number;
  domElements: number;
}

/** What {@link interactiveFigures} measured, or why it could not. */
export type UiInteractive =
  | {
      ok: true;
      pages: InteractivePage[];
      /** Set when measured on its own (`node bench/ui-interactive.ts`) and merged into results. */
      measuredAt?: string;
      note?: string;
    }
  | { ok: false; reason: string };

const BIG = 48 * 1024 * 1024;

/** A finished run whose one tool call returned 48 MiB (one line), in a folder of its own. */
async function bigRun(dataFolder: string): Promise<string> {
  const folder = join(dataFolder, 'ui-big');
  const path = join(folder, 'big.jsonl');
  const size = await stat(path).then(
    (found) => found.size,
    () => 0,
  );
  if (size > BIG) return folder;
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const session = await Session.create(path, {
    agentId: 'big',
    agentType: 'main',
    label: 'A 48 MiB tool result',
    model: 'bench:scripted',
  });
  const append = (body: Parameters<Session['appendDurable']>[0]) => session.appendDurable(body);
  await append({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: 'read the log' }],
  });
  await append({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'tool-call', callId: 'c1', toolName: 'read_file', input: { path: 'x.log' } }],
  });
  const output = 'x'.repeat(BIG);
  await append({
    type: 'message',
    role: 'tool',
    content: [{ type: 'tool-result', callId: 'c1', toolName: 'read_file', output, isError: false }],
  });
  await append({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'done' }] });
  await session.close();
  return folder;
}

interface Target {
  name: string;
  folder: string;
  /** After the token: `''` for the tree, `run?path=…` for a run. */
  path: string;
}

/** The page's document and navigation entry, as the function run in Chromium sees them. */
interface Seen {
  interactive: number;
  bytes: number;
  elements: number;
}

async function measure(target: Target, runs: number, log: (line: string) => void) {
  const cwd = process.cwd();
  const server = await startUiServer({
    source: fileUiSource([target.folder], cwd),
    cwd,
    env: process.env,
    port: 0,
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    const times: number[] = [];
    let last: Seen = { interactive: 0, bytes: 0, elements: 0 };
    for (let run = 0; run <= runs; run += 1) {
      await page.goto(`${server.url}${target.path}`);
      last = await page.evaluate(() => {
        const timing = performance as unknown as {
          getEntriesByType(
            type: string,
          ): { domContentLoadedEventEnd: number; encodedBodySize: number }[];
        };
        const [navigation] = timing.getEntriesByType('navigation');
        const document = (
          globalThis as unknown as {
            document: { getElementsByTagName(name: string): { length: number } };
          }
        ).document;
        return {
          interactive: navigation?.domContentLoadedEventEnd ?? Number.NaN,
          bytes: navigation?.encodedBodySize ?? 0,
          elements: document.getElementsByTagName('*').length,
        };
      });
      times.push(last.interactive);
    }
    const [coldMs, ...ms] = times as [number, ...number[]];
    log(
      `  ${target.name}: interactive ${median(ms).toFixed(0)} ms median, ${coldMs.toFixed(0)} ms cold`,
    );
    return {
      name: target.name,
      coldMs,
      ms,
      medianMs: median(ms),
      bytes: last.bytes,
      domElements: last.elements,
    };
  } finally {
    await browser.close();
    await server.close();
  }
}

/**
 * The ui's pages in Chromium, each on a server started for it (so that its first navigation
 * is cold): the 1,000-run tree's page, its largest run's page and that run's last page (where
 * the "jump to where it stopped" link goes), and the page of a run holding a 48 MiB tool
 * result. `runs` navigations after the cold one.
 *
 * @example
 * const figures = await interactiveFigures('bench/data', 'bench/data/ui-1000', manifest, 7, console.error);
 */
export async function interactiveFigures(
  dataFolder: string,
  folder: string,
  manifest: UiTreeManifest,
  runs: number,
  log: (line: string) => void,
): Promise<UiInteractive> {
  try {
    const absolute = join(process.cwd(), folder);
    const largest = `run?path=${encodeURIComponent(join(absolute, manifest.largest.path))}`;
    const big = await bigRun(dataFolder);
    const targets: Target[] = [
      { name: `the tree page (${manifest.count.toLocaleString('en-US')} runs)`, folder, path: '' },
      { name: 'the largest run’s page', folder, path: largest },
      {
        name: 'the largest run, where it stopped (its last page)',
        folder,
        path: `${largest}&page=1000000`,
      },
      {
        name: 'a run with a 48 MiB tool result',
        folder: big,
        path: `run?path=${encodeURIComponent(join(process.cwd(), big, 'big.jsonl'))}`,
      },
    ];
    const pages: InteractivePage[] = [];
    for (const target of targets) pages.push(await measure(target, runs, log));
    return { ok: true, pages };
  } catch (error) {
    const reason = String(error).split('\n')[0] ?? 'failed';
    log(`  interactive: ${reason}`);
    return { ok: false, reason };
  }
}

/**
 * `node bench/ui-interactive.ts [NOTE]`: these figures alone, on the tree the ui section uses,
 * merged into bench/results.json (its `ui.interactive`, stamped with when, the load average and
 * NOTE) and docs/performance.md — the rest of the ui section as it was measured.
 */
async function measureAlone(note: string | undefined): Promise<void> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const { loadavg } = await import('node:os');
  const { spawnSync } = await import('node:child_process');
  const { uiTree } = await import('./ui-corpus.ts');
  const { judgeGoals, markdownReport, updatePerformanceDoc } = await import('./report.ts');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const load = loadavg()[0] ?? 0;
  const { folder, manifest } = await uiTree('bench/data', 1000, log);
  const measured = await interactiveFigures('bench/data', folder, manifest, 7, log);
  if (!measured.ok) throw new Error(measured.reason);
  const results = JSON.parse(await readFile('bench/results.json', 'utf8'));
  results.ui.interactive = {
    ...measured,
    measuredAt: new Date().toISOString(),
    note: `1-minute load average ${load.toFixed(1)} at the start on ${
      (await import('node:os')).cpus().length
    } cores${note === undefined ? '' : `; ${note}`}`,
  };
  results.goals = judgeGoals(results);
  await writeFile('bench/results.json', `${JSON.stringify(results, null, 2)}\n`);
  await updatePerformanceDoc('docs/performance.md', markdownReport(results));
  for (const file of ['bench/results.json', 'docs/performance.md']) {
    spawnSync('node_modules/.bin/biome', ['format', '--write', file], { stdio: 'ignore' });
  }
  log('merged into bench/results.json and docs/performance.md');
}

if (import.meta.main) await measureAlone(process.argv[2]);
