import { AsyncLocalStorage } from 'node:async_hooks';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { inputDigest } from '../../loop/input-digest.ts';
import {
  assistantMessageFromOutput,
  callsOf,
  fromModelMessages,
  type ModelOutputPart,
  toModelMessages,
} from '../../loop/model-messages.ts';
import { normalizeConversation } from '../../transcript/normalize-conversation.ts';
import type { Idempotency, JsonValue, Message, ToolCallPart } from '../../transcript/records.ts';
import type { TranscriptWriter } from '../../transcript/transcript-writer.ts';

/**
 * What the wrapped model and tools of one run write, in the Loop's write order: each model
 * turn as soon as it is whole (before any of its tools starts), each call's dispatch made
 * durable before its tool runs, its result made durable before it is settled and handed back.
 * Internal: a {@link RevivableRun} holds one, and its `within` makes it the current one.
 *
 * @example
 * const recorder = new RunRecorder(session, messages);
 * await recorder.recordPrompt(params.prompt);
 */
export class RunRecorder {
  readonly session: TranscriptWriter;
  /** The conversation as the transcript holds it (one tool message per result). */
  readonly #conversation: Message[];
  /** Calls with a result in the transcript. */
  readonly #answered = new Set<string>();
  /** Calls dispatched by this process (a second dispatch of one call is refused). */
  readonly #dispatched = new Set<string>();
  /** User turns recorded at the model call before the runner handed them over (OpenAI Agents). */
  readonly #ahead: string[] = [];

  constructor(session: TranscriptWriter, conversation: readonly Message[]) {
    this.session = session;
    this.#conversation = [...conversation];
    for (const message of conversation) this.#noteAnswers(message);
  }

