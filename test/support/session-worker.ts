import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';

/*
 * A long-lived child process that drives Sessions on command over IPC, so that tests can race
 * several processes against one transcript without spawning a process per round. Start it with
 * {@link startSessionWorker} (session-workers.ts). Commands and replies:
 *
 *   { id, op: 'open', path, goAt? }  → { id, ok: true, pid } | { id, ok: false, code, holderPid, message }
 *     goAt: a wall-clock time (ms, fractional) to busy-wait for, so that several workers
 *     start their open within microseconds of each other.
 *   { id, op: 'close' }              → { id, ok: true }    (closes the open session, if any)
 *   { id, op: 'append', count, bytes, durability? } → { id, ok: true, lastSeq }
 *     opens nothing: appends `count` messages of about `bytes` bytes to the open session,
 *     with a barrier after each (so a reader sees a file that grows record by record).
 *   { id, op: 'start-appending', bytes, batch, pauseMs, count } → { id, ok: true } at once; then
 *     appends messages of about `bytes` bytes to the open session in batches of `batch` (a
 *     barrier after each), pausing `pauseMs` between batches, until `count` records or a stop.
 *   { id, op: 'stop-appending' }     → { id, ok: true, lastSeq } once the loop has stopped.
 *   { id, op: 'wait-appending' }     → { id, ok: true, lastSeq } once the loop has ended.
 *   { id, op: 'exit' }               → the process exits.
 */

interface Command {
  id: number;
  op:
    | 'open'
    | 'close'
    | 'append'
    | 'start-appending'
    | 'stop-appending'
    | 'wait-appending'
    | 'exit';
  batch?: number;
  pauseMs?: number;
  path?: string;
  goAt?: number;
  count?: number;
  bytes?: number;
  durability?: 'fsync' | 'flush' | 'none';
}

let session: Session | null = null;
let appending: { stop: boolean; done: Promise<void> } | null = null;

function message(index: number, bytes: number) {
  const text = 'w'.repeat(bytes);
  return {
    type: 'message' as const,
    role: 'user' as const,
    content: [{ type: 'text' as const, text: `${index} ${text.slice(0, (index * 7919) % bytes)}` }],
  };
}

async function appendUntilStopped(open: Session, command: Command, state: { stop: boolean }) {
  const count = command.count ?? Number.POSITIVE_INFINITY;
  for (let index = 0; !state.stop && index * (command.batch ?? 1) < count; index++) {
    for (let count = 0; count < (command.batch ?? 1); count++) {
      await open.append(message(index, command.bytes ?? 100));
    }
    await open.barrier();
    await new Promise((resolve) => setTimeout(resolve, command.pauseMs ?? 0));
  }
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

async function handle(command: Command): Promise<Record<string, unknown>> {
  switch (command.op) {
    case 'open': {
      if (command.goAt !== undefined) while (now() < command.goAt) {}
      try {
        const options = command.durability === undefined ? {} : { durability: command.durability };
        session = await Session.open(command.path ?? '', options);
        return { ok: true, pid: process.pid };
      } catch (error) {
        if (!TranscriptError.isInstance(error)) throw error;
        return {
          ok: false,
          code: error.code,
          holderPid: error.holder?.pid ?? null,
          message: error.message,
        };
      }
    }
    case 'close':
      await session?.close();
      session = null;
      return { ok: true };
    case 'append': {
      if (session === null) throw new Error('no open session');
      for (let index = 0; index < (command.count ?? 1); index++) {
        await session.append(message(index, command.bytes ?? 100));
        await session.barrier();
      }
      return { ok: true, lastSeq: session.lastSeq };
    }
    case 'start-appending': {
      if (session === null || appending !== null) throw new Error('no open session, or busy');
      const state = { stop: false, done: Promise.resolve() };
      state.done = appendUntilStopped(session, command, state);
      appending = state;
      return { ok: true };
    }
    case 'stop-appending':
    case 'wait-appending': {
      if (appending === null) throw new Error('not appending');
      if (command.op === 'stop-appending') appending.stop = true;
      await appending.done;
      appending = null;
      return { ok: true, lastSeq: session?.lastSeq };
    }
    case 'exit':
      await session?.close();
      process.exit(0);
  }
}

process.on('message', (message) => {
  const command = message as Command;
  handle(command).then(
    (reply) => process.send?.({ id: command.id, ...reply }),
    (error: unknown) =>
      process.send?.({ id: command.id, ok: false, code: 'crash', message: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ready: true });
