import type {
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import type { LanguageModel } from 'ai';
import type { Message, MessageExtras } from '../transcript/records.ts';
import { callModel, type ModelTurnResult, type TurnFailure } from './call-model.ts';
import {
  COMPACTION_PREFIX,
  planCompaction,
  renderForSummary,
  SUMMARY_INSTRUCTIONS,
} from './compaction.ts';
import { callsOf, toModelMessages } from './model-messages.ts';
import { reusedCallId } from './reused-call-id.ts';
import { toProviderPrompt } from './provider-prompt.ts';
import { RunConversation } from './run-conversation.ts';
import {
  type CallOutcome,
  resolvePendingJoin,
  runToolCall,
  validateInput,
} from './run-tool-call.ts';
import { classifyTailCalls } from './tail-calls.ts';
import type {
  LoopEvent,
  LoopMessage,
  LoopOptions,
  LoopToolChoice,
  ModelCall,
  ModelCallSettings,
  RunResult,
  ToolDefinition,
} from './types.ts';

const DEFAULT_MAX_TURNS = 50;
const DEFAULT_ROUNDS = 3;
const DEFAULT_MAX_RETRY_DELAY = 60_000;

/**
 * {@link LoopOptions} as the {@link Loop} resolved them: every backend a model, with its
 * settings (the loop's `callSettings` with the backend's own laid over them) beside it.
 *
 * @example
 * const resolved: ResolvedLoopOptions = { ...options, backends: [model], backendSettings: [{}] };
 */
export type ResolvedLoopOptions = Omit<LoopOptions, 'backends'> & {
  backends: LanguageModel[];
  backendSettings: ModelCallSettings[];
};

/**
 * One run's mutable state (its conversation, usage and turn count) and the steps of its loop.
 * Internal to {@link Loop}; exported for it alone.
 *
 * @example
 * const state = new RunState(options, tools, signal, emit);
 * const result = await state.execute(conversation, declaredTools);
 */
export class RunState {
  readonly #options: ResolvedLoopOptions;
  readonly #tools: ReadonlyMap<string, ToolDefinition<unknown>>;
  readonly #signal: AbortSignal;
  readonly #emit: (event: LoopEvent) => void;
  #conversation = new RunConversation([]);
  #usage = { inputTokens: 0, outputTokens: 0 };
  #turns = 0;
  #finishReason = '';

  constructor(
    options: ResolvedLoopOptions,
    tools: ReadonlyMap<string, ToolDefinition<unknown>>,
    signal: AbortSignal,
    emit: (event: LoopEvent) => void,
  ) {
    this.#options = options;
    this.#tools = tools;
    this.#signal = signal;
    this.#emit = emit;
  }

  /**
   * Run the loop over `conversation` (what the transcript already holds) until the model answers
   * without calls, the turn cap, an abort, or a failure. `declareTools` is a thunk so that the tool
   * schemas are converted only when a model is first asked. Session failures reject: the
   * {@link Loop} turns them into a `failed` result.
   */
  async execute(
    conversation: LoopMessage[],
    declareTools: () => Promise<LanguageModelV4FunctionTool[]>,
  ): Promise<RunResult> {
    this.#conversation = new RunConversation(conversation);
    const writer = this.#options.writer;
    const maxTurns = this.#options.maxTurns ?? DEFAULT_MAX_TURNS;
    while (true) {
      if (this.#signal.aborted) return this.ended('aborted', 'aborted');
      const refusal = await this.#answerTail();
      if (refusal !== null) return refusal;
      if (this.#signal.aborted) return this.ended('aborted', 'aborted');
      const deliveries = this.#options.takeDeliveries?.() ?? [];
      for (const delivery of deliveries) {
        const record = await writer.append({ type: 'message', ...delivery });
        this.#conversation.append({ ...delivery, seq: record.seq });
      }
      // The subagents layer forgets what it handed over: make it durable before going on.
      if (deliveries.length > 0) await writer.barrier();
      const last = this.#conversation.last;
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
      // Normalized, checked and converted incrementally: only what was appended since the
      // last model call (see RunConversation).
      const prompt = this.#conversation.prepare(this.#options.system);
      if (!prompt.ok) {
        // Nothing is written: the conversation is not one this loop made, and a provider
        // would refuse it with a 400 (or the AI SDK before it).
        return this.ended('failed', 'error', `the conversation cannot be sent: ${prompt.detail}`);
      }
      this.#turns += 1;
      this.#emit({ type: 'turn-start', turn: this.#turns });
      const turn = await this.#callModel(prompt.prompt, await declareTools());
      if (!turn.ok) {
        if (turn.reason === 'aborted') return this.ended('aborted', 'aborted');
        await this.#writeFailure(turn.failure, turn.attempts);
        return this.ended('failed', 'error', turn.detail);
      }
      this.#usage.inputTokens += turn.usage.inputTokens;
      this.#usage.outputTokens += turn.usage.outputTokens;
      this.#finishReason = turn.finishReason;
      const given = turn.message.content.length > 0 ? turn.message : emptyTurn();
      const message = await this.#repairCalls(given);
      const record = await writer.append({ type: 'message', ...message });
      this.#conversation.append({ ...message, seq: record.seq });
      this.#emit({ type: 'turn-end', turn: this.#turns, finishReason: turn.finishReason });
    }
  }

  /**
   * Offer each malformed call of a new turn — a tool that does not exist, input its schema
   * refuses — to `repairToolCall`, before the turn is recorded: a repaired call is recorded in
   * its place (and checked again when it runs); one the hook leaves, or a hook that throws,
   * keeps the model's call, which is answered with an error result.
   */
  async #repairCalls(message: Message): Promise<Message> {
    const repair = this.#options.repairToolCall;
    if (repair === undefined || !message.content.some((part) => part.type === 'tool-call')) {
      return message;
    }
    const content = [];
    for (const part of message.content) {
      if (part.type !== 'tool-call') {
        content.push(part);
        continue;
      }
      const tool = this.#tools.get(part.toolName);
      let problem: string | null = null;
      if (tool === undefined) problem = `There is no tool named "${part.toolName}".`;
      else {
        const checked = await validateInput(tool, part.input);
        if (!checked.ok) problem = `Invalid input for tool "${part.toolName}": ${checked.detail}`;
      }
      if (problem === null) {
        content.push(part);
        continue;
      }
      let fixed: Awaited<ReturnType<typeof repair>> = null;
      try {
        fixed = await repair({
          toolName: part.toolName,
          input: part.input,
          problem,
          tools: [...this.#tools.keys()],
        });
      } catch {
        // A hook that fails repairs nothing: the model reads why its call was refused.
      }
      content.push(
        fixed === null ? part : { ...part, toolName: fixed.toolName, input: fixed.input },
      );
    }
    return { ...message, content };
  }

  /** Build the result; `status` decides which text is reported. */
  ended(status: RunResult['status'], stopReason: string, error?: string): RunResult {
    const last = this.#conversation.messages.findLast((message) => message.role === 'assistant');
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
    const calls = classifyTailCalls(this.#conversation.messages, this.#options.writer.state);
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
    // A reused call id would hand the new call the old call's idempotency key: nothing runs.
    const reused = reusedCallId(this.#conversation.messages);
    if (reused !== undefined && calls.some((entry) => entry.state === 'not-yet-run')) {
      return this.ended(
        'failed',
        'error',
        `tool call ${reused} reuses the id of an earlier call, so no call of its turn was run: its idempotency key would be the earlier call's`,
      );
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
      writer: this.#options.writer,
      tools: this.#tools,
      signal: this.#signal,
      emit: this.#emit,
      onResult: (message: LoopMessage) => this.#conversation.append(message),
      ...(this.#options.tracer === undefined ? {} : { tracer: this.#options.tracer }),
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
    prompt: LanguageModelV4Prompt,
    tools: readonly LanguageModelV4FunctionTool[],
    purpose: ModelCall['purpose'] = 'turn',
  ): Promise<ModelTurnResult> {
    const prepareCall = this.#options.prepareCall;
    const turn = this.#turns;
    return callModel({
      backends: this.#options.backends,
      settings: this.#options.backendSettings,
      ...(this.#options.tracer === undefined ? {} : { tracer: this.#options.tracer }),
      ...(prepareCall === undefined
        ? {}
        : { prepare: (backend: number) => prepareCall({ turn, backend, purpose }) }),
      prompt,
      tools,
      ...(purpose === 'turn' && this.#options.toolChoice !== undefined
        ? { toolChoice: providerToolChoice(this.#options.toolChoice) }
        : {}),
      signal: this.#signal,
      rounds: this.#options.backendRounds ?? DEFAULT_ROUNDS,
      sleep: this.#options.sleep ?? sleep,
      backoff: this.#options.backoff ?? this.#jitteredBackoff,
      maxRetryDelay: this.#options.maxRetryDelay ?? DEFAULT_MAX_RETRY_DELAY,
      now: this.#options.now ?? Date.now,
      ...(this.#options.modelIdleTimeout === undefined
        ? {}
        : { idleTimeout: this.#options.modelIdleTimeout }),
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
    const system = this.#options.system ?? '';
    // planCompaction's own first test, without re-measuring every message at every turn.
    if (this.#conversation.estimatedTokens(system) <= options.maxTokens) return 'skipped';
    const plan = planCompaction(this.#conversation.messages, options, system);
    if (plan === null) return 'skipped';
    const replaced = this.#conversation.messages.slice(plan.start, plan.start + plan.count);
    const prompt: Message = {
      role: 'user',
      content: [
        {
          type: 'text',
          text: `${renderForSummary(replaced)}\n\nSummarise the conversation above.`,
        },
      ],
    };
    const turn = await this.#callModel(
      toProviderPrompt({ instructions: SUMMARY_INSTRUCTIONS, messages: toModelMessages([prompt]) }),
      [],
      'compaction',
    );
    if (!turn.ok) return turn.reason === 'aborted' ? 'aborted' : 'skipped';
    this.#usage.inputTokens += turn.usage.inputTokens;
    this.#usage.outputTokens += turn.usage.outputTokens;
    const summaryText = turn.message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('')
      .trim();
    if (summaryText === '') return 'skipped';
    const summary = `${COMPACTION_PREFIX}\n${summaryText}`;
    const record = await this.#options.writer.append({
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
    this.#conversation.replace(plan.start, plan.count, summaryMessage);
    this.#emit({ type: 'compaction-end', fromSeq: plan.fromSeq, toSeq: plan.toSeq });
    return 'done';
  }

  /**
   * {@link defaultBackoff} with equal jitter (half fixed, half random): runs that failed
   * together do not all come back in the same millisecond.
   */
  readonly #jitteredBackoff = (round: number): number => {
    const base = defaultBackoff(round);
    return Math.round(base / 2 + (this.#options.random ?? Math.random)() * (base / 2));
  };

  /**
   * Record that every backend failed: a record of its own, not a message, so the model never
   * reads words it did not write, and the run stays revivable.
   */
  async #writeFailure(failure: TurnFailure, attempts: number): Promise<void> {
    await this.#options.writer.append({
      type: 'run-failed',
      cause: failure.cause,
      error: failure.error,
      backend: failure.backend,
      model: failure.model,
      attempts,
      ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
    });
  }
}

function providerToolChoice(choice: LoopToolChoice): LanguageModelV4ToolChoice {
  return typeof choice === 'string' ? { type: choice } : choice;
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
