import { asSchema, jsonSchema, type Tool, type ToolSet } from 'ai';
import { normalizeConversation } from '../transcript/normalize-conversation.ts';
import type { Message, MessageExtras } from '../transcript/records.ts';
import { SessionError } from '../transcript/session-error.ts';
import { callModel, type ModelTurnResult } from './call-model.ts';
import {
  COMPACTION_PREFIX,
  planCompaction,
  renderForSummary,
  SUMMARY_INSTRUCTIONS,
} from './compaction.ts';
import { callsOf, toModelMessages } from './model-messages.ts';
import { RunChannel } from './run-handle.ts';
import { type CallOutcome, resolvePendingJoin, runToolCall } from './run-tool-call.ts';
import { classifyTailCalls } from './tail-calls.ts';
import type {
  LoopEvent,
  LoopMessage,
  LoopOptions,
  RunHandle,
  RunResult,
  ToolDefinition,
} from './types.ts';

const DEFAULT_MAX_TURNS = 50;
const DEFAULT_ROUNDS = 2;

/**
 * The key in `extras` of the assistant turn a failed run ends with: `{ kind, detail, attempts }`.
 *
 * @example
 * const failure = lastMessage.extras?.[RUN_ERROR_EXTRA]; // set when every backend failed
 */
export const RUN_ERROR_EXTRA = 'error';

/**
 * The durable agent loop (SPEC §3, §6): it asks a model for a turn, runs the tools the turn
 * calls, and goes round until the model answers without calls, keeping the transcript's write
 * order at every step:
 *
 * 1. every turn is appended as it happens;
 * 2. for each call, `tool-dispatched` is appended and made durable before the tool starts;
 * 3. the call's result is appended (as its own tool message, so that a finished sibling of a
 *    parallel batch survives a crash) and made durable before its `tool-settled`;
 * 4. no other message is written while the current turn has unanswered calls: background
 *    deliveries (`takeDeliveries`) are taken only once every call is answered.
 *
 * Invalid input (and a call to a tool that does not exist) is answered with an error result
 * the model reads, with no dispatch: the tool never started, so there is nothing to settle.
 *
 * When every backend fails, the run ends `failed` and the transcript ends with an assistant
 * turn saying so, marked `extras.error = { kind: 'model-unavailable', detail, attempts }`. It
 * asks for no tools, so revival's `inspect` reports the run `finished`: it ended, with a
 * reason a human can read, and an automated reviver will not spend tokens retrying a provider
 * outage for ever. A person who wants to carry on appends a user turn and runs again. An
 * aborted run writes nothing more: it stays revivable.
 *
 * @example
 * const loop = new Loop({ backends: [openai('gpt-5')], session, tools: [readFile] });
 * const run = loop.start('Summarise README.md');
 * for await (const event of run) if (event.type === 'text-delta') process.stdout.write(event.text);
 * const result = await run; // { status: 'finished', text, usage, stopReason }
 */
export class Loop {
  readonly #options: LoopOptions;
  readonly #tools: ReadonlyMap<string, ToolDefinition<unknown>>;
  #declaredTools: Promise<ToolSet> | undefined;

  constructor(options: LoopOptions) {
    if (!Array.isArray(options.backends) || options.backends.length === 0) {
      throw new TypeError('Loop: `backends` must list at least one language model');
    }
    const tools = new Map<string, ToolDefinition<unknown>>();
    for (const tool of options.tools ?? []) {
      if (tools.has(tool.name)) throw new TypeError(`Loop: two tools are named "${tool.name}"`);
      tools.set(tool.name, tool);
    }
    this.#options = options;
    this.#tools = tools;
  }

