import type { LanguageModelV4CallOptions, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { FlexibleSchema, LanguageModel, ToolSet } from 'ai';
import type { Idempotency, JsonValue, Message, ToolResultPart } from '../transcript/records.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { LoopTracer } from './tracer.ts';

/**
 * A conversation turn as a loop takes it: the seq of the record it came from, when known. The
 * seq is what lets a compaction name the turns it replaces; a turn without one (not read from
 * the transcript) is never compacted.
 *
 * @example
 * const content: ContentPart[] = [{ type: 'text', text: 'Summarise README.md' }];
 * const record = await session.appendDurable({ type: 'message', role: 'user', content });
 * const messages: LoopMessage[] = [{ role: 'user', content, seq: record.seq }];
 * const result = await new Loop({ backends, writer: session }).run(messages);
 */
export type LoopMessage = Message & { seq?: number };

/**
 * What a running tool is given besides its input.
 *
 * @example
 * const execute: ToolDefinition<{ url: string }>['execute'] = async ({ url }, context) =>
 *   (await fetch(url, { signal: context.signal })).text();
 */
export interface ToolContext {
  /** The id of this call, as the model named it. */
  callId: string;
  /**
   * This call's idempotency key, recorded in its dispatch before the tool started and the same
   * in every process that ever handles the call. Hand it to the outside world (a payment's
   * `Idempotency-Key`, a message id) so that a repeat is recognised there, and so that
   * `reconcile` can ask about the call after a crash.
   */
  idempotencyKey: string;
  /** Aborted when the run is aborted: a tool should stop and return or throw. */
  signal: AbortSignal;
  /** The transcript of the run this call belongs to: a file `Session` or a store's writer. */
  writer: TranscriptWriter;
  /**
   * The same writer as `writer`, by its old name.
   *
   * @deprecated Read `writer`. "Session" names the file writer only; this alias stays until 1.0.
   */
  session: TranscriptWriter;
}

/**
 * What a tool returns when it wants the model to read a failure rather than a result. Returned,
 * not thrown, so the tool chooses the words (a thrown error reaches the model as
 * `The tool failed: <message>`); either way the call is settled `failed`.
 *
 * @example
 * const failure: ToolFailure = { isError: true, output: `${path} does not exist` }; // execute returns it
 */
export interface ToolFailure {
  isError: true;
  output: JsonValue;
}

/**
 * What a tool's `reconcile` is given besides the call's input.
 *
 * @example
 * const context: ReconcileContext = {
 *   callId: 'call_1', idempotencyKey: 'ik-0123', signal: AbortSignal.timeout(10_000),
 *   deadline: Date.now() + 10_000,
 * };
 */
export interface ReconcileContext {
  /** The call's id, as the model named it. */
  callId: string;
  /** The key the call was dispatched with (and `execute` was given). */
  idempotencyKey: string;
  /** Aborted at the deadline, or when the revival is abandoned: stop asking. */
  signal: AbortSignal;
  /** Epoch milliseconds after which the answer is not waited for (it counts as `unknown`). */
  deadline: number;
}

/**
 * What a reconcile answers about one interrupted call.
 *
 * @example
 * const answer: ReconcileAnswer = { outcome: 'completed', output: { chargeId: 'ch_1' } };
 */
export type ReconcileAnswer =
  | { outcome: 'completed'; output: JsonValue; isError?: boolean }
  | { outcome: 'did-not-happen' }
  | { outcome: 'unknown'; detail?: string };

/**
 * A tool a run can call. `idempotency` is recorded in the dispatch; it never makes a call
 * replay. `joins`, when present, makes a call a join: its dispatch names the agent ids it
 * waits for (this is how `task_wait` is recorded).
 *
 * @example
 * import { readFile } from 'node:fs/promises';
 * import type { ToolDefinition } from 'llm-agent-revival';
 * import { z } from 'zod';
 * const readTextFile: ToolDefinition<{ path: string }> = {
 *   name: 'read_file',
 *   description: 'Read a UTF-8 file',
 *   inputSchema: z.object({ path: z.string() }),
 *   idempotency: 'read-only',
 *   execute: async ({ path }) => readFile(path, 'utf8'),
 * };
 */
export interface ToolDefinition<Input = unknown> {
  name: string;
  description: string;
  /** A zod schema or `jsonSchema(...)` from the AI SDK; input is validated before dispatch. */
  inputSchema: FlexibleSchema<Input>;
  idempotency: Idempotency;
  /** Resolves to what the model reads; a thrown error becomes an error result. */
  execute(input: Input, context: ToolContext): Promise<JsonValue | ToolFailure>;
  /**
   * Asked by a revival about a call of this tool that was in flight when its run died: look in
   * the outside world (by the call's idempotency key) and say what happened. `completed` with the
   * output the call produced settles it with that output; `did-not-happen` tells the model the
   * call did not take effect (it is not retried); `unknown` — or a throw, an answer after
   * `context.deadline`, or anything that is not an answer — leaves the interrupted answer of a
   * revival without one. It must only look: a revival never runs a call again (docs/tools.md).
   */
  reconcile?(input: Input, context: ReconcileContext): Promise<ReconcileAnswer>;
  joins?(input: Input): string[];
}

/**
 * The answer to a pending-again join, supplied by the subagents layer: only it knows where the
 * awaited children are, so the loop asks rather than running the join's tool a second time.
 *
 * @example
 * const { resolveJoin } = await composer.loopOptionsFor(session); // a Composer supplies it
 * const answer = await resolveJoin?.({ callId: 'call_1', toolName: 'task_wait', agentIds: ['researcher-1'], signal: AbortSignal.timeout(60_000) });
 */
export type JoinResolver = (join: {
  callId: string;
  toolName: string;
  agentIds: string[];
  signal: AbortSignal;
}) => Promise<Pick<ToolResultPart, 'output' | 'isError'>>;

/**
 * Summarise older turns when the conversation passes a token budget.
 *
 * @example
 * new Loop({ backends, writer: session, compaction: { maxTokens: 100_000, keepRecent: 10 } });
 */
export interface CompactionOptions {
  /** Estimated tokens of the model-facing conversation above which older turns are summarised. */
  maxTokens: number;
  /** How many of the most recent messages are never summarised (default 6). */
  keepRecent?: number;
}

/**
 * What goes with a model call besides the prompt and the tools — the settings the AI SDK's
 * `streamText` takes, passed to the provider as `streamText` passes them: sampling
 * (`temperature`, `topP`, `topK`, penalties, `seed`), `maxOutputTokens`, `stopSequences`,
 * `reasoning`, HTTP `headers`, and `providerOptions` (`{ openai: { … } }`).
 *
 * @example
 * const settings: ModelCallSettings = { temperature: 0, maxOutputTokens: 2000,
 *   providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 4000 } } } };
 */
export interface ModelCallSettings {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  seed?: number;
  reasoning?: NonNullable<LanguageModelV4CallOptions['reasoning']>;
  headers?: Record<string, string>;
  providerOptions?: SharedV4ProviderOptions;
}

/**
 * A backend with settings of its own, laid over the loop's `callSettings` (headers and each
 * provider's options merged key by key).
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import type { BackendOptions } from 'llm-agent-revival/loop';
 * const backend: BackendOptions = { model: openai('gpt-5'), providerOptions: { openai: { reasoningEffort: 'low' } } };
 */
export interface BackendOptions extends ModelCallSettings {
  model: LanguageModel;
}

/**
 * A model call about to be made, for {@link LoopOptions.prepareCall}: the run's turn (from 1),
 * the backend's place in the list (from 0), and whether it is the run's turn or a compaction's
 * summary.
 *
 * @example
 * const prepareCall = (call: ModelCall) => (call.purpose === 'compaction' ? { temperature: 0 } : undefined);
 */
export interface ModelCall {
  turn: number;
  backend: number;
  purpose: 'turn' | 'compaction';
}

/**
 * A malformed tool call the model made — a tool that does not exist, or input its schema
 * refuses — and why, for {@link LoopOptions.repairToolCall}.
 *
 * @example
 * const broken: BrokenToolCall = { toolName: 'read', input: { file: 'a' }, problem: 'There is no tool named "read"…', tools: ['read_file'] };
 */
export interface BrokenToolCall {
  toolName: string;
  input: JsonValue;
  /** What is wrong, as the model would read it in the error result. */
  problem: string;
  /** The tools the run has. */
  tools: string[];
}

/**
 * Everything a loop needs. Only `backends` and `writer` are required; the rest has defaults
 * or is a hook the subagents layer fills in.
 *
 * @example
 * import { anthropic } from '@ai-sdk/anthropic';
 * import { openai } from '@ai-sdk/openai';
 * import { createProviderRegistry } from 'ai';
 * import type { LoopOptions } from 'llm-agent-revival';
 * const options: LoopOptions = {
 *   backends: ['anthropic:claude-sonnet-4-5', 'openai:gpt-5'],
 *   provider: createProviderRegistry({ anthropic, openai }),
 *   writer: session,
 *   tools,
 *   maxTurns: 20,
 * };
 */
export interface LoopOptions {
  /**
   * Tried in order on transport errors, 5xx and 429 (with backoff). A string is a model id:
   * resolved through `provider` when one is given, else handed to the AI SDK as it is (its
   * global provider, by default the Vercel AI Gateway). A {@link BackendOptions} gives a
   * backend settings of its own.
   */
  backends: (LanguageModel | BackendOptions)[];
  /** Settings for every model call (each backend's own laid over them). */
  callSettings?: ModelCallSettings;
  /** Settings for one call, laid over the backend's: called before each model call. */
  prepareCall?: (call: ModelCall) => ModelCallSettings | undefined;
  /**
   * A chance to mend a malformed tool call before it is recorded, as the AI SDK's
   * `experimental_repairToolCall`: return the call to record instead, or null to leave it — it
   * is then answered with an error result the model reads. The repaired call is what the
   * transcript holds (the model's own broken one is not kept), and it is checked again.
   */
  repairToolCall?: (call: BrokenToolCall) => Promise<{ toolName: string; input: JsonValue } | null>;
  /** Aborts the run, as `run.abort()` does, with the signal's reason. */
  signal?: AbortSignal;
  /**
   * An OpenTelemetry tracer (`trace.getTracer(…)`, or anything with its `startSpan`): each model
   * call becomes a span `ai.streamText.doStream` (`ai.model.provider`, `ai.model.id`,
   * `ai.response.finishReason`, `ai.usage.*`), each tool run a span `ai.toolCall`
   * (`ai.toolCall.name`, `ai.toolCall.id`), failures with an error status.
   */
  tracer?: LoopTracer;
  /**
   * Resolves string backends such as `'anthropic:claude-sonnet-4-5'`: the AI SDK's
   * `createProviderRegistry(...)`, or a single provider (`createOpenAI(...)`).
   */
  provider?: { languageModel(modelId: string): LanguageModel };
  /**
   * Where the run is recorded: any {@link TranscriptWriter} — a file `Session`
   * (`Session.create`), a store's writer (`store.create`, `store.open`), or a revival's. (Called
   * `session` before 0.4; that name is refused with an error saying so.)
   */
  writer: TranscriptWriter;
  /**
   * The tools: an AI SDK `ToolSet` (`{ weather: tool({ … }) }`, the name is the key) or a list
   * of {@link ToolDefinition}s. What the loop cannot honour in a `tool()` is refused when the
   * loop is built (see `toolDefinitionsOf`).
   */
  tools?: LoopTools;
  /**
   * For a `ToolSet`: what running each tool twice would do, by name. A tool not named is
   * recorded `side-effect`. (A `ToolDefinition` declares its own.)
   */
  idempotency?: ToolIdempotency;
  /**
   * As the AI SDK's `toolChoice`: `auto` (the default), `none`, `required`, or
   * `{ type: 'tool', toolName }`, for every turn of the run.
   */
  toolChoice?: LoopToolChoice;
  /** As the AI SDK's `activeTools`: only these tools are offered to the model, or run. */
  activeTools?: string[];
  system?: string;
  /** Stop after this many model turns of this run (default 50); the run ends `max-turns`. */
  maxTurns?: number;
  compaction?: CompactionOptions;
  /** Answers joins left open by a revival (the pending-again state). */
  resolveJoin?: JoinResolver;
  /**
   * Turns to deliver at the next safe point (never between a call and its result): the
   * subagents layer's background deliveries. Called at each safe point; returns and forgets.
   */
  takeDeliveries?: () => Message[];
  /** Injected for deterministic tests. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Backoff before the next round over the backends: round 1, 2, … → milliseconds. Default:
   * {@link defaultBackoff} (1 s, 2 s, 4 s … capped at 30 s) with equal jitter (half of it
   * random). A `retry-after` a backend sends makes the wait longer, never shorter.
   */
  backoff?: (attempt: number) => number;
  /**
   * How many times the whole backend list is tried for one turn (default 3). Within a round a
   * failed backend hands over to the next at once; `backoff(round)` is waited between rounds.
   */
  backendRounds?: number;
  /**
   * The longest `retry-after` (or `retry-after-ms`) the loop waits for, in milliseconds
   * (default 60 000). A backend that asks for longer is not asked again during the turn.
   */
  maxRetryDelay?: number;
  /** Randomness for the backoff's jitter, in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** The clock, in epoch milliseconds (default `Date.now`): reads a `retry-after` date. */
  now?: () => number;
  /**
   * Milliseconds a backend may send nothing (before its first stream part, or between two)
   * before the attempt counts as a transport failure and the next backend is tried. Default:
   * no limit.
   */
  modelIdleTimeout?: number;
}

/**
 * Which tools the model may call, as the AI SDK's `toolChoice` says it.
 *
 * @example
 * const toolChoice: LoopToolChoice = { type: 'tool', toolName: 'weather' };
 */
export type LoopToolChoice = 'auto' | 'none' | 'required' | { type: 'tool'; toolName: string };

/**
 * How a run ended.
 *
 * @example
 * const run = new Loop({ backends, writer: session }).start('Summarise README.md');
 * process.exitCode = (await run).status === 'finished' ? 0 : 1;
 */
export type RunStatus = 'finished' | 'failed' | 'aborted' | 'max-turns';

/**
 * What an awaited run resolves to. It never rejects: every way a run can end, a provider
 * outage or a transcript that cannot be written included, is a status the caller handles
 * rather than an exception it might forget to catch.
 *
 * @example
 * const result: RunResult = await new Loop({ backends, writer: session }).start('Summarise README.md');
 * if (result.status === 'failed') console.error(result.error);
 */
export interface RunResult {
  status: RunStatus;
  /** The text of the final assistant turn ('' when there was none). */
  text: string;
  usage: { inputTokens: number; outputTokens: number };
  /** The model's finish reason of the last turn, or why the run stopped. */
  stopReason: string;
  /** For `failed`: one line saying why. */
  error?: string;
}

/**
 * Progress, for displays. Names follow `<noun>-<action>`. Events are not the record: what
 * happened is in the transcript, so a display that misses or drops some loses nothing.
 *
 * @example
 * const run = new Loop({ backends, writer: session }).start('Summarise README.md');
 * for await (const event of run) {
 *   if (event.type === 'text-delta') process.stdout.write(event.text);
 * }
 */
export type LoopEvent =
  | { type: 'turn-start'; turn: number }
  | { type: 'turn-end'; turn: number; finishReason: string }
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call-start'; callId: string; toolName: string; input: JsonValue }
  | { type: 'tool-call-end'; callId: string; toolName: string; isError: boolean }
  | { type: 'join-wait-start'; callId: string; agentIds: string[] }
  /**
   * A backend failed. Text deltas streamed before the failure belong to no turn: a display
   * should drop them when `willRetry` (the next backend's turn starts over).
   */
  | { type: 'model-error'; backend: number; attempt: number; message: string; willRetry: boolean }
  /** The provider ignored or adapted part of the request (an unsupported setting, say). */
  | { type: 'model-warning'; message: string }
  | { type: 'compaction-end'; fromSeq: number; toSeq: number }
  | { type: 'run-end'; result: RunResult };

/**
 * A started run: await it for the result, iterate it for events, abort it to stop.
 *
 * @example
 * const run = new Loop({ backends, writer: session }).start('Summarise README.md');
 * const timer = setTimeout(() => run.abort('took too long'), 60_000);
 * const result = await run; // status 'aborted' if the timer fired first
 * clearTimeout(timer);
 */
export interface RunHandle extends PromiseLike<RunResult>, AsyncIterable<LoopEvent> {
  readonly result: Promise<RunResult>;
  abort(reason?: string): void;
}

/**
 * Idempotency by tool name, for the tools of an AI SDK `ToolSet` (which has no place for it):
 * a tool not named is recorded `side-effect`, the safe reading for a person checking what an
 * interrupted call may have done.
 *
 * @example
 * const idempotency: ToolIdempotency = { weather: 'read-only', write_note: 'idempotent' };
 */
export type ToolIdempotency = Record<string, Idempotency>;

/**
 * The tools a loop takes: our `ToolDefinition`s, or an AI SDK `ToolSet` of `tool()` objects (the
 * name is the key).
 *
 * @example
 * import { tool } from 'ai';
 * import type { LoopTools } from 'llm-agent-revival/loop';
 * import { z } from 'zod';
 * const tools: LoopTools = {
 *   weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }),
 *     execute: async ({ city }) => `Sunny in ${city}` }),
 * };
 */
export type LoopTools = ToolDefinition<unknown>[] | ToolSetByName;

/**
 * An AI SDK `ToolSet` with no numeric keys, so that a list of `ToolDefinition`s written inline
 * keeps its contextual type (an array literal would otherwise be read against both).
 *
 * @example
 * import { tool } from 'ai';
 * import type { ToolSetByName } from 'llm-agent-revival/loop';
 * import { z } from 'zod';
 * const weather = tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => city });
 * const tools: ToolSetByName = { weather };
 */
export type ToolSetByName = ToolSet & { [index: number]: never };
