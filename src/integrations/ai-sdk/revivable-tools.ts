import { getErrorMessage } from '@ai-sdk/provider-utils';
import type { ToolExecutionOptions, ToolSet } from 'ai';
import type { ToolIdempotency } from '../../loop/tool-set.ts';
import { IDEMPOTENCIES, type JsonValue, type ToolCallPart } from '../../transcript/records.ts';
import { recordedCallKey } from './call-idempotency-key.ts';
import { currentRecorder, type RunRecorder } from './run-recorder.ts';

/**
 * The same tools, each `execute` wrapped so that the current revivable run's transcript holds
 * its dispatch, durable, before the tool starts, and its result, durable, before the SDK gets
 * it: the write-ahead rule of the Loop, for tools the AI SDK runs. (Wrapping `execute` itself,
 * not `onToolExecutionStart`: the SDK drops what a callback throws, so a failed write there
 * would not stop the tool.) `idempotency` says, by name, what running each tool twice would
 * do; a tool not named is recorded `side-effect`, marked undeclared (plans say so). A thrown error is recorded as the model will
 * read it and thrown on; a run aborted while the tool ran leaves the dispatch open, for revival
 * to answer as interrupted. Each call's idempotency key is recorded in its dispatch and handed
 * to `execute` in its options (read it with `toolIdempotencyKey(options)`). Refused with a TypeError: a tool with `toModelOutput` (what the
 * model reads would not be what the transcript holds), an unknown idempotency or name.
 *
 * @example
 * import { tool } from 'ai';
 * import { revivableTools } from 'llm-agent-revival/ai-sdk';
 * import { z } from 'zod';
 * const tools = revivableTools(
 *   { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `Sunny in ${city}` }) },
 *   { idempotency: { weather: 'read-only' } },
 * );
 */
export function revivableTools<TOOLS extends ToolSet>(
  tools: TOOLS,
  options: { idempotency?: ToolIdempotency } = {},
): TOOLS {
  const idempotency = options.idempotency ?? {};
  for (const [name, value] of Object.entries(idempotency)) {
    if (!(name in tools))
      throw new TypeError(`revivableTools: idempotency names "${name}", which is not a tool`);
    if (!IDEMPOTENCIES.includes(value)) {
      throw new TypeError(
        `revivableTools: tool "${name}" has idempotency ${JSON.stringify(value)}; it must be one of ${IDEMPOTENCIES.join(', ')}`,
      );
    }
  }
  const wrapped: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    if (tool.toModelOutput !== undefined) {
      throw new TypeError(
        `revivableTools: tool "${name}" has toModelOutput: the transcript records what execute returns, which is what the model must read`,
      );
    }
    const execute = tool.execute;
    if (execute === undefined) {
      wrapped[name] = tool; // answered by the program, recorded when the model reads the answer
      continue;
    }
    const declared = idempotency[name]; // undefined: recorded side-effect, undeclared
    wrapped[name] = {
      ...tool,
      execute: (input: unknown, execution: ToolExecutionOptions<never>) =>
        runRecorded(
          name,
          declared,
          (idempotencyKey) =>
            execute(input as never, { ...execution, idempotencyKey } as typeof execution),
          execution,
        ),
    } as ToolSet[string];
  }
  return wrapped as TOOLS;
}

async function runRecorded(
  name: string,
  idempotency: (typeof IDEMPOTENCIES)[number] | undefined,
  execute: (idempotencyKey: string) => unknown,
  execution: ToolExecutionOptions<never>,
): Promise<unknown> {
  const recorder = currentRecorder(`tool "${name}"`);
  // The key is recorded in the dispatch before the tool starts; the tool gets that key.
  const idempotencyKey = recordedCallKey(recorder, execution.toolCallId);
  const call = await recorder.dispatch(
    execution.toolCallId,
    name,
    idempotency,
    undefined,
    idempotencyKey,
  );
  let value: unknown;
  try {
    value = await execute(idempotencyKey);
  } catch (error) {
    await answerFailure(recorder, call, error, execution.abortSignal);
    throw error;
  }
  if (isAsyncIterable(value)) return recordLast(recorder, call, value, execution.abortSignal);
  await recorder.settle(call, toJsonValue(value), false);
  return value;
}

/** A streaming tool: its preliminary outputs pass through; the last one is the result. */
async function* recordLast(
  recorder: RunRecorder,
  call: ToolCallPart,
  values: AsyncIterable<unknown>,
  signal: AbortSignal | undefined,
): AsyncGenerator<unknown> {
  let last: unknown;
  try {
    for await (const value of values) {
      last = value;
      yield value;
    }
  } catch (error) {
    await answerFailure(recorder, call, error, signal);
    throw error;
  }
  await recorder.settle(call, toJsonValue(last), false);
}

/**
 * A tool that threw is answered as the SDK tells the model (`error-text` with the error's
 * message) — unless the run was aborted: then the outcome is unknown, and the dispatch stays
 * open for revival to answer as interrupted.
 */
async function answerFailure(
  recorder: RunRecorder,
  call: ToolCallPart,
  error: unknown,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted === true) return;
  await recorder.settle(call, getErrorMessage(error), true);
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
