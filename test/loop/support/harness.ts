import assert from 'node:assert/strict';
import { join } from 'node:path';
import { z } from 'zod';
import type { LoopEvent, ToolDefinition } from '../../../src/loop/types.ts';
import { type FileSystem, nodeFileSystem } from '../../../src/transcript/file-system.ts';
import { readRecords } from '../../../src/transcript/read-records.ts';
import type { TranscriptRecord } from '../../../src/transcript/records.ts';
import { Session } from '../../../src/transcript/session.ts';
import { makeTempFolder, removeFolder, steppingClock } from '../../support/transcripts.ts';

/** One entry of the shared log: what reached the file system, and what tools did, in order. */
export type LogEntry =
  | { kind: 'write'; text: string }
  | { kind: 'sync' }
  | { kind: 'effect'; callId: string; what: string };

/**
 * A FileSystem that passes everything to the real one and logs each write (its text) and each
 * sync of a transcript, into a log that the test's tools write their side effects into too: the
 * one timeline that proves "the dispatch was synced before the side effect began".
 */
export class RecordingFileSystem implements FileSystem {
  readonly log: LogEntry[];
  readonly #inner: FileSystem;
  readonly #transcripts = new Set<number>();

  constructor(log: LogEntry[] = [], inner: FileSystem = nodeFileSystem) {
    this.log = log;
    this.#inner = inner;
  }