  /** The conversation to continue from, as the AI SDK takes it. */
  get modelMessages(): ModelMessage[] {
    return toModelMessages(normalizeConversation(this.#conversation));
  }

  /** The conversation as the transcript holds it. */
  get messages(): readonly Message[] {
    return this.#conversation;
  }

  /**
   * Record what the program added to the conversation since the last recorded turn, as the
   * model is about to read it: the user turns after the last assistant turn that the
   * transcript does not hold yet, and the results of that turn's calls that no tool of ours
   * wrote (the SDK's answer to a call it refused: invalid input, no such tool). A fresh
   * transcript takes the whole conversation given. Image and file parts are refused (a
   * transcript holds text, reasoning, tool calls and results).
   */
  async recordPrompt(prompt: LanguageModelV4Prompt): Promise<void> {
    const given = prompt.filter((message) => message.role !== 'system');
    refuseUnstorable(given);
    if (this.#conversation.length === 0) {
      for (const message of fromModelMessages(given as ModelMessage[])) await this.#append(message);
      return;
    }
    const lastAssistant = given.findLastIndex((message) => message.role === 'assistant');
    const tail = given.slice(lastAssistant + 1);
    const recordedTail = this.#conversation.slice(
      this.#conversation.findLastIndex((message) => message.role === 'assistant') + 1,
    );
    const calls = new Map(this.#lastCalls().map((call) => [call.callId, call]));
    for (const message of fromModelMessages(
      tail.filter((m) => m.role === 'tool') as ModelMessage[],
    )) {
      for (const part of message.content) {
        if (part.type !== 'tool-result' || this.#answered.has(part.callId)) continue;
        if (!calls.has(part.callId)) continue;
        // Answered by the SDK itself, the tool never started: no dispatch, as the Loop's refusals.
        await this.#append({ role: 'tool', content: [part] });
      }
    }
    const users = tail.filter((message) => message.role === 'user');
    const recordedUsers = recordedTail.filter((message) => message.role === 'user').length;
    const fresh = users.slice(Math.min(recordedUsers, users.length));
    for (const message of fromModelMessages(fresh as ModelMessage[])) await this.#append(message);
    if (fresh.length > 0) await this.session.barrier();
  }

  /**
   * Record a model turn once it is whole. A turn asking for no tools is made durable at once
   * (it may be the run's last); a turn with calls is made durable by its first dispatch.
   */
  async recordTurn(content: readonly ModelOutputPart[]): Promise<void> {
    const given = assistantMessageFromOutput(content);
    await this.recordAssistant(given.content.length > 0 ? given : emptyTurn());
  }

  /** {@link recordTurn} of a turn already in our message model. */
  async recordAssistant(message: Message): Promise<void> {
    await this.#append(message);
    if (callsOf(message).length === 0) await this.session.barrier();
  }

  /** Record a user (or system) turn, durable. */
  async recordUser(message: Message): Promise<void> {
    await this.#append(message);
    await this.session.barrier();
  }

  /**
   * Record, durable, a user (or system) turn the model is about to read that its runner will
   * hand over only later (OpenAI Agents saves a run's input to its session when the run ends):
   * {@link takeAhead} then says it is recorded already.
   */
  async recordUserAhead(message: Message): Promise<void> {
    await this.recordUser(message);
    this.#ahead.push(JSON.stringify([message.role, message.content]));
  }

  /** Whether `message` was recorded ahead by {@link recordUserAhead} (and not taken yet): taken now. */
  takeAhead(message: Message): boolean {
    const at = this.#ahead.indexOf(JSON.stringify([message.role, message.content]));
    if (at === -1) return false;
    this.#ahead.splice(at, 1);
    return true;
  }

  /**
   * Record the answer to a call of the last turn that no tool of ours ran (the runner answered
   * it itself): no dispatch, as the Loop's refusals. A call already answered is left alone.
   */
  async recordUnrunAnswer(callId: string, output: JsonValue, isError: boolean): Promise<void> {
    const call = this.#lastCalls().find((candidate) => candidate.callId === callId);
    if (call === undefined || this.#answered.has(callId)) return;
    await this.#append({
      role: 'tool',
      content: [{ type: 'tool-result', callId, toolName: call.toolName, output, isError }],
    });
  }

  /** Whether a call id appears in any recorded assistant turn. */
  hasCall(callId: string): boolean {
    return this.#conversation.some(
      (message) =>
        message.role === 'assistant' && callsOf(message).some((call) => call.callId === callId),
    );
  }

  /**
   * Write a call's dispatch and make it durable: after this, and only after, may its tool
   * start. The call must be one of the last recorded turn's, not yet answered or dispatched.
   * `idempotency` undefined: the tool declared none, and the dispatch records `side-effect`,
   * undeclared. `idempotencyKey`, when given, is recorded in the dispatch (a reconcile asks by it).
   */
  async dispatch(
    callId: string,
    toolName: string,
    idempotency: Idempotency | undefined,
    joins?: string[],
    idempotencyKey?: string,
  ): Promise<ToolCallPart> {
    const call = this.#lastCalls().find((candidate) => candidate.callId === callId);
    if (call === undefined || call.toolName !== toolName) {
      throw new Error(
        `tool "${toolName}" call ${callId} is not in the transcript's last turn, so it was not run (was the model wrapped with revivableModel?)`,
      );
    }
    if (this.#dispatched.has(callId) || this.#answered.has(callId)) {
      throw new Error(`tool "${toolName}" call ${callId} was already run; it is not run twice`);
    }
    this.#dispatched.add(callId);
    await this.session.append({
      type: 'tool-dispatched',
      callId,
      toolName,
      inputDigest: inputDigest(call.input),
      idempotency: idempotency ?? 'side-effect',
      ...(idempotency === undefined ? { idempotencyDeclared: false as const } : {}),
      ...(joins === undefined ? {} : { joins }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    await this.session.barrier();
    return call;
  }

  /**
   * Dispatch a call of the last turn as a join on child runs (`joins`): a revival leaves it open
   * for the children's answers instead of answering it as interrupted. Read-only: what the
   * children do is recorded in their own transcripts.
   */
  async dispatchJoin(callId: string, agentIds: string[]): Promise<ToolCallPart> {
    const call = this.#lastCalls().find((candidate) => candidate.callId === callId);
    return this.dispatch(callId, call?.toolName ?? '', 'read-only', agentIds);
  }

  /**
   * Answer a join a crash left open (its dispatch written, its result not) with its children's
   * answer, and settle it. A call not in the last turn, or already answered, is left alone.
   */
  async answerJoin(callId: string, output: JsonValue, isError: boolean): Promise<void> {
    const call = this.#lastCalls().find((candidate) => candidate.callId === callId);
    if (call === undefined || this.#answered.has(callId)) return;
    await this.settle(call, output, isError);
  }

  /** Write a dispatched call's result, make it durable, then settle the call. */
  async settle(call: ToolCallPart, output: JsonValue, isError: boolean): Promise<void> {
    await this.#append({
      role: 'tool',
      content: [
        { type: 'tool-result', callId: call.callId, toolName: call.toolName, output, isError },
      ],
    });
    await this.session.barrier();
    await this.session.append({
      type: 'tool-settled',
      callId: call.callId,
      status: isError ? 'failed' : 'completed',
    });
  }

  /**
   * Answer calls of the last turn that never started (the process stopped first) without
   * running them: the SDK does not run calls it finds in the messages it is given.
   */
  async answerNeverStarted(callIds: readonly string[]): Promise<void> {
    for (const call of this.#lastCalls()) {
      if (!callIds.includes(call.callId) || this.#answered.has(call.callId)) continue;
      await this.#append({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: call.callId,
            toolName: call.toolName,
            output: NOT_STARTED_MESSAGE,
            isError: true,
          },
        ],
      });
    }
    await this.session.barrier();
  }

