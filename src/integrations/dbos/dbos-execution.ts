import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { DBOS, DBOSWorkflowConflictError } from '@dbos-inc/dbos-sdk';
import { recordedCallKey } from '../ai-sdk/call-idempotency-key.ts';
import type { RunRecorder } from '../ai-sdk/run-recorder.ts';

/**
 * One execution of a DBOS workflow's run in this process: the recorder of its transcript, a
 * token no other execution has (what a started-marker step checkpoints, so that a later
 * execution can tell the marker was not its own), and the queue that runs its tool calls one
 * after another (DBOS numbers steps in the order they start: two calls racing would swap
 * numbers on a replay). Internal: a {@link DbosRun} holds one, and its `within` makes it the
 * current one.
 *
 * @example
 * const execution = new DbosExecution(recorder);
 * await execution.serial(() => runCall());
 */
export class DbosExecution {
  readonly recorder: RunRecorder;
  /** Written by this execution's started-markers; an earlier execution's differs. */
  readonly token = randomUUID();
  #queue: Promise<unknown> = Promise.resolve();
  #superseded: string | null = null;

  constructor(recorder: RunRecorder) {
    this.recorder = recorder;
  }

  /**
   * Run `body` as a DBOS step. Once DBOS says another execution owns the workflow (a
   * recovery re-enqueued it while this one still ran), this execution takes no more steps and
   * writes nothing more: the owner replays what this one checkpointed and carries on.
   */
  async step<T>(body: () => Promise<T>, name: string): Promise<T> {
    if (this.#superseded !== null) throw new DBOSWorkflowConflictError(this.#superseded);
    try {
      return await DBOS.runStep(body, { name, retriesAllowed: false });
    } catch (error) {
      if (error instanceof DBOSWorkflowConflictError) this.#superseded = DBOS.workflowID ?? '?';
      throw error;
    }
  }

  /** Run `body` after every tool call this execution started before it has ended. */
  serial<T>(body: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(body, body);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** The idempotency key of a call of this run (recorded in its dispatch). */
  idempotencyKey(callId: string): string {
    return recordedCallKey(this.recorder, callId);
  }
}

const current = new AsyncLocalStorage<DbosExecution>();

/**
 * Run `body` with `execution` as the current run of the DBOS-wrapped model and tools.
 *
 * @example
 * await withExecution(execution, () => generateText({ model, tools, prompt }));
 */
export function withExecution<T>(execution: DbosExecution, body: () => T): T {
  return current.run(execution, body);
}

/**
 * The current execution; a wrapped model or tool called outside `DbosRun.within` is a
 * programmer error, and says so.
 *
 * @example
 * const execution = currentExecution('dbosModel');
 */
export function currentExecution(who: string): DbosExecution {
  const execution = current.getStore();
  if (execution === undefined) {
    throw new TypeError(
      `${who}: called outside a DBOS run; call the agent inside run.within(() => …) of DbosRun.open(…), in a DBOS workflow`,
    );
  }
  return execution;
}