  /**
   * Carry on a conversation already recorded in the session: `messages` is what the transcript
   * holds (a revival's `messages`, a `conversationView` of the records, or the first user turn
   * a caller has just appended). The loop appends only what comes after. The handle never
   * rejects; iterate it for progress, `abort()` it to stop.
   *
   * @example
   * const revived = await revive({ path, agentId: 'main', maxRevivals: 2 });
   * if (revived.ok) await new Loop({ backends, session: revived.session }).run(revived.messages);
   */
  run(messages: readonly LoopMessage[]): RunHandle {
    return this.#launch(async () => [...messages]);
  }

  /**
   * Start a fresh run: append the user turn durably, then run. For a session whose
   * conversation is empty (only its `session-meta`); carrying on a recorded conversation is
   * {@link run}'s job, and calling this on one throws a TypeError.
   *
   * @example
   * const session = await Session.create(path, meta);
   * const result = await new Loop({ backends: [model], session }).start('Hello');
   */
  start(prompt: string | Message): RunHandle {
    if (this.#options.session.state.messages > 0) {
      throw new TypeError(
        `Loop.start: ${this.#options.session.path} already holds a conversation; use run(messages)`,
      );
    }
    const message: Message =
      typeof prompt === 'string'
        ? { role: 'user', content: [{ type: 'text', text: prompt }] }
        : prompt;
    return this.#launch(async () => {
      const record = await this.#options.session.appendDurable({ type: 'message', ...message });
      return [{ ...message, seq: record.seq }];
    });
  }

  #launch(prepare: () => Promise<LoopMessage[]>): RunHandle {
    const controller = new AbortController();
    const channel = new RunChannel(controller);
    const run = new RunState(this.#options, this.#tools, controller.signal, (event) =>
      channel.emit(event),
    );
    void (async () => {
      let result: RunResult;
      try {
        const conversation = await prepare();
        result = await run.execute(conversation, () => this.#sdkTools());
      } catch (error) {
        const what = SessionError.isInstance(error)
          ? 'the transcript could not be written'
          : 'the run stopped on an unexpected error';
        result = run.ended('failed', 'error', `${what}: ${text(error)}`);
      }
      try {
        await this.#options.session.barrier();
      } catch (error) {
        if (result.status !== 'failed') {
          result = run.ended(
            'failed',
            'error',
            `the transcript could not be synced: ${text(error)}`,
          );
        }
      }
      channel.end(result);
    })();
    return channel.handle;
  }

  /** The tools as the model sees them: names, descriptions, JSON Schemas; no `execute`. */
  #sdkTools(): Promise<ToolSet> {
    this.#declaredTools ??= (async () => {
      const declared: ToolSet = {};
      for (const tool of this.#tools.values()) {
        const schema = await asSchema(tool.inputSchema).jsonSchema;
        // Validation is the loop's, before dispatch: the SDK only parses the JSON.
        declared[tool.name] = {
          description: tool.description,
          inputSchema: jsonSchema(schema),
        } as Tool;
      }
      return declared;
    })();
    return this.#declaredTools;
  }
}

/** One run's mutable state: its conversation, usage and turn count. */
class RunState {
  readonly #options: LoopOptions;
  readonly #tools: ReadonlyMap<string, ToolDefinition<unknown>>;
  readonly #signal: AbortSignal;
  readonly #emit: (event: LoopEvent) => void;
  #conversation: LoopMessage[] = [];
  #usage = { inputTokens: 0, outputTokens: 0 };
  #turns = 0;
  #finishReason = '';

  constructor(
    options: LoopOptions,
    tools: ReadonlyMap<string, ToolDefinition<unknown>>,
    signal: AbortSignal,
    emit: (event: LoopEvent) => void,
  ) {
    this.#options = options;
    this.#tools = tools;
    this.#signal = signal;
    this.#emit = emit;
  }

