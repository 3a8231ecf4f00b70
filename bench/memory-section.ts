/**
 * The bench's `memory` section (issue 15's memory goals): peak RSS of `inspect`, `status` and
 * `revive` on hostile inputs, each in its own process — 60 MB of short junk lines after a
 * run's last good record, and a 200 MB torn (unterminated) last line. Goals: ≤ 150 MB each.
 * Runnable alone: `npm run bench -- --only memory`. Each figure is the peak resident memory of
 * the whole process — Node and the compiled library included (about 50 MB before any work).
 *
 * @example
 * const section = await memorySection('bench/data', log);
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Session } from '../src/transcript/session.ts';

const MB = 1000 * 1000;
const ROOT = new URL('..', import.meta.url).pathname;
const CHILD = join(ROOT, 'bench/memory-child.mjs');
// The CLI as shipped (bench/run.ts builds dist/ first), or its sources when asked.
const CLI = join(
  ROOT,
  process.env.BENCH_REVIVAL_SOURCE === '1' ? 'src/cli/main.ts' : 'dist/cli/main.js',
);

/** One measured operation. */
export interface MemoryRow {
  input: string;
  op: 'inspect' | 'status' | 'revive';
  /** Peak RSS of the whole process, in bytes; null when it could not be measured. */
  peakRssBytes: number | null;
  /** What the operation answered (a reason or a state), to show it did the work. */
  answer: string;
  goalBytes: number | null;
}

/** The section's figures. */
export interface MemorySection {
  rows: MemoryRow[];
  /** Set when the section was measured on its own and merged into a full run's results. */
  measuredAt?: string;
  commit?: { id: string; dirty: boolean };
  loadAverage?: { start: number; end?: number };
  note?: string;
}

const GOAL = 150 * MB;

/**
 * Build the two inputs (reused when present) and measure each operation on them.
 *
 * @example
 * const { rows } = await memorySection('bench/data', console.error);
 */
export async function memorySection(
  dataFolder: string,
  log: (line: string) => void,
): Promise<MemorySection> {
  const folder = join(dataFolder, 'memory');
  await mkdir(folder, { recursive: true });
  const junk = join(folder, 'junk-60mb.jsonl');
  const torn = join(folder, 'torn-200mb.jsonl');
  await ensureInput(junk, 60 * MB, 'junk');
  await ensureInput(torn, 200 * MB, 'torn');
  const rows: MemoryRow[] = [];
  const cases: [string, string, MemoryRow['op'], boolean][] = [
    ['60 MB of junk lines', junk, 'inspect', true],
    ['60 MB of junk lines', junk, 'status', true],
    ['60 MB of junk lines', junk, 'revive', true],
    ['200 MB torn last line', torn, 'inspect', false],
    ['200 MB torn last line', torn, 'status', false],
    ['200 MB torn last line', torn, 'revive', true],
  ];
  for (const [input, source, op, judged] of cases) {
    // Revive changes the file (it repairs a torn tail): it gets a copy.
    const path = op === 'revive' ? `${source}.copy.jsonl` : source;
    if (op === 'revive') {
      await copyFile(source, path);
    }
    const row = measure(input, path, op);
    row.goalBytes = judged ? GOAL : null;
    if (op === 'revive') await removeCopies(folder);
    log(
      `  ${input}, ${op}: ${row.peakRssBytes === null ? 'not measured' : `${(row.peakRssBytes / MB).toFixed(0)} MB peak RSS`} (${row.answer})`,
    );
    rows.push(row);
  }
  return { rows };
}

function measure(input: string, path: string, op: MemoryRow['op']): MemoryRow {
  if (op === 'status') {
    // The CLI as a person runs it; /usr/bin/time reports the peak RSS in KiB.
    const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI, 'status', path], {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    const kib = Number(run.stderr.trim().split('\n').at(-1));
    const answer = /unreadable|damaged|revivable|running/.exec(run.stdout)?.[0] ?? 'no answer';
    return {
      input,
      op,
      peakRssBytes: Number.isFinite(kib) && run.error === undefined ? kib * 1024 : null,
      answer,
      goalBytes: null,
    };
  }
  const run = spawnSync(process.execPath, [CHILD, op, path], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  try {
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as {
      answer: string;
      maxRssBytes: number;
    };
    return { input, op, peakRssBytes: report.maxRssBytes, answer: report.answer, goalBytes: null };
  } catch {
    const why = run.signal ?? run.stderr.trim().split('\n').at(-1) ?? `exit ${run.status}`;
    return { input, op, peakRssBytes: null, answer: `failed: ${why}`, goalBytes: null };
  }
}

async function removeCopies(folder: string): Promise<void> {
  const { readdir } = await import('node:fs/promises');
  for (const name of await readdir(folder)) {
    if (name.includes('.copy.jsonl')) await rm(join(folder, name), { force: true });
  }
}

/**
 * A run that died with a call in flight (meta, a user turn, an assistant turn asking for a
 * tool, its dispatch), then `bytes` of hostile bytes: short junk lines, or one unterminated
 * line as a crash mid-write of a huge tool result would leave.
 */
async function ensureInput(path: string, bytes: number, kind: 'junk' | 'torn'): Promise<void> {
  const existing = await stat(path).catch(() => null);
  if (existing !== null && existing.size > bytes) return;
  await rm(path, { force: true });
  const session = await Session.create(
    path,
    { agentId: 'main', agentType: 'main', label: 'main', model: 'bench:memory' },
    { durability: 'none' },
  );
  await session.append({ type: 'message', role: 'user', content: [{ type: 'text', text: 'Go' }] });
  await session.append({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'tool-call', callId: 'c1', toolName: 'write_file', input: {} }],
  });
  await session.append({
    type: 'tool-dispatched',
    callId: 'c1',
    toolName: 'write_file',
    inputDigest: `sha256:${'0'.repeat(64)}`,
    idempotency: 'side-effect',
  });
  await session.close();
  const file = await open(path, 'a');
  try {
    let written = 0;
    if (kind === 'torn') {
      const head = `{"v":1,"seq":5,"type":"message","at":"2026-01-01T00:00:00.000Z","role":"tool","content":[{"type":"tool-result","callId":"c1","toolName":"write_file","isError":false,"output":"`;
      await file.write(head);
      written += head.length;
    }
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    while (written < bytes) {
      const chunk = Buffer.alloc(Math.min(1024 * 1024, bytes - written), 0x61);
      if (kind === 'junk') {
        // Lines of 8 to 72 bytes, printable junk, each ended by a newline.
        for (let at = 0; at < chunk.length; ) {
          const length = 8 + Math.floor(random() * 64);
          for (let index = 0; index < length && at + index < chunk.length; index++) {
            chunk[at + index] = 0x21 + Math.floor(random() * 90);
          }
          at += length;
          if (at < chunk.length) chunk[at] = 0x0a;
          at += 1;
        }
        chunk[chunk.length - 1] = 0x0a;
      }
      await file.write(chunk);
      written += chunk.length;
    }
  } finally {
    await file.close();
  }
}
