import { getErrorMessage } from '@ai-sdk/provider-utils';
import type { ToolExecutionOptions, ToolSet } from 'ai';
import type { ToolIdempotency } from '../../loop/tool-set.ts';
import type { ReconcileAnswer, ReconcileContext } from '../../loop/types.ts';
import { IDEMPOTENCIES, type Idempotency, type JsonValue } from '../../transcript/records.ts';
import { NOT_STARTED_MESSAGE } from '../ai-sdk/run-recorder.ts';
import { currentExecution, type DbosExecution } from './dbos-execution.ts';

/**
 * What a tool's reconcile is: asked, when a DBOS run is recovered, about a call of the tool that
 * was in flight when the earlier execution died (the `reconcile` of our `ToolDefinition`).
 *
 * @example
 * const reconcile: DbosReconcile = async (input, { idempotencyKey }) => ({ outcome: 'did-not-happen' });
 */
export type DbosReconcile = (input: never, context: ReconcileContext) => Promise<ReconcileAnswer>;

/**
 * How {@link dbosTools} wraps a tool set: what running each tool twice would do (by name;
 * `side-effect` when not named), and each tool's reconcile (by name).
 *
 * @example
 * const options: DbosToolsOptions = { idempotency: { lookup: 'read-only' } };
 */
export interface DbosToolsOptions {
  idempotency?: ToolIdempotency;
  reconcile?: Record<string, DbosReconcile>;
}

/** What a tool step checkpoints: the answer the model reads. */
interface StepAnswer {
  output: JsonValue;
  isError: boolean;
}

/**
 * What {@link DbosRun.open} needs of a wrapped tool set to reconcile it.
 *
 * @example
 * const names = wrappedToolsOf(tools).map((tool: WrappedTool) => tool.name);
 */
export interface WrappedTool {
  name: string;
  inputSchema: ToolSet[string]['inputSchema'];
  idempotency: Idempotency;
  reconcile?: DbosReconcile;
}

const wrappedSets = new WeakMap<object, WrappedTool[]>();

/**
 * The tools of a wrapped set, for {@link DbosRun.open}'s reconciles (empty for any other object).
 *
 * @example
 * const wrapped = wrappedToolsOf(tools);
 */
export function wrappedToolsOf(tools: object): WrappedTool[] {
  return wrappedSets.get(tools) ?? [];
}

/**
 * The same AI SDK tools, each call run inside the current DBOS workflow with our rule —
 * at most once. Each call is two DBOS steps: a started-marker step, checkpointed before the
 * tool runs, then the tool's step, which writes the call's dispatch to our transcript (durable)
 * before the tool starts and its result (durable) before the step's output is checkpointed.
 * On recovery DBOS runs the workflow again from the top: a call whose output was checkpointed
 * returns it, as DBOS always does; a call whose marker was written by an earlier execution and
 * whose output was never checkpointed is **not** run again — its step answers with what our
 * transcript holds for it: the result it got, its reconcile's verdict, or "interrupted —
 * outcome unknown — NOT retried" (an error result the model reads). A call of an execution
 * that was never stopped runs as DBOS runs a step (no retries). Calls of one run go one after
 * another. Each call's execute gets its idempotency key (`toolIdempotencyKey(options)`), the
 * key its dispatch records and its reconcile is asked by. Call the tools inside `run.within(…)`
 * of {@link DbosRun.open}.
 *
 * @example
 * import { tool } from 'ai';
 * import { dbosTools } from 'llm-agent-revival/dbos';
 * import { z } from 'zod';
 * const tools = dbosTools(
 *   { send: tool({ inputSchema: z.object({ to: z.string() }), execute: async ({ to }) => `sent to ${to}` }) },
 *   { reconcile: { send: async () => ({ outcome: 'unknown' }) } },
 * );
 */