  async execute(conversation: LoopMessage[], sdkTools: () => Promise<ToolSet>): Promise<RunResult> {
    this.#conversation = conversation;
    const session = this.#options.session;
    const maxTurns = this.#options.maxTurns ?? DEFAULT_MAX_TURNS;
    while (true) {
      if (this.#signal.aborted) return this.ended('aborted', 'aborted');
      const refusal = await this.#answerTail();
      if (refusal !== null) return refusal;
      if (this.#signal.aborted) return this.ended('aborted', 'aborted');
      const deliveries = this.#options.takeDeliveries?.() ?? [];
      for (const delivery of deliveries) {
        const record = await session.append({ type: 'message', ...delivery });
        this.#conversation.push({ ...delivery, seq: record.seq });
      }
      // The subagents layer forgets what it handed over: make it durable before going on.
      if (deliveries.length > 0) await session.barrier();
      const last = this.#conversation.at(-1);
      if (last === undefined)
        return this.ended('failed', 'error', 'there is no conversation to run');
      if (last.role === 'assistant' && callsOf(last).length === 0) {
        return this.ended('finished', this.#finishReason || 'stop');
      }
      if (this.#turns >= maxTurns) return this.ended('max-turns', 'max-turns');
      if (this.#options.compaction !== undefined) {
        const compacted = await this.#compact();
        if (compacted === 'aborted') return this.ended('aborted', 'aborted');
      }
      this.#turns += 1;
      this.#emit({ type: 'turn-start', turn: this.#turns });
      const turn = await this.#callModel(
        toModelMessages(normalizeConversation(this.#conversation)),
        await sdkTools(),
        this.#options.system,
      );
      if (!turn.ok) {
        if (turn.reason === 'aborted') return this.ended('aborted', 'aborted');
        await this.#writeFailure(turn.detail, turn.attempts);
        return this.ended('failed', 'error', turn.detail);
      }
      this.#usage.inputTokens += turn.usage.inputTokens;
      this.#usage.outputTokens += turn.usage.outputTokens;
      this.#finishReason = turn.finishReason;
      const message = turn.message.content.length > 0 ? turn.message : emptyTurn();
      const record = await session.append({ type: 'message', ...message });
      this.#conversation.push({ ...message, seq: record.seq });
      this.#emit({ type: 'turn-end', turn: this.#turns, finishReason: turn.finishReason });
    }
  }

  /** Build the result; `status` decides which text is reported. */
  ended(status: RunResult['status'], stopReason: string, error?: string): RunResult {
    const last = this.#conversation.findLast((message) => message.role === 'assistant');
    const finalText =
      status === 'finished' && last !== undefined
        ? last.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
        : '';
    const result: RunResult = {
      status,
      text: finalText,
      usage: { ...this.#usage },
      stopReason,
    };
    if (error !== undefined) result.error = error;
    return result;
  }

  /**
   * Answer the calls of the last assistant turn that nothing answered yet: run the ones never
   * dispatched, await pending-again joins. Returns a failed result when the tail is one only
   * revival may touch.
   */
  async #answerTail(): Promise<RunResult | null> {
    const calls = classifyTailCalls(this.#conversation, this.#options.session.state);
    const blocked = calls.find(
      (entry) => entry.state === 'in-flight' || entry.state === 'settled-unanswered',
    );
    if (blocked !== undefined) {
      const why =
        blocked.state === 'in-flight'
          ? 'was dispatched and never settled: revive the transcript before running it'
          : 'was settled but has no result in the conversation given to the run';
      return this.ended('failed', 'error', `tool call ${blocked.call.callId} ${why}`);
    }
    if (
      calls.some((entry) => entry.state === 'pending-again') &&
      this.#options.resolveJoin === undefined
    ) {
      return this.ended(
        'failed',
        'error',
        'the conversation has a pending join but the loop was given no resolveJoin',
      );
    }
    const environment = {
      session: this.#options.session,
      tools: this.#tools,
      signal: this.#signal,
      emit: this.#emit,
      onResult: (message: LoopMessage) => this.#conversation.push(message),
    };
    const work: Promise<CallOutcome>[] = [];
    for (const entry of calls) {
      if (entry.state === 'not-yet-run') work.push(runToolCall(entry.call, environment));
      else if (entry.state === 'pending-again' && this.#options.resolveJoin !== undefined) {
        work.push(
          resolvePendingJoin(entry.call, entry.agentIds, this.#options.resolveJoin, environment),
        );
      }
    }
    const outcomes = await Promise.allSettled(work);
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure !== undefined) throw (failure as PromiseRejectedResult).reason;
    return null;
  }

  #callModel(
    messages: ReturnType<typeof toModelMessages>,
    tools: ToolSet,
    system: string | undefined,
  ): Promise<ModelTurnResult> {
    return callModel({
      backends: this.#options.backends,
      messages,
      ...(system === undefined ? {} : { system }),
      tools,
      signal: this.#signal,
      rounds: this.#options.backendRounds ?? DEFAULT_ROUNDS,
      sleep: this.#options.sleep ?? sleep,
      backoff: this.#options.backoff ?? defaultBackoff,
      emit: this.#emit,
    });
  }

  /**
   * Past the token budget, summarise the oldest whole turns into a `compaction` record and
   * replace them in the conversation by its summary, exactly as `conversationView` will show
   * the transcript later. A summariser that fails leaves the conversation as it was.
   */
  async #compact(): Promise<'done' | 'skipped' | 'aborted'> {
    const options = this.#options.compaction;
    if (options === undefined) return 'skipped';
    const plan = planCompaction(this.#conversation, options, this.#options.system ?? '');
    if (plan === null) return 'skipped';
    const replaced = this.#conversation.slice(plan.start, plan.start + plan.count);
    const prompt: Message = {
      role: 'user',
      content: [
        {
          type: 'text',
          text: `${renderForSummary(replaced)}\n\nSummarise the conversation above.`,
        },
      ],
    };
    const turn = await this.#callModel(toModelMessages([prompt]), {}, SUMMARY_INSTRUCTIONS);
    if (!turn.ok) return turn.reason === 'aborted' ? 'aborted' : 'skipped';
    this.#usage.inputTokens += turn.usage.inputTokens;
    this.#usage.outputTokens += turn.usage.outputTokens;
    const summaryText = turn.message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('')
      .trim();
    if (summaryText === '') return 'skipped';
    const summary = `${COMPACTION_PREFIX}\n${summaryText}`;
    const record = await this.#options.session.append({
      type: 'compaction',
      fromSeq: plan.fromSeq,
      toSeq: plan.toSeq,
      summary,
    });
    const extras: MessageExtras = { injected: 'compaction' };
    const summaryMessage: LoopMessage = {
      role: 'user',
      content: [{ type: 'text', text: summary }],
      extras,
      seq: record.seq,
    };
    this.#conversation = [
      ...this.#conversation.slice(0, plan.start),
      summaryMessage,
      ...this.#conversation.slice(plan.start + plan.count),
    ];
    this.#emit({ type: 'compaction-end', fromSeq: plan.fromSeq, toSeq: plan.toSeq });
    return 'done';
  }

  async #writeFailure(detail: string, attempts: number): Promise<void> {
    const message: Message = {
      role: 'assistant',
      content: [{ type: 'text', text: `The run failed: ${detail}` }],
      extras: { [RUN_ERROR_EXTRA]: { kind: 'model-unavailable', detail, attempts } },
    };
    const record = await this.#options.session.append({ type: 'message', ...message });
    this.#conversation.push({ ...message, seq: record.seq });
  }
}

function emptyTurn(): Message {
  return { role: 'assistant', content: [{ type: 'text', text: '' }] };
}

/**
 * Exponential backoff: 1 s, 2 s, 4 s, … capped at 30 s.
 *
 * @example
 * defaultBackoff(3); // 4000
 */
export function defaultBackoff(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(attempt - 1, 0), 30_000);
}

function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