  /** The ids of the last turn's calls that have no result. */
  unansweredCalls(): string[] {
    return this.#lastCalls()
      .map((call) => call.callId)
      .filter((callId) => !this.#answered.has(callId));
  }

  #lastCalls(): ToolCallPart[] {
    const last = this.#conversation.findLast((message) => message.role === 'assistant');
    return last === undefined ? [] : callsOf(last);
  }

  async #append(message: Message): Promise<void> {
    await this.session.append({ type: 'message', ...message });
    this.#conversation.push(message);
    this.#noteAnswers(message);
  }

  #noteAnswers(message: Message): void {
    for (const part of message.content) {
      if (part.type === 'tool-result') this.#answered.add(part.callId);
    }
  }
}

/**
 * What a call of the last turn that never started is answered with after a revival: it was
 * not run, and is not run now.
 *
 * @example
 * console.log(NOT_STARTED_MESSAGE);
 */
export const NOT_STARTED_MESSAGE =
  'This call never started: the process stopped before it ran, and it has NOT been run since. Call it again if it is still needed.';

const current = new AsyncLocalStorage<RunRecorder>();

/**
 * Run `body` with `recorder` as the current run of the wrapped models and tools it calls,
 * however deep in the AI SDK they are called.
 *
 * @example
 * await withRecorder(recorder, () => agent.generate({ prompt: 'Hi' }));
 */
export function withRecorder<T>(recorder: RunRecorder, body: () => T): T {
  return current.run(recorder, body);
}

/**
 * The current run's recorder; a wrapped model or tool called outside any run is a programmer
 * error, and says so.
 *
 * @example
 * const recorder = currentRecorder('revivableModel');
 */
export function currentRecorder(who: string): RunRecorder {
  const recorder = current.getStore();
  if (recorder === undefined) {
    throw new TypeError(
      `${who}: called outside a revivable run; call the agent inside run.within(() => …) of RevivableRun.open(…)`,
    );
  }
  return recorder;
}

function refuseUnstorable(prompt: LanguageModelV4Prompt): void {
  for (const message of prompt) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      const type = part.type;
      if (type === 'file' || type === 'reasoning-file') {
        throw new TypeError(
          `revivableModel: a ${message.role} message has a file part, which a transcript cannot store (it holds text, reasoning, tool calls and their results): put the file's text, or a path or URL to it, in a text part`,
        );
      }
      if (type === 'tool-result' && part.output.type === 'content') {
        throw new TypeError(
          `revivableModel: tool "${part.toolName}" answered with content parts (toModelOutput), which a transcript cannot store: return text or JSON`,
        );
      }
    }
  }
}

function emptyTurn(): Message {
  return { role: 'assistant', content: [{ type: 'text', text: '' }] };
}