export function dbosTools<TOOLS extends ToolSet>(
  tools: TOOLS,
  options: DbosToolsOptions = {},
): TOOLS {
  const idempotency = options.idempotency ?? {};
  const reconciles = options.reconcile ?? {};
  for (const name of [...Object.keys(idempotency), ...Object.keys(reconciles)]) {
    if (!(name in tools))
      throw new TypeError(`dbosTools: options name "${name}", which is not a tool`);
  }
  for (const [name, value] of Object.entries(idempotency)) {
    if (!IDEMPOTENCIES.includes(value)) {
      throw new TypeError(
        `dbosTools: tool "${name}" has idempotency ${JSON.stringify(value)}; it must be one of ${IDEMPOTENCIES.join(', ')}`,
      );
    }
  }
  const wrapped: ToolSet = {};
  const described: WrappedTool[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (tool.toModelOutput !== undefined || execute === undefined) {
      throw new TypeError(
        `dbosTools: tool "${name}" ${execute === undefined ? 'has no execute' : 'has toModelOutput'}: only a tool whose execute returns what the model reads can run as a step`,
      );
    }
    const declared = idempotency[name] ?? 'side-effect';
    const reconcile = reconciles[name];
    described.push({
      name,
      inputSchema: tool.inputSchema,
      idempotency: declared,
      ...(reconcile === undefined ? {} : { reconcile }),
    });
    wrapped[name] = {
      ...tool,
      execute: async (input: unknown, execution: ToolExecutionOptions<never>) => {
        const run = currentExecution(`tool "${name}"`);
        const answer = await run.serial(() =>
          callAtMostOnce(run, name, declared, execution.toolCallId, async () => {
            // The key its dispatch records: `toolIdempotencyKey(options)` reads it.
            const idempotencyKey = run.idempotencyKey(execution.toolCallId);
            const value = await execute(
              input as never,
              {
                ...execution,
                idempotencyKey,
              } as typeof execution,
            );
            if (isAsyncIterable(value)) {
              throw new TypeError(
                `dbosTools: tool "${name}" streams its output, which a step cannot checkpoint`,
              );
            }
            return value;
          }),
        );
        if (answer.isError) throw new Error(String(answer.output));
        return answer.output;
      },
    } as ToolSet[string];
  }
  wrappedSets.set(wrapped, described);
  return wrapped as TOOLS;
}

/** The marker step, then the tool's step: run by this execution, or answered, never re-run. */
async function callAtMostOnce(
  run: DbosExecution,
  name: string,
  idempotency: Idempotency,
  callId: string,
  execute: () => Promise<unknown>,
): Promise<StepAnswer> {
  const marker = await run.step(async () => run.token, `started ${name}`);
  const mine = marker === run.token;
  return run.step(async (): Promise<StepAnswer> => {
    if (!mine) return answerUnrun(run, callId);
    const call = await run.recorder.dispatch(
      callId,
      name,
      idempotency,
      undefined,
      run.idempotencyKey(callId),
    );
    let answer: StepAnswer;
    try {
      answer = { output: toJsonValue(await execute()), isError: false };
    } catch (error) {
      answer = { output: getErrorMessage(error), isError: true };
    }
    // The result is durable before the step's output is checkpointed.
    await run.recorder.settle(call, answer.output, answer.isError);
    return answer;
  }, name);
}

/**
 * A call an earlier execution started and whose step output was never checkpointed: the
 * answer our transcript holds for it (its real result, its reconcile's verdict, or the
 * interrupted text a revival wrote), or — when the earlier execution stopped before its
 * dispatch — that it never started. Nothing is run.
 */
async function answerUnrun(run: DbosExecution, callId: string): Promise<StepAnswer> {
  for (const message of run.recorder.messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && part.callId === callId) {
        return { output: part.output, isError: part.isError === true };
      }
    }
  }
  await run.recorder.recordUnrunAnswer(callId, NOT_STARTED_MESSAGE, true);
  await run.recorder.session.barrier();
  return { output: NOT_STARTED_MESSAGE, isError: true };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** What the SDK hands the model as JSON: undefined becomes null; a Date its string. */
function toJsonValue(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as JsonValue);
  } catch {
    return String(value);
  }
}
