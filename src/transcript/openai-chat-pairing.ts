import {
  type Call,
  callsOf,
  classifyStrayResults,
  type PairingViolation,
  type PairingViolationCode,
  resultsOf,
  sortByIndex,
} from './pairing-rules.ts';
import type { Message } from './records.ts';

/**
 * The longest `tool_calls[].id` OpenAI Chat Completions takes.
 *
 * @example
 * const fits = (callId: string) => callId.length <= OPENAI_CHAT_TOOL_ID_MAX_LENGTH;
 */
export const OPENAI_CHAT_TOOL_ID_MAX_LENGTH = 40;

/**
 * The breaches of OpenAI Chat Completions' pairing rules; see {@link pairingViolations} for
 * each check.
 *
 * @example
 * openaiChatPairingViolations([{ role: 'assistant', content: [call] }]); // one unanswered-call
 */
export function openaiChatPairingViolations(messages: readonly Message[]): PairingViolation[] {
  const violations: PairingViolation[] = [];
  const add = (code: PairingViolationCode, index: number, callId: string, message: string) => {
    violations.push({ rules: 'openai-chat', code, index, callId, message });
  };
  /** The assistant message whose tool run we are in, while we are in one. */
  let open: { calls: Call[]; answeredIn: Map<string, number> } | null = null;
  const close = () => {
    if (open === null) return;
    const reported = new Set<string>();
    for (const call of open.calls) {
      if (open.answeredIn.has(call.callId) || reported.has(call.callId)) continue;
      reported.add(call.callId);
      add(
        'unanswered-call',
        call.index,
        call.callId,
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${call.callId}`,
      );
    }
    open = null;
  };
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      for (const result of resultsOf(message)) {
        if (open === null) {
          add(
            'orphan-result',
            index,
            result.callId,
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          );
        } else if (!open.calls.some((call) => call.callId === result.callId)) {
          add(
            'orphan-result',
            index,
            result.callId,
            `Invalid parameter: 'tool_call_id' of '${result.callId}' not found in 'tool_calls' of previous message.`,
          );
        } else {
          const earlier = open.answeredIn.get(result.callId);
          if (earlier === undefined) open.answeredIn.set(result.callId, index);
          else {
            add(
              'duplicate-result',
              index,
              result.callId,
              `Invalid parameter: Duplicate value for 'tool_call_id' of '${result.callId}', in messages[${earlier}] and messages[${index}].`,
            );
          }
        }
      }
      return;
    }
    close();
    if (message.role !== 'assistant') return;
    const calls = callsOf(message, index);
    const seen = new Set<string>();
    for (const call of calls) {
      if (call.callId.length > OPENAI_CHAT_TOOL_ID_MAX_LENGTH) {
        add(
          'invalid-call-id',
          index,
          call.callId,
          `Invalid 'messages[${index}].tool_calls[${call.position}].id': string too long. Expected a string with maximum length ${OPENAI_CHAT_TOOL_ID_MAX_LENGTH}, but got a string with length ${call.callId.length} instead.`,
        );
      }
      if (seen.has(call.callId)) {
        add(
          'duplicate-call-id',
          index,
          call.callId,
          `Duplicate tool call id '${call.callId}' in one assistant message: its tool messages cannot be told apart.`,
        );
      }
      seen.add(call.callId);
    }
    if (calls.length > 0) open = { calls, answeredIn: new Map() };
  });
  close();
  return sortByIndex(classifyStrayResults(violations, messages));
}
