/**
 * `npm run docs:screenshots`: the screenshots of docs/ui.md, taken in Chromium
 * (`/usr/bin/chromium`, through playwright-core) of `llm-agent ui` on the demo's tree —
 *
 * - `docs/ui-screenshot.png`: the tree page of the demo left crashed
 *   (`demo --stop-after-crash`): the tree, the filters, the plan as a table, Confirm;
 * - `docs/ui-run-screenshot.png`: the page of its writer that died mid-`write_file`: the
 *   timeline (the death marked, the call in flight), then the conversation, the file it was
 *   writing as numbered text;
 * - `docs/ui-revived-screenshot.png`: the same run once the demo has revived it: the
 *   revival on its timeline, with how long the run was down.
 *
 * Each page is shown in a 1280-pixel-wide window, in the UTC zone and the en-US locale, so that
 * a run of the script on another machine takes the same pictures (but for the times).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { launchChromium } from '../test/cli/support/chromium.ts';
import { fileUiSource } from '../src/ui/file-ui-source.ts';
import { startUiServer } from '../src/ui/ui-server.ts';

const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;
const DOCS = new URL('../docs/', import.meta.url).pathname;

async function demo(folder: string, crashed: boolean): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [CLI, 'demo', folder, ...(crashed ? ['--stop-after-crash'] : [])],
    { env: { ...process.env, NO_COLOR: '1' } },
  );
}

/** The writer the demo killed mid-`write_file`: revivable, or revived since. */
async function writerOf(folder: string): Promise<string> {
  const children = (await readdir(join(folder, 'lead.agents'))).filter((name) =>
    name.endsWith('.jsonl'),
  );
  const source = fileUiSource([folder], folder);
  try {
    const { roots } = await source.tree();
    const writers = roots.flatMap((root) => root.children);
    const died =
      writers.find((node) => node.inspection.revivalsUsed > 0) ??
      writers.find((node) => node.state === 'revivable');
    if (died === undefined) throw new Error(`no writer among ${children.join(', ')}`);
    return died.path;
  } finally {
    await source.close();
  }
}

async function shoot(folder: string, shots: { file: string; path?: string }[]): Promise<void> {
  const server = await startUiServer({
    source: fileUiSource([folder], folder),
    cwd: folder,
    env: process.env,
    port: 0,
  });
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: 'UTC',
      locale: 'en-US',
    });
    const page = await context.newPage();
    for (const shot of shots) {
      const url =
        shot.path === undefined
          ? server.url
          : `${server.url}run?path=${encodeURIComponent(shot.path)}`;
      await page.goto(url);
      await page.waitForSelector('body[data-events="open"]');
      await page.screenshot({ path: join(DOCS, shot.file), fullPage: true });
      process.stdout.write(`wrote docs/${shot.file}\n`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

const work = await mkdtemp(join(tmpdir(), 'llm-agent-screenshots-'));
try {
  const crashed = join(work, 'crashed');
  await demo(crashed, true);
  const writer = await writerOf(crashed);
  await shoot(crashed, [
    { file: 'ui-screenshot.png' },
    { file: 'ui-run-screenshot.png', path: writer },
  ]);
  const revived = join(work, 'revived');
  await demo(revived, false);
  await shoot(revived, [{ file: 'ui-revived-screenshot.png', path: await writerOf(revived) }]);
} finally {
  await rm(work, { recursive: true, force: true });
}
