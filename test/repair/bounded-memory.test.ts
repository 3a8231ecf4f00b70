import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

/*
 * `repair` reads a session in bounded memory: detection and planning stream the file in chunks,
 * pass after pass, and never hold it, so a repair's memory is a small multiple of the longest
 * line — not of the file, nor of its number of lines. (It held the file once plus 8 bytes a
 * line, and made each line when read: 36 MB of tiny lines took 140 MB more than a repair of a
 * small session, 96 MB in twelve lines of 8 MB took 170 MB more.)
 *
 * Each command runs in a fresh process, with its V8 heap capped at 32 MB (four times the 8 MB
 * line: a repair that held more live JSON than that would die), which reports its peak RSS at
 * exit (test/repair/support/report-peak-rss.ts). Its growth over the same command on a small
 * session (the process loading the TypeScript sources) must stay within 8 times the longest
 * line plus 16 MB: the numbers measured are 2 to 10 MB for the tiny lines and 60 to 63 MB for
 * the huge ones (under 8 times the line), while the code before this bound took 149 MB and 173 MB —
 * a bound of the file's size, 36 MB and 96 MB, would have let either through, so the test fails
 * on that code. `--dry-run`, `--scan` and the repair itself (which also writes the backup,
 * copied in chunks) each are held to it.
 *
 * Claude Code and pi (v2, v3) follow a tree of ids, and the repair with them: per message line
 * (or pi entry) it keeps the ids, the line number and a kind; Gemini CLI's records replace one
 * another by id, and the repair keeps the id and a number per message: about 130 bytes
 * measured, stated as at most 200 (docs/repair.md "Memory"). The last test holds that with the
 * heap alone: 16 MB plus 200 bytes a line. The code before, which kept every message's JSON,
 * died there (heap out of memory, at 56 MB for 200 000 Claude Code messages and at 76 MB for
 * 300 000 pi entries).
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(REPO, 'node_modules/.bin/node');
const CLI = join(REPO, 'src/cli/main.ts');
const REPORT = join(REPO, 'test/repair/support/report-peak-rss.ts');
const MB = 1000 * 1000;
const HEAP_MB = 32;
const CLAUDE = join(REPO, 'test/fixtures/foreign/claude-code/killed-one-call.jsonl');

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-repair-memory-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Run the CLI in a child with a capped heap; its exit code, output and peak RSS in bytes. */
function run(
  args: string[],
  heapMb = HEAP_MB,
): Promise<{ code: number; stdout: string; peakRss: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [`--max-old-space-size=${heapMb}`, '--import', REPORT, CLI, 'repair', ...args],
      { maxBuffer: 4 * 1024 * 1024, timeout: 240_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const peak = /peak-rss-kib=(\d+)/.exec(stderr);
        if (peak === null) {
          reject(
            new Error(
              `repair ${args.join(' ')}: no peak reported (${error?.message}) ${stderr.slice(-2000)}`,
            ),
          );
          return;
        }
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, peakRss: Number(peak[1]) * 1024 });
      },
    );
  });
}

/** A Claude Code session cut off in a call, with `padding` between its second and third line. */
async function session(name: string, padding: string): Promise<string> {
  const lines = (await readFile(CLAUDE, 'utf8')).split('\n').filter((line) => line !== '');
  const text = `${lines.slice(0, 2).join('\n')}\n${padding}${lines.slice(2).join('\n')}\n`;
  const sub = join(folder, name);
  await mkdir(sub);
  const path = join(sub, 'session.jsonl');
  await writeFile(path, text);
  const hourAgo = new Date(Date.now() - 3_600_000);
  await utimes(path, hourAgo, hourAgo);
  return path;
}

/** Every command on `path`, held to the bound; the file's longest line is `longest` bytes. */
async function heldToBound(path: string, longest: number, baseline: number): Promise<void> {
  const bound = 8 * longest + 16 * MB;
  const dry = await run(['--dry-run', path]);
  const scan = await run(['--scan', join(path, '..')]);
  const repair = await run([path]);
  for (const [name, outcome] of [
    ['--dry-run', dry],
    ['--scan', scan],
    ['repair', repair],
  ] as const) {
    const growth = outcome.peakRss - baseline;
    console.log(
      `${name}: peak ${(outcome.peakRss / MB).toFixed(0)} MB, ${(growth / MB).toFixed(0)} MB over a small session (bound ${(bound / MB).toFixed(0)} MB)`,
    );
    assert.ok(growth <= bound, `${name}: ${growth} bytes over the baseline, bound ${bound}`);
  }
  // They really read it all: the call on the session's last lines is the one answered.
  assert.match(dry.stdout, /would repair .*1 interrupted call/);
  assert.match(scan.stdout, /session\.jsonl/);
  assert.equal(repair.code, 0, repair.stdout);
  assert.match(repair.stdout, /repaired .*answered 1 interrupted call/);
}

