import { DBOS } from '@dbos-inc/dbos-sdk';
import type { ModelMessage } from 'ai';
import type { ToolDefinition } from '../../loop/types.ts';
import { reconcileStoreRun } from '../../revival/reconcile-run.ts';
import { reviveStoreRun } from '../../revival/revive-store-run.ts';
import type { TranscriptStore } from '../../store/transcript-store.ts';
import { conversationView } from '../../transcript/conversation-view.ts';
import { TranscriptError } from '../../transcript/transcript-error.ts';
import type { TranscriptWriter } from '../../transcript/transcript-writer.ts';
import { RunRecorder } from '../ai-sdk/run-recorder.ts';
import { DbosExecution, withExecution } from './dbos-execution.ts';
import { wrappedToolsOf } from './dbos-tools.ts';

/**
 * Which run {@link DbosRun.open} opens, where, and how long it waits for another process.
 *
 * @example
 * const options: DbosRunOptions = { store, tools, agentType: 'mailer', maxRevivals: 3 };
 */
export interface DbosRunOptions {
  /** Where the transcript lives: a `PostgresStore` (its lease is the fence between processes). */
  store: TranscriptStore;
  /** The run's id in the store (default: the DBOS workflow's id). */
  run?: string;
  /** The tools from {@link dbosTools}: their reconciles are asked on recovery. */
  tools?: object;
  /** The run's agent id (default `main`). */
  agentId?: string;
  /** Recorded for `status` (default `dbos`). */
  agentType?: string;
  /** The model spec recorded for people (default `dbos`). */
  model?: string;
  /** How many recoveries the transcript is allowed (default 3). */
  maxRevivals?: number;
  /**
   * How long to wait while another process holds the run (a second execution started while
   * the first still runs), in milliseconds (default: until it lets go or its lease expires).
   */
  waitMs?: number;
  /** How often to look again while waiting (default 250 ms). */
  pollMs?: number;
  /** How long each reconcile may take on recovery (default 10 s). */
  reconcileTimeoutMs?: number;
}

/**
 * Why {@link DbosRun.open} opened nothing: `running` (another process still held the run when
 * `waitMs` ran out), `revival-cap`, `unreadable` or `io-error`; `detail` is one line.
 *
 * @example
 * const opened = await DbosRun.open({ store });
 * if (!opened.ok) throw new Error(`${opened.reason}: ${opened.detail}`);
 */
export interface DbosRunNotOpened {
  ok: false;
  reason: 'running' | 'revival-cap' | 'unreadable' | 'io-error';
  detail: string;
}

/**
 * The run of one DBOS workflow, recorded as our transcript in a store (so `status`, `show` and
 * `ui` see it) and carried through DBOS's recovery with our rule: call it at the top of the
 * workflow, run the agent inside `within` with {@link dbosModel} and {@link dbosTools}, close
 * it. The first execution creates the run (its id is the workflow's). An execution DBOS starts
 * again (recovery) waits until no live process holds the run — the earlier one's lease expires,
 * or it lets go — then takes it over at a new epoch (the earlier process can never write again),
 * asks the tools' reconciles about calls left in flight, and revives it: each such call answered
 * with its verdict or "interrupted — outcome unknown — NOT retried". DBOS then replays the
 * workflow: checkpointed steps return their outputs, and a tool call that was in flight is
 * answered from the transcript, never run again.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { DBOS } from '@dbos-inc/dbos-sdk';
 * import { generateText, stepCountIs } from 'ai';
 * import { DbosRun, dbosModel, dbosTools } from 'llm-agent-revival/dbos';
 * import { PostgresStore } from 'llm-agent-revival/store';
 * const store = await PostgresStore.connect({ connectionString: 'postgres://127.0.0.1/app' });
 * const model = dbosModel(openai('gpt-5-mini'));
 * const tools = dbosTools({});
 * export const agentWorkflow = DBOS.registerWorkflow(async (prompt: string) => {
 *   const opened = await DbosRun.open({ store, tools });
 *   if (!opened.ok) throw new Error(opened.detail);
 *   const { run } = opened;
 *   try {
 *     const result = await run.within(() => generateText({ model, tools, prompt, stopWhen: stepCountIs(10) }));
 *     return result.text;
 *   } finally {
 *     await run.close();
 *   }
 * }, { name: 'agentWorkflow' });
 */
export class DbosRun {
  readonly #execution: DbosExecution;
  /** The run's id in the store. */
  readonly run: string;
  /** True when this execution recovered the run (an earlier one stopped while it ran). */
  readonly revived: boolean;

  private constructor(execution: DbosExecution, run: string, revived: boolean) {
    this.#execution = execution;
    this.run = run;
    this.revived = revived;
  }

