import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A reply from a session worker (see session-worker.ts for the protocol). */
export interface WorkerReply {
  id: number;
  ok: boolean;
  pid?: number;
  code?: string;
  holderPid?: number | null;
  message?: string;
  lastSeq?: number;
}

/** A running session worker process, driven by {@link SessionWorker.send}. */
export interface SessionWorker {
  readonly pid: number;
  /** Send a command and wait for its reply. */
  send(command: Record<string, unknown>): Promise<WorkerReply>;
  /** Ask the worker to exit and wait until it has. */
  stop(): Promise<void>;
}

const WORKER = fileURLToPath(new URL('./session-worker.ts', import.meta.url));

/**
 * Fork a session worker under the running Node (the pinned one under npm scripts) and wait
 * until it is ready.
 *
 * @example
 * const worker = await startSessionWorker();
 * const reply = await worker.send({ op: 'open', path });
 * await worker.stop();
 */
export async function startSessionWorker(): Promise<SessionWorker> {
  const child: ChildProcess = fork(WORKER, [], {
    execPath: process.execPath,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (reply: WorkerReply) => void>();
  let nextId = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      for (const resolveReply of waiting.values()) {
        resolveReply({ id: -1, ok: false, code: 'worker-exited' });
      }
      waiting.clear();
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message) => {
      const reply = message as WorkerReply & { ready?: boolean };
      if (reply.ready === true) {
        resolve();
        return;
      }
      waiting.get(reply.id)?.(reply);
      waiting.delete(reply.id);
    });
  });
  await ready;
  return {
    pid: child.pid ?? -1,
    send(command) {
      if (exited) return Promise.resolve({ id: -1, ok: false, code: 'worker-exited' });
      const id = nextId++;
      return new Promise<WorkerReply>((resolve) => {
        waiting.set(id, resolve);
        child.send({ ...command, id });
      });
    },
    async stop() {
      if (!exited) child.send({ id: nextId++, op: 'exit' });
      await exit;
    },
  };
}
