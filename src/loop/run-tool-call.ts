import { asSchema } from 'ai';
import { idempotencyKeyOf, type KeyedRun } from '../transcript/idempotency-key.ts';
import type { JsonValue, ToolCallPart } from '../transcript/records.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import { checkJsonSchema } from './check-json-schema.ts';
import { inputDigest } from './input-digest.ts';
import { idempotencyUndeclared } from './tool-set.ts';
import { type LoopTracer, SPAN_ERROR } from './tracer.ts';
import type { JoinResolver, LoopEvent, LoopMessage, ToolDefinition, ToolFailure } from './types.ts';

/**
 * What running one call needs from its loop. Results come back through `onResult` as each
 * becomes durable, not as a return value, because parallel calls finish in any order and the
 * run's conversation must follow the file's.
 *
 * @example
 * const environment: ToolCallEnvironment = {
 *   writer, tools, signal, emit, onResult: (message) => conversation.append(message),
 * };
 */
export interface ToolCallEnvironment {
  writer: TranscriptWriter;
  tools: ReadonlyMap<string, ToolDefinition<unknown>>;
  signal: AbortSignal;
  emit: (event: LoopEvent) => void;
  /** Called with each tool message once it is durable, in file order. */
  onResult: (message: LoopMessage) => void;
  /** Each tool's execution becomes a span `ai.toolCall`, as the AI SDK names its own. */
  tracer?: LoopTracer;
}

/**
 * How a call ended, as far as the transcript is concerned:
 * - `settled`: dispatch, result, settle all written;
 * - `refused`: answered with an error result without dispatching (unknown tool, invalid input);
 * - `not-dispatched`: the run was aborted before the dispatch, nothing written;
 * - `left-open`: dispatched, then the run was aborted and the tool did not answer: the dispatch
 *   stays open for revival to answer honestly ("interrupted, outcome unknown").
 *
 * @example
 * const leftForRevival = (outcome: CallOutcome) => outcome === 'left-open'; // answered as interrupted
 */
export type CallOutcome = 'settled' | 'refused' | 'not-dispatched' | 'left-open';

/**
 * Run one tool call of the current assistant turn in the write order of docs/loop.md ("Write order"): validate the
 * input (invalid → an error result the model reads, the tool never starts, no dispatch);
 * append `tool-dispatched` and make it durable; only then execute; append the result and make
 * it durable; then append `tool-settled`. Session failures (a poisoned writer) reject: the
 * loop turns them into a failed run.
 *
 * @example
 * const outcome = await runToolCall(call, { writer, tools, signal, emit, onResult });
 */
export async function runToolCall(
  call: ToolCallPart,
  environment: ToolCallEnvironment,
): Promise<CallOutcome> {
  const { writer, signal } = environment;
  const tool = environment.tools.get(call.toolName);
  if (tool === undefined) {
    const names = [...environment.tools.keys()].join(', ') || 'none';
    await writeRefusal(
      call,
      `There is no tool named "${call.toolName}". The call was not run. Available tools: ${names}.`,
      environment,
    );
    return 'refused';
  }
  const checked = await validateInput(tool, call.input);
  if (!checked.ok) {
    await writeRefusal(
      call,
      `Invalid input for tool "${call.toolName}", so it was not run: ${checked.detail}`,
      environment,
    );
    return 'refused';
  }
  let joins: string[] | undefined;
  try {
    joins = tool.joins?.(checked.value as never);
  } catch (error) {
    await writeRefusal(
      call,
      `Invalid input for tool "${call.toolName}", so it was not run: ${errorText(error)}`,
      environment,
    );
    return 'refused';
  }
  if (signal.aborted) return 'not-dispatched';
  // Fixed in the dispatch before the tool starts: the tool, a revival and a reconcile all use
  // the recorded key.
  const idempotencyKey = idempotencyKeyOf(runOf(writer), call.callId);
  await writer.append({
    type: 'tool-dispatched',
    callId: call.callId,
    toolName: call.toolName,
    inputDigest: inputDigest(call.input),
    idempotency: tool.idempotency,
    ...(idempotencyUndeclared(tool) ? { idempotencyDeclared: false as const } : {}),
    idempotencyKey,
    ...(joins === undefined ? {} : { joins }),
  });
  await writer.barrier();
  if (signal.aborted) return 'left-open';
  environment.emit({
    type: 'tool-call-start',
    callId: call.callId,
    toolName: call.toolName,
    input: call.input,
  });
  let answer: { output: JsonValue; isError: boolean };
  const span = environment.tracer?.startSpan('ai.toolCall', {
    attributes: {
      'ai.toolCall.name': call.toolName,
      'ai.toolCall.id': call.callId,
      'llm-agent.idempotency': tool.idempotency,
    },
  });
  try {
    const value = await tool.execute(checked.value as never, {
      callId: call.callId,
      idempotencyKey,
      signal,
      writer,
      session: writer,
    });
    answer = isToolFailure(value)
      ? { output: toJsonValue(value.output), isError: true }
      : { output: toJsonValue(value), isError: false };
  } catch (error) {
    span?.setStatus({ code: SPAN_ERROR, message: errorText(error) });
    span?.end();
    if (signal.aborted) return 'left-open';
    answer = { output: `The tool failed: ${errorText(error)}`, isError: true };
    await writeResultAndSettle(call, answer, environment);
    return 'settled';
  }
  if (answer.isError) {
    span?.setStatus({ code: SPAN_ERROR, message: 'the tool answered with an error' });
  }
  span?.end();
  await writeResultAndSettle(call, answer, environment);
  return 'settled';
}

