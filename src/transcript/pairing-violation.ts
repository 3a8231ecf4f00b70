import type { Message, ToolResultPart } from './records.ts';

/** A provider's pairing rules. */
export type PairingRules = 'anthropic' | 'openai-chat' | 'openai-responses';

/** What kind of breach a {@link PairingViolation} is. */
export type PairingViolationCode =
  /** A call with no answer where the rules want one. */
  | 'unanswered-call'
  /** A result with no call where the rules want one (never asked, or not in the turn before). */
  | 'orphan-result'
  /** Anthropic: a result after other content in the user turn that follows the calls. */
  | 'result-not-first'
  /** A second answer to one call. */
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
 */
export interface PairingViolation {
  rules: PairingRules;
  code: PairingViolationCode;
  index: number;
  callId?: string;
  message: string;
}

/** A call, with the index of the message that asked it and its place among its calls. */
export interface Call {
  callId: string;
  index: number;
  position: number;
}

/** The tool calls of a message, tagged with where they stand. */
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

/** The tool results of a message; only `tool` messages carry results. */
export function resultsOf(message: Message): ToolResultPart[] {
  return message.role === 'tool'
    ? message.content.filter((part): part is ToolResultPart => part.type === 'tool-result')
    : [];
}

/** Stable sort by message index, so reports read top to bottom. */
export function sortByIndex(violations: PairingViolation[]): PairingViolation[] {
  return violations.sort((left, right) => left.index - right.index);
}
