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
 * The breaches of OpenAI Responses' pairing rules; see {@link pairingViolations} for each
 * check.
 *
 * @example
 * openaiResponsesPairingViolations([{ role: 'assistant', content: [call] }]); // unanswered
 */
export function openaiResponsesPairingViolations(messages: readonly Message[]): PairingViolation[] {
  const violations: PairingViolation[] = [];
  const add = (code: PairingViolationCode, index: number, callId: string, message: string) => {
    violations.push({ rules: 'openai-responses', code, index, callId, message });
  };
  const calls = new Map<string, Call>();
  const outputs = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const call of callsOf(message, index)) {
        if (calls.has(call.callId)) {
          add(
            'duplicate-call-id',
            index,
            call.callId,
            `Duplicate function call with call_id ${call.callId}: its outputs cannot be told apart.`,
          );
        } else calls.set(call.callId, call);
      }
      return;
    }
    for (const result of resultsOf(message)) {
      if (!calls.has(result.callId)) {
        add(
          'orphan-result',
          index,
          result.callId,
          `No tool call found for function call output with call_id ${result.callId}.`,
        );
      } else if (outputs.has(result.callId)) {
        add(
          'duplicate-result',
          index,
          result.callId,
          `Duplicate function call output for call_id ${result.callId}.`,
        );
      } else outputs.add(result.callId);
    }
  });
  for (const call of calls.values()) {
    if (outputs.has(call.callId)) continue;
    add(
      'unanswered-call',
      call.index,
      call.callId,
      `No tool output found for function call ${call.callId}.`,
    );
  }
  return sortByIndex(classifyStrayResults(violations, messages));
}