/**
 * Answer a pending-again join (a `task_wait` dispatched before a crash, never settled) through
 * the subagents layer's resolver, under the same call id, without a second dispatch.
 *
 * @example
 * await resolvePendingJoin(call, ['child-1'], resolveJoin, environment);
 */
export async function resolvePendingJoin(
  call: ToolCallPart,
  agentIds: string[],
  resolveJoin: JoinResolver,
  environment: ToolCallEnvironment,
): Promise<CallOutcome> {
  environment.emit({ type: 'join-wait-start', callId: call.callId, agentIds });
  let answer: { output: JsonValue; isError: boolean };
  try {
    const resolved = await resolveJoin({
      callId: call.callId,
      toolName: call.toolName,
      agentIds,
      signal: environment.signal,
    });
    answer = { output: toJsonValue(resolved.output), isError: resolved.isError };
  } catch (error) {
    if (environment.signal.aborted) return 'left-open';
    answer = { output: `Waiting for the agents failed: ${errorText(error)}`, isError: true };
  }
  await writeResultAndSettle(call, answer, environment);
  return 'settled';
}

async function writeResultAndSettle(
  call: ToolCallPart,
  answer: { output: JsonValue; isError: boolean },
  environment: ToolCallEnvironment,
): Promise<void> {
  await appendDurableResult(call, answer, environment);
  await environment.writer.append({
    type: 'tool-settled',
    callId: call.callId,
    status: answer.isError ? 'failed' : 'completed',
  });
  emitEnd(call, answer.isError, environment);
}

async function writeRefusal(
  call: ToolCallPart,
  text: string,
  environment: ToolCallEnvironment,
): Promise<void> {
  // Displays pair start and end; a refused call starts and ends at once, with an error.
  environment.emit({
    type: 'tool-call-start',
    callId: call.callId,
    toolName: call.toolName,
    input: call.input,
  });
  await appendDurableResult(call, { output: text, isError: true }, environment);
  emitEnd(call, true, environment);
}

/** The call's tool message, appended and made durable before anything may point at it. */
async function appendDurableResult(
  call: ToolCallPart,
  answer: { output: JsonValue; isError: boolean },
  environment: ToolCallEnvironment,
): Promise<void> {
  const message: LoopMessage = {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        callId: call.callId,
        toolName: call.toolName,
        output: answer.output,
        isError: answer.isError,
      },
    ],
  };
  const record = await environment.writer.append({ type: 'message', ...message });
  await environment.writer.barrier();
  environment.onResult({ ...message, seq: record.seq });
}

function emitEnd(call: ToolCallPart, isError: boolean, environment: ToolCallEnvironment): void {
  environment.emit({
    type: 'tool-call-end',
    callId: call.callId,
    toolName: call.toolName,
    isError,
  });
}

/**
 * Validate a call's input against its tool's schema with the AI SDK's schema utilities (zod,
 * Standard Schema, or `jsonSchema(..., { validate })`). A bare `jsonSchema(...)` with no
 * validator is checked by {@link checkJsonSchema} (the common subset of JSON Schema). Never
 * throws.
 *
 * @example
 * import { validateInput } from 'llm-agent-revival/loop';
 * import { z } from 'zod';
 * await validateInput({ inputSchema: z.object({ path: z.string() }) }, { path: 'a.txt' });
 * // { ok: true, value: { path: 'a.txt' } }
 */
export async function validateInput(
  tool: Pick<ToolDefinition<unknown>, 'inputSchema'>,
  input: JsonValue,
): Promise<{ ok: true; value: unknown } | { ok: false; detail: string }> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return {
      ok: false,
      detail: `the input must be a JSON object, and it was ${JSON.stringify(input)}.`,
    };
  }
  try {
    const schema = asSchema(tool.inputSchema);
    if (schema.validate === undefined) {
      // A bare JSON Schema brings no validator: check the common subset ourselves.
      const problems = checkJsonSchema(await schema.jsonSchema, input);
      return problems.length === 0
        ? { ok: true, value: input }
        : { ok: false, detail: problems.join('; ') };
    }
    const result = await schema.validate(input);
    if (result.success) return { ok: true, value: result.value };
    return { ok: false, detail: errorText(result.error) };
  } catch (error) {
    return { ok: false, detail: errorText(error) };
  }
}

/** The run a key is derived for; a transcript without a session-meta is keyed by its path. */
function runOf(writer: TranscriptWriter): KeyedRun {
  const meta = writer.state.meta;
  if (meta === null) return { agentId: writer.path };
  return meta.createdAt === undefined
    ? { agentId: meta.agentId }
    : { agentId: meta.agentId, createdAt: meta.createdAt };
}

function isToolFailure(value: unknown): value is ToolFailure {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { isError?: unknown }).isError === true &&
    'output' in value
  );
}

/** A tool's answer as JSON the transcript can hold (undefined → null; a Date → its string). */
function toJsonValue(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as JsonValue);
  } catch {
    return String(value);
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message.replace(/\s+/g, ' ').trim() || error.name;
  return String(error);
}