  /**
   * Open the current workflow's run: create it, or take it over and revive it (see the class).
   * Must be called inside a DBOS workflow (a TypeError otherwise). Never throws for the run's
   * state: a run at its cap or unreadable is an answer with a reason.
   */
  static async open(
    options: DbosRunOptions,
  ): Promise<{ ok: true; run: DbosRun } | DbosRunNotOpened> {
    const workflow = DBOS.workflowID;
    if (workflow === undefined) {
      throw new TypeError('DbosRun.open: call it inside a DBOS workflow (DBOS.registerWorkflow)');
    }
    const run = options.run ?? workflow;
    const agentId = options.agentId ?? 'main';
    try {
      const writer = await options.store.create(run, {
        agentId,
        agentType: options.agentType ?? 'dbos',
        label: options.agentType ?? 'dbos',
        model: options.model ?? 'dbos',
      });
      return {
        ok: true,
        run: new DbosRun(new DbosExecution(new RunRecorder(writer, [])), run, false),
      };
    } catch (error) {
      if (!TranscriptError.isInstance(error) || error.code !== 'exists') throw error;
    }
    const writer = await takeOver(options, run);
    if (!('append' in writer)) return writer;
    const recovered = await recover(options, run, agentId, writer);
    if (!recovered.ok) return recovered;
    return {
      ok: true,
      run: new DbosRun(new DbosExecution(recovered.recorder), run, recovered.revived),
    };
  }

  /** The conversation so far, as the AI SDK takes it (empty for a new run). */
  get messages(): ModelMessage[] {
    return this.#execution.recorder.modelMessages;
  }

  /**
   * The idempotency key of a call of this run, recorded in its dispatch and handed to its
   * reconcile: give it to the outside world (a payment's `Idempotency-Key`).
   */
  idempotencyKey(callId: string): string {
    return this.#execution.idempotencyKey(callId);
  }

  /** Run `body` as this run: the wrapped model and tools it calls record into its transcript. */
  within<T>(body: () => T): T {
    return withExecution(this.#execution, body);
  }

  /** Make everything durable and let the run go. */
  async close(): Promise<void> {
    const session = this.#execution.recorder.session;
    try {
      await session.barrier();
    } finally {
      await session.close();
    }
  }
}

/** Take the run over once no live process holds it (or `waitMs` runs out). */
async function takeOver(
  options: DbosRunOptions,
  run: string,
): Promise<TranscriptWriter | DbosRunNotOpened> {
  const deadline = Date.now() + (options.waitMs ?? Number.POSITIVE_INFINITY);
  for (;;) {
    try {
      return await options.store.open(run);
    } catch (error) {
      if (!TranscriptError.isInstance(error)) {
        return { ok: false, reason: 'io-error', detail: String(error) };
      }
      if (error.code === 'unreadable')
        return { ok: false, reason: 'unreadable', detail: error.message };
      if (error.code !== 'locked') return { ok: false, reason: 'io-error', detail: error.message };
      if (Date.now() >= deadline) return { ok: false, reason: 'running', detail: error.message };
    }
    await new Promise((done) => setTimeout(done, options.pollMs ?? 250));
  }
}

/** Reconcile and revive a run just taken over; a run that ended is carried on as it is. */
async function recover(
  options: DbosRunOptions,
  run: string,
  agentId: string,
  writer: TranscriptWriter,
): Promise<{ ok: true; recorder: RunRecorder; revived: boolean } | DbosRunNotOpened> {
  const tools = wrappedToolsOf(options.tools ?? {})
    .filter((tool) => tool.reconcile !== undefined)
    .map(
      (tool) =>
        ({
          name: tool.name,
          description: tool.name,
          inputSchema: tool.inputSchema,
          idempotency: tool.idempotency,
          execute: async () => null,
          reconcile: tool.reconcile,
        }) as unknown as ToolDefinition<unknown>,
    );
  const reconciled =
    tools.length === 0
      ? undefined
      : await reconcileStoreRun({
          store: options.store,
          run,
          tools,
          timeoutMs: options.reconcileTimeoutMs ?? 10_000,
        });
  const revived = await reviveStoreRun({
    store: options.store,
    run,
    agentId,
    maxRevivals: options.maxRevivals ?? 3,
    writer,
    ...(reconciled === undefined ? {} : { reconciled }),
  });
  if (revived.ok) {
    const recorder = new RunRecorder(revived.writer, revived.messages);
    await recorder.answerNeverStarted(revived.neverDispatched.map((call) => call.callId));
    return { ok: true, recorder, revived: true };
  }
  if (revived.reason === 'finished' || revived.reason === 'empty') {
    // Nothing was in flight: a replay of a run that had ended, or stopped between turns.
    const read = await options.store.read(run);
    if (read.ok) {
      return {
        ok: true,
        recorder: new RunRecorder(writer, conversationView(read.records)),
        revived: false,
      };
    }
  }
  await writer.close().catch(() => undefined);
  const reason = revived.reason === 'revival-cap' ? 'revival-cap' : 'unreadable';
  return {
    ok: false,
    reason: revived.reason === 'io-error' ? 'io-error' : reason,
    detail: revived.detail,
  };
}