  async open(path: string, mode: Parameters<FileSystem['open']>[1]) {
    const fd = await this.#inner.open(path, mode);
    if (path.endsWith('.jsonl') && (mode === 'append' || mode === 'create')) {
      this.#transcripts.add(fd);
    }
    return fd;
  }
  async write(fd: number, bytes: Uint8Array) {
    const written = await this.#inner.write(fd, bytes);
    if (this.#transcripts.has(fd)) {
      this.log.push({ kind: 'write', text: Buffer.from(bytes).toString('utf8') });
    }
    return written;
  }
  async sync(fd: number) {
    await this.#inner.sync(fd);
    if (this.#transcripts.has(fd)) this.log.push({ kind: 'sync' });
  }
  read(fd: number, buffer: Uint8Array, position: number) {
    return this.#inner.read(fd, buffer, position);
  }
  truncate(fd: number, length: number) {
    return this.#inner.truncate(fd, length);
  }
  size(fd: number) {
    return this.#inner.size(fd);
  }
  close(fd: number) {
    this.#transcripts.delete(fd);
    return this.#inner.close(fd);
  }
  rename(from: string, to: string) {
    return this.#inner.rename(from, to);
  }
  syncFolder(path: string) {
    return this.#inner.syncFolder(path);
  }
  makeFolder(path: string) {
    return this.#inner.makeFolder(path);
  }
  identity(fd: number) {
    return this.#inner.identity(fd);
  }
  identityOf(path: string) {
    return this.#inner.identityOf(path);
  }
  unlink(path: string) {
    return this.#inner.unlink(path);
  }
  tryLock(fd: number) {
    return this.#inner.tryLock(fd);
  }
  isLocked(path: string) {
    return this.#inner.isLocked(path);
  }
}

/**
 * Check the log against the write order (docs/loop.md) for every call that was dispatched: its dispatch line was
 * written and then synced before the call's first side effect; its result line was written and
 * synced before its settle line. Returns how many calls were checked, so that a test can
 * insist the check was not vacuous.
 */
export function assertWriteOrder(log: readonly LogEntry[]): number {
  const lines: { index: number; record: Record<string, unknown> }[] = [];
  log.forEach((entry, index) => {
    if (entry.kind !== 'write') return;
    for (const line of entry.text.split('\n')) {
      if (line !== '') lines.push({ index, record: JSON.parse(line) as Record<string, unknown> });
    }
  });
  const syncAfter = (index: number, before: number) =>
    log.some((entry, at) => entry.kind === 'sync' && at > index && at < before);
  let checked = 0;
  for (const { index, record } of lines) {
    if (record.type !== 'tool-dispatched') continue;
    const callId = record.callId as string;
    const effect = log.findIndex(
      (entry) => entry.kind === 'effect' && entry.callId === callId && entry.what === 'start',
    );
    if (effect !== -1) {
      assert.ok(effect > index, `${callId}: side effect began before its dispatch was written`);
      assert.ok(syncAfter(index, effect), `${callId}: side effect began before a sync`);
    }
    const result = lines.find(
      (line) =>
        line.record.type === 'message' &&
        Array.isArray(line.record.content) &&
        (line.record.content as { type: string; callId?: string }[]).some(
          (part) => part.type === 'tool-result' && part.callId === callId,
        ),
    );
    const settle = lines.find(
      (line) => line.record.type === 'tool-settled' && line.record.callId === callId,
    );
    if (settle !== undefined) {
      assert.ok(result !== undefined, `${callId}: settled without a result`);
      assert.ok(result.index < settle.index, `${callId}: result written after its settle`);
      assert.ok(
        syncAfter(result.index, settle.index),
        `${callId}: result not synced before settle`,
      );
    }
    checked += 1;
  }
  return checked;
}

/** A temp folder and a fresh session in it; `close()` ends both. */
export async function freshSession(fileSystem?: FileSystem) {
  const folder = await makeTempFolder('llm-agent-loop-');
  const path = join(folder, 'run.jsonl');
  const session = await Session.create(
    path,
    { agentId: 'main', agentType: 'main', label: 'main', model: 'scripted:test' },
    { clock: steppingClock(), ...(fileSystem === undefined ? {} : { fileSystem }) },
  );
  return {
    folder,
    path,
    session,
    async close() {
      await session.close().catch(() => undefined);
      await removeFolder(folder);
    },
  };
}

/**
 * Runs `body` with a fresh session (see {@link freshSession}) and always closes it after.
 *
 * @example
 * test('…', () =>
 *   withFreshSession(async (fixture) => {
 *     const result = await new Loop({ backends, session: fixture.session }).start('Hi');
 *   }));
 */
export async function withFreshSession<T>(
  body: (fixture: Awaited<ReturnType<typeof freshSession>>) => Promise<T>,
  fileSystem?: FileSystem,
): Promise<T> {
  const fixture = await freshSession(fileSystem);
  try {
    return await body(fixture);
  } finally {
    await fixture.close();
  }
}

/** Every record of a transcript. */
export async function recordsOf(path: string): Promise<TranscriptRecord[]> {
  const records: TranscriptRecord[] = [];
  for await (const record of readRecords(path)) records.push(record as TranscriptRecord);
  return records;
}

/** The records' types, checkpoints left out, for comparing shapes. */
export function shapeOf(records: readonly TranscriptRecord[]): string[] {
  return records
    .filter((record) => record.type !== 'checkpoint')
    .map((record) => {
      if (record.type === 'message') {
        const parts = record.content.map((part) =>
          part.type === 'tool-call' || part.type === 'tool-result'
            ? `${part.type}:${part.callId}`
            : part.type,
        );
        return `${record.role}(${parts.join(',')})`;
      }
      if (record.type === 'tool-dispatched' || record.type === 'tool-settled') {
        return `${record.type}:${record.callId}`;
      }
      return record.type;
    });
}

/** Collect a run's events while it runs. */
export async function collectEvents(run: AsyncIterable<LoopEvent>): Promise<LoopEvent[]> {
  const events: LoopEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

/**
 * `task_wait` for resume tests: it only joins. A pending-again join is awaited through the
 * join resolver, so its execute must never run.
 *
 * @example
 * const loop = new Loop({ backends, session, tools: [waitTool], resolveJoin });
 */
export const waitTool: ToolDefinition<{ agentIds: string[] }> = {
  name: 'task_wait',
  description: 'Wait for agents',
  inputSchema: z.object({ agentIds: z.array(z.string()) }),
  idempotency: 'read-only',
  joins: ({ agentIds }) => agentIds,
  async execute() {
    throw new Error('a pending-again join must not be executed again');
  },
};

/** A tool that logs its side effect into the shared log and echoes its input. */
export function echoTool(log: LogEntry[], name = 'echo'): ToolDefinition<{ text: string }> {
  return {
    name,
    description: 'Echo the text back',
    inputSchema: z.object({ text: z.string() }),
    idempotency: 'read-only',
    async execute({ text }, { callId }) {
      log.push({ kind: 'effect', callId, what: 'start' });
      return `echo: ${text}`;
    },
  };
}
