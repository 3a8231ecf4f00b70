import type { Message, ToolResultPart } from './records.ts';

/**
 * A provider's pairing rules.
 *
 * @example
 * const rules: PairingRules = 'openai-responses';
 */
export type PairingRules = 'anthropic' | 'openai-chat' | 'openai-responses';

/**
 * What kind of breach a {@link PairingViolation} is.
 *
 * @example
 * const code: PairingViolationCode = 'unanswered-call';
 * const unanswered = pairingViolations(conversationView(records)).filter((violation) => violation.code === code);
 */
export type PairingViolationCode =
  /** A call with no answer where the rules want one. */
  | 'unanswered-call'
  /** A result for a call that is asked nowhere in the conversation. */
  | 'orphan-result'
  /**
   * A result where the rules do not take it (not in the turn right after its call, or before
   * the call), for a call that has no answer where the rules want one.
   */
  | 'misplaced-result'
  /** Anthropic: a result after other content in the user turn that follows the calls. */
  | 'result-not-first'
  /** A second answer to one call (in the same turn, or anywhere else once it is answered). */
  | 'duplicate-result'
  /** Two calls with one id. */
  | 'duplicate-call-id'
  /** A call id a provider refuses (characters or length). */
  | 'invalid-call-id';

/**
 * One breach of one provider's pairing rules. `index` is the index, in the messages given, of
 * the message at fault: the assistant turn for a call, the tool (or user) message for a
 * result. `message` mirrors the provider's own error text where one is known (without its
 * `messages.N:` prefix, whose numbering is the provider's, not ours).
 *
 * @example
 * const violation: PairingViolation = {
 *   rules: 'anthropic', code: 'duplicate-call-id', index: 3, callId: 'call_1',
 *   message: '`tool_use` ids must be unique',
 * };
 */
export interface PairingViolation {
  rules: PairingRules;
  code: PairingViolationCode;
  index: number;
  callId?: string;
  message: string;
}

/**
 * A call, with the index of the message that asked it and its place among its calls.
 *
 * @example
 * const [first]: Call[] = callsOf(assistantTurn, 3); // { callId: 'call_1', index: 3, position: 0 }
 */
export interface Call {
  callId: string;
  index: number;
  position: number;
}

/**
 * The tool calls of a message, tagged with where they stand.
 *
 * @example
 * callsOf(assistantTurn, 3); // [{ callId: 'call_1', index: 3, position: 0 }, …]
 */
export function callsOf(message: Message, index: number): Call[] {
  const calls: Call[] = [];
  let position = 0;
  for (const part of message.content) {
    if (part.type !== 'tool-call') continue;
    calls.push({ callId: part.callId, index, position });
    position += 1;
  }
  return calls;
}

/**
 * The tool results of a message; only `tool` messages carry results.
 *
 * @example
 * resultsOf({ role: 'user', content: [{ type: 'text', text: 'hi' }] }); // []
 */
export function resultsOf(message: Message): ToolResultPart[] {
  return message.role === 'tool'
    ? message.content.filter((part): part is ToolResultPart => part.type === 'tool-result')
    : [];
}

/**
 * Stable sort by message index, so reports read top to bottom.
 *
 * @example
 * sortByIndex(violations).map((violation) => violation.index); // [1, 4, 4, 7]
 */
export function sortByIndex(violations: PairingViolation[]): PairingViolation[] {
  return violations.sort((left, right) => left.index - right.index);
}

/**
 * Name a result the rules cannot place more exactly than providers do: it answers a call that
 * is asked nowhere (`orphan-result`), a call already answered where the rules want
 * (`duplicate-result`), or a call left unanswered (`misplaced-result`, reported with the
 * call's own `unanswered-call`). The provider's wording stays: to a provider all three are the
 * same error.
 *
 * @example
 * return sortByIndex(classifyStrayResults(violations, messages));
 */
export function classifyStrayResults(
  violations: PairingViolation[],
  messages: readonly Message[],
): PairingViolation[] {
  const asked = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    for (const call of callsOf(message, index)) asked.add(call.callId);
  });
  const unanswered = new Set(
    violations.flatMap((violation) =>
      violation.code === 'unanswered-call' && violation.callId !== undefined
        ? [violation.callId]
        : [],
    ),
  );
  for (const violation of violations) {
    if (violation.code !== 'orphan-result' || violation.callId === undefined) continue;
    if (!asked.has(violation.callId)) continue;
    violation.code = unanswered.has(violation.callId) ? 'misplaced-result' : 'duplicate-result';
  }
  return violations;
}
