import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import type { RecordBody, TailRepair, TranscriptRecord } from '../../src/transcript/records.ts';
import type { SessionMeta } from '../../src/transcript/session.ts';

/*
 * Building transcripts byte for byte without a Session, and looking at folders before and
 * after, for tests of the transcript layer and anything built on it.
 */

/** A transcript built in memory: its lines (newline included) and their concatenation. */
export interface BuiltTranscript {
  bytes: Buffer;
  lines: Buffer[];
  records: TranscriptRecord[];
  /** Byte offset where each line starts; `offsets[lines.length]` is the total length. */
  offsets: number[];
}

/** The fixed clock tests stamp records with: 2026-01-01T00:00:00Z plus one second per call. */
export function steppingClock(start = Date.UTC(2026, 0, 1)): () => Date {
  let now = start;
  return () => {
    const date = new Date(now);
    now += 1000;
    return date;
  };
}

/**
 * Encode bodies as consecutive records (seq from `firstSeq`), exactly as a Session would write
 * them with the same clock.
 *
 * @example
 * const built = buildTranscript([metaBody(), userMessage('hi')]);
 * fileSystem.writeFile('/t.jsonl', built.bytes);
 */
export function buildTranscript(
  bodies: RecordBody[],
  options: { firstSeq?: number; clock?: () => Date; tailRepair?: TailRepair } = {},
): BuiltTranscript {
  const clock = options.clock ?? steppingClock();
  const lines: Buffer[] = [];
  const records: TranscriptRecord[] = [];
  const offsets: number[] = [0];
  let seq = options.firstSeq ?? 0;
  for (const body of bodies) {
    const header: Parameters<typeof encodeLine>[0] = { v: 1, seq, at: clock().toISOString() };
    if (seq === (options.firstSeq ?? 0) && options.tailRepair !== undefined) {
      header.tailRepair = options.tailRepair;
    }
    const line = encodeLine(header, body);
    lines.push(line.bytes);
    records.push(line.record);
    offsets.push((offsets.at(-1) ?? 0) + line.bytes.length);
    seq += 1;
  }
  return { bytes: Buffer.concat(lines), lines, records, offsets };
}

/** The fields of a `session-meta` record, as Session.create takes them. */
export function sessionMeta(agentId = 'main'): SessionMeta {
  return { agentId, agentType: 'main', label: agentId, model: 'test:model' };
}

/** A `session-meta` body. */
export function metaBody(agentId = 'main'): RecordBody {
  return { type: 'session-meta', ...sessionMeta(agentId) };
}

/** A message body with one text part. */
export function textMessage(role: 'system' | 'user' | 'assistant', text: string): RecordBody {
  return { type: 'message', role, content: [{ type: 'text', text }] };
}

/**
 * A plausible run of `count` records after a session-meta: user and assistant turns with tool
 * calls, dispatches, results and settles; `textBytes` sets the size of each text.
 */
export function sampleBodies(count: number, textBytes = 40, tag = 'x'): RecordBody[] {
  const bodies: RecordBody[] = [metaBody()];
  const filler = (index: number) =>
    `${tag}${index} ${'é'.repeat(2)}${'lorem ipsum '.repeat(Math.ceil(textBytes / 12))}`.slice(
      0,
      Math.max(1, textBytes),
    );
  for (let index = 0; bodies.length < count; index++) {
    const callId = `call-${tag}-${index}`;
    const cycle: RecordBody[] = [
      textMessage('user', filler(index)),
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: filler(index + 1) },
          { type: 'tool-call', callId, toolName: 'read_file', input: { path: `f${index}.txt` } },
        ],
      },
      {
        type: 'tool-dispatched',
        callId,
        toolName: 'read_file',
        inputDigest: `sha256:${'0'.repeat(64)}`,
        idempotency: 'read-only',
      },
      {
        type: 'message',
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId,
            toolName: 'read_file',
            output: filler(index + 2),
            isError: false,
          },
        ],
      },
      { type: 'tool-settled', callId, status: 'completed' },
    ];
    for (const body of cycle) if (bodies.length < count) bodies.push(body);
  }
  return bodies;
}

/** A fresh folder under the system's temporary folder; remove it with {@link removeFolder}. */
export function makeTempFolder(prefix = 'llm-agent-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Remove a folder and everything in it. */
export function removeFolder(path: string): Promise<void> {
  return rm(path, { recursive: true, force: true });
}

/**
 * Every entry under `folder` (recursively) with its kind, mode, size and sha256, as one sorted
 * map: compare two snapshots to prove that nothing was created, removed or changed.
 *
 * @example
 * const before = await snapshotFolder(folder);
 * await peek(join(folder, 'a.jsonl'));
 * assert.deepEqual(await snapshotFolder(folder), before);
 */
export async function snapshotFolder(folder: string): Promise<Map<string, string>> {
  // Synchronous calls: a snapshot of thousands of small files is quicker without the thread
  // pool's round trips.
  const entries = new Map<string, string>();
  const visit = (relative: string): void => {
    const names = readdirSync(join(folder, relative)).sort();
    for (const name of names) {
      const path = join(relative, name);
      const info = statSync(join(folder, path));
      if (info.isDirectory()) {
        entries.set(path, `folder ${(info.mode & 0o777).toString(8)}`);
        visit(path);
      } else {
        const hash = createHash('sha256')
          .update(readFileSync(join(folder, path)))
          .digest('hex');
        entries.set(path, `file ${(info.mode & 0o777).toString(8)} ${info.size} ${hash}`);
      }
    }
  };
  visit('');
  return entries;
}
