import type { LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { normalizeConversation } from '../transcript/normalize-conversation.ts';
import { pairingViolations } from '../transcript/pairing-violations.ts';
import type { Message } from '../transcript/records.ts';
import { callsOf, toModelPrompt, toModelPromptBody } from './model-messages.ts';
import { toProviderMessages, toProviderPrompt } from './provider-prompt.ts';
import type { LoopMessage } from './types.ts';

/**
 * What a model is sent for one turn, or why the conversation cannot be sent. A refusal is data:
 * the run ends `failed` with the detail, having written nothing, rather than let a provider
 * answer 400.
 *
 * @example
 * const prompt: PreparedPrompt = conversation.prepare(options.system);
 * if (!prompt.ok) return run.ended('failed', 'error', prompt.detail); // 'message 3: …'
 */
export type PreparedPrompt =
  | { ok: true; prompt: LanguageModelV4Prompt }
  | { ok: false; detail: string };

/**
 * The last view a model was sent, kept so that the next turn converts only what came after it.
 * `view` is `normalizeConversation(messages.slice(0, length))`, `prompt` the provider prompt
 * made from it (its system message first, when there is one).
 */
interface SentView {
  length: number;
  system: string | undefined;
  view: Message[];
  prompt: LanguageModelV4Message[];
  callIds: Set<string>;
}

/**
 * One run's conversation (the messages it was given plus everything it appended, a
 * compaction's summary standing for the turns it replaced) and the prompt derived from it.
 *
 * A run used to normalize, check and convert its whole conversation for every model call:
 * O(n) a step, O(n²) a run. This keeps the last view a model was sent and its converted
 * messages, and for the next call normalizes, checks and converts only the messages appended
 * since. That is exact, not an approximation: a view that passed the pairing check answers
 * every call, so no later result can move back into it (normalization keeps the first answer
 * to a call), and `normalizeConversation(sent ++ added)` is `view(sent) ++
 * normalizeConversation(added)`. The check of the added part sees the sent part's call ids,
 * so a reused id is refused as it would be on the whole view. Whenever the shortcut's
 * conditions do not hold (nothing sent yet, a compaction replaced messages, the added part
 * does not open with an assistant turn, another system prompt), everything is recomputed.
 * test/loop/run-conversation.property.test.ts compares both ways over random conversations.
 *
 * Memory: the view and its provider prompt for everything since the last compaction, beside
 * the conversation itself; their strings are shared, not copied.
 *
 * @example
 * const conversation = new RunConversation(messages);
 * conversation.append(assistantTurn);
 * const prepared = conversation.prepare('Be brief.');
 * if (prepared.ok) await model.doStream({ prompt: prepared.prompt, abortSignal });
 */
export class RunConversation {
  #messages: LoopMessage[];
  #sent: SentView | null = null;
  /** JSON characters of the contents of `#messages[0 .. #counted)`, for the token estimate. */
  #characters = 0;
  #counted = 0;

  constructor(messages: readonly LoopMessage[]) {
    this.#messages = [...messages];
  }

  /** The conversation as the run holds it: file order, not normalized. */
  get messages(): readonly LoopMessage[] {
    return this.#messages;
  }

  /** The newest message: the loop decides from it whether the run has finished. */
  get last(): LoopMessage | undefined {
    return this.#messages.at(-1);
  }

  /**
   * Add a message the run has just written to the transcript (with its `seq`), so that memory
   * and file stay in the same order; the next {@link prepare} converts it.
   */
  append(message: LoopMessage): void {
    this.#messages.push(message);
  }

  /** A compaction: messages `[start, start + count)` give way to its summary. */
  replace(start: number, count: number, summary: LoopMessage): void {
    this.#messages = [
      ...this.#messages.slice(0, start),
      summary,
      ...this.#messages.slice(start + count),
    ];
    this.#sent = null;
    this.#characters = 0;
    this.#counted = 0;
  }

  /** `estimateTokens(messages, system)`, counting each message once however often asked. */
  estimatedTokens(system = ''): number {
    for (; this.#counted < this.#messages.length; this.#counted += 1) {
      const message = this.#messages[this.#counted] as LoopMessage;
      this.#characters += JSON.stringify(message.content).length;
    }
    return Math.ceil((system.length + this.#characters) / 4);
  }

  /**
   * The prompt for the next model call: exactly
   * `toProviderPrompt(toModelPrompt(normalizeConversation(messages), system))`, or, when that view breaks a pairing rule every provider shares, the first breach
   * (`message <index>: <provider's words>`). A prompt that can be sent becomes the base the
   * next call extends.
   */
  prepare(system?: string): PreparedPrompt {
    const sent = this.#sent;
    if (sent !== null && sent.system === system) {
      const added = normalizeConversation(this.#messages.slice(sent.length));
      if (added[0]?.role === 'assistant') return this.#extend(sent, added);
    }
    const view = normalizeConversation(this.#messages);
    const broken = unsendable(view);
    if (broken !== null) return { ok: false, detail: broken };
    const prompt = toProviderPrompt(toModelPrompt(view, system));
    const last = view.at(-1);
    // The shortcut needs a settled head (one non-system turn) and a sent view that does not
    // end in an assistant turn (whose next assistant turn would merge with it).
    this.#sent =
      last === undefined ||
      last.role === 'assistant' ||
      !view.some((message) => message.role !== 'system')
        ? null
        : {
            length: this.#messages.length,
            system,
            view,
            prompt,
            callIds: new Set(view.flatMap((message) => callsOf(message).map((c) => c.callId))),
          };
    return { ok: true, prompt: [...prompt] };
  }

  /**
   * For tests: the whole view the last prepared prompt came from, or null when none is kept.
   *
   * @example
   * assert.deepEqual(conversation.sentView(), normalizeConversation(conversation.messages));
   */
  sentView(): Message[] | null {
    return this.#sent === null ? null : [...this.#sent.view];
  }

  #extend(sent: SentView, added: Message[]): PreparedPrompt {
    const broken = unsendableAfter(sent, added);
    if (broken !== null) return { ok: false, detail: broken };
    sent.length = this.#messages.length;
    for (const message of added) {
      sent.view.push(message);
      for (const call of callsOf(message)) sent.callIds.add(call.callId);
    }
    for (const message of toProviderMessages(toModelPromptBody(added))) sent.prompt.push(message);
    const prompt = [...sent.prompt];
    if (sent.view.at(-1)?.role === 'assistant') this.#sent = null;
    return { ok: true, prompt };
  }
}

/**
 * The first breach of the pairing rules every provider shares (a call without its answer, an
 * answer without its call, a duplicate answer or call id, results not first), or null.
 * Provider-specific id formats are left to the provider: the ids are the model's own.
 *
 * @example
 * unsendable([{ role: 'assistant', content: [call] }]); // 'message 0: `tool_use` ids were found…'
 */
export function unsendable(view: readonly Message[]): string | null {
  const problem = pairingViolations(view, 'anthropic').find(
    (violation) => violation.code !== 'invalid-call-id',
  );
  return problem === undefined ? null : `message ${problem.index}: ${problem.message}`;
}

/**
 * {@link unsendable} of `sent.view ++ added`, looking only at `added`. The sent view breaks no
 * rule and ends in a user, tool or system turn, and `added` opens with an assistant turn, so
 * every turn's check stays on its side of the seam, except one: a call id of `added` already
 * used in the sent view. Those ids open the checked window as one answered turn, so that the
 * provider's "ids must be unique" check sees them; breaches inside that prefix are not `added`'s.
 */
function unsendableAfter(sent: SentView, added: readonly Message[]): string | null {
  const reused = new Set<string>();
  for (const message of added) {
    for (const call of callsOf(message)) if (sent.callIds.has(call.callId)) reused.add(call.callId);
  }
  const prefix: Message[] =
    reused.size === 0
      ? []
      : [
          {
            role: 'assistant',
            content: [...reused].map((callId) => ({
              type: 'tool-call' as const,
              callId,
              toolName: 'earlier',
              input: {},
            })),
          },
          {
            role: 'tool',
            content: [...reused].map((callId) => ({
              type: 'tool-result' as const,
              callId,
              toolName: 'earlier',
              output: '',
              isError: false,
            })),
          },
        ];
  const problem = pairingViolations([...prefix, ...added], 'anthropic').find(
    (violation) => violation.code !== 'invalid-call-id' && violation.index >= prefix.length,
  );
  if (problem === undefined) return null;
  return `message ${problem.index - prefix.length + sent.view.length}: ${problem.message}`;
}