let measured: number | undefined;
/** The peak of `--dry-run` on the small session itself: the process, loading its sources. */
async function baseline(): Promise<number> {
  if (measured !== undefined) return measured;
  const small = await session('small', '');
  const { peakRss, stdout } = await run(['--dry-run', small]);
  assert.match(stdout, /would repair/);
  measured = peakRss;
  return peakRss;
}

test('36 MB of tiny lines: --dry-run, --scan and repair grow by a few times the longest line, not by the file', async () => {
  const base = await baseline();
  const tiny = '{"type":"x"}\n';
  const path = await session('tiny', tiny.repeat(Math.floor((36 * MB) / tiny.length)));
  const longest = Math.max(
    ...(await readFile(CLAUDE, 'utf8')).split('\n').map((line) => Buffer.byteLength(line)),
  );
  await heldToBound(path, longest, base);
});

test('96 MB in twelve lines of 8 MB: --dry-run, --scan and repair grow by a few times the longest line, not by the file', async () => {
  const base = await baseline();
  const huge = `${JSON.stringify({ type: 'x', data: 'a'.repeat(8 * MB) })}\n`;
  const path = await session('huge', huge.repeat(12));
  await heldToBound(path, Buffer.byteLength(huge), base);
});

/** A file of these lines, an hour old (not live), in a folder of its own. */
async function sessionOf(name: string, lines: Iterable<string>): Promise<string> {
  const sub = join(folder, name);
  await mkdir(sub);
  const path = join(sub, 'session.jsonl');
  await writeFile(path, [...lines].join(''));
  const hourAgo = new Date(Date.now() - 3_600_000);
  await utimes(path, hourAgo, hourAgo);
  return path;
}

function* claudeMessages(count: number): Generator<string> {
  let parentUuid: string | null = null;
  for (let index = 0; index < count; index += 1) {
    const uuid = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    const role = index % 2 === 0 ? 'user' : 'assistant';
    yield `${JSON.stringify({
      parentUuid,
      isSidechain: false,
      type: role,
      message: { role, content: 'hi' },
      uuid,
      timestamp: '2026-01-01T00:00:00.000Z',
      sessionId: '7c0d3c2e-8a11-4b5e-9f00-000000000001',
      version: '2.1.197',
      cwd: '/tmp/work',
    })}\n`;
    parentUuid = uuid;
  }
}

function* piEntries(count: number): Generator<string> {
  yield '{"type":"session","version":3,"id":"01a23f58-61ea-76e8-810d-d8922849b6f4","timestamp":"2026-12-04T04:38:06.570Z","cwd":"/tmp/work"}\n';
  let parentId: string | null = null;
  for (let index = 0; index < count; index += 1) {
    const id = index.toString(16).padStart(8, '0');
    yield `${JSON.stringify({ type: 'label', id, parentId, timestamp: '2026-12-04T04:38:06.578Z' })}\n`;
    parentId = id;
  }
}

function* geminiMessages(count: number): Generator<string> {
  yield `${JSON.stringify({ sessionId: 's', projectHash: 'p', startTime: '2026-01-01T00:00:00Z', lastUpdated: '2026-01-01T00:00:00Z', kind: 'main' })}\n`;
  for (let index = 0; index < count; index += 1) {
    const id = `9a3b1c2d-0000-4000-8000-${String(index).padStart(12, '0')}`;
    const type = index % 2 === 0 ? 'user' : 'gemini';
    yield `${JSON.stringify({ id, timestamp: '2026-01-01T00:00:00Z', type, content: 'hi' })}\n`;
  }
}

test('200 000 Claude Code messages, 300 000 pi entries, 300 000 Gemini CLI messages: planned within a heap of 16 MB and 200 bytes a line', async () => {
  for (const [name, count, lines, answer] of [
    ['claude-messages', 200_000, claudeMessages(200_000), /line 200000\) calls no tool/],
    ['pi-entries', 300_000, piEntries(300_000), /no assistant message on the current branch/],
    ['gemini-messages', 300_000, geminiMessages(300_000), /the last turn was not cut off/],
  ] as const) {
    const path = await sessionOf(name, lines);
    const heapMb = Math.ceil(16 + (200 * count) / (1024 * 1024));
    const outcome = await run(['--dry-run', path], heapMb);
    console.log(`${name}: ${count} lines planned within a heap of ${heapMb} MB`);
    // It read them all and walked the whole tree: the verdict is about the last line.
    assert.match(outcome.stdout, answer, `${name} (heap ${heapMb} MB): ${outcome.stdout}`);
  }
});
