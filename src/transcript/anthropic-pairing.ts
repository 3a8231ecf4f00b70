import {
  type Call,
  callsOf,
  classifyStrayResults,
  type PairingViolation,
  type PairingViolationCode,
  sortByIndex,
} from './pairing-rules.ts';
import type { Message, ToolResultPart } from './records.ts';

/**
 * Anthropic's pattern for `tool_use.id` (`messages.N.content.M.tool_use.id`).
 *
 * @example
 * ANTHROPIC_TOOL_ID_PATTERN.test('call_s1'); // true
 * ANTHROPIC_TOOL_ID_PATTERN.test('call.1'); // false: Anthropic refuses the request
 */
export const ANTHROPIC_TOOL_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;
/**
 * The longest tool id Anthropic takes.
 *
 * @example
 * const fits = (callId: string) => callId.length <= ANTHROPIC_TOOL_ID_MAX_LENGTH;
 */
export const ANTHROPIC_TOOL_ID_MAX_LENGTH = 64;

/** One turn as Anthropic sees it, its content tagged with the message each part came from. */
interface AnthropicTurn {
  role: 'user' | 'assistant' | 'system';
  calls: Call[];
  /** For a user turn: its parts in order, `result` undefined for non-result content. */
  items: { index: number; result?: ToolResultPart }[];
}

function anthropicTurns(messages: readonly Message[]): AnthropicTurn[] {
  const turns: AnthropicTurn[] = [];
  messages.forEach((message, index) => {
    const role = message.role === 'tool' ? 'user' : message.role;
    let turn = turns.at(-1);
    if (turn === undefined || turn.role !== role || role === 'system') {
      turn = { role, calls: [], items: [] };
      turns.push(turn);
    }
    if (role === 'assistant') {
      turn.calls.push(...callsOf(message, index));
      return;
    }
    for (const part of message.content) {
      if (part.type === 'tool-result' && message.role === 'tool') {
        turn.items.push({ index, result: part });
      } else {
        turn.items.push({ index });
      }
    }
  });
  return turns;
}

/**
 * The breaches of Anthropic's pairing rules; see {@link pairingViolations} for each check.
 *
 * @example
 * anthropicPairingViolations([{ role: 'assistant', content: [call] }]); // one unanswered-call
 */
export function anthropicPairingViolations(messages: readonly Message[]): PairingViolation[] {
  const violations: PairingViolation[] = [];
  const add = (code: PairingViolationCode, index: number, callId: string, message: string) => {
    violations.push({ rules: 'anthropic', code, index, callId, message });
  };
  const seen = new Set<string>();
  const turns = anthropicTurns(messages);
  turns.forEach((turn, turnIndex) => {
    for (const call of turn.calls) {
      if (!ANTHROPIC_TOOL_ID_PATTERN.test(call.callId)) {
        add(
          'invalid-call-id',
          call.index,
          call.callId,
          "String should match pattern '^[a-zA-Z0-9_-]+$'",
        );
      } else if (call.callId.length > ANTHROPIC_TOOL_ID_MAX_LENGTH) {
        add(
          'invalid-call-id',
          call.index,
          call.callId,
          `String should have at most ${ANTHROPIC_TOOL_ID_MAX_LENGTH} characters`,
        );
      }
      if (seen.has(call.callId)) {
        add('duplicate-call-id', call.index, call.callId, '`tool_use` ids must be unique');
      }
      seen.add(call.callId);
    }
    if (turn.role !== 'user') return;
    const previous = turnIndex > 0 ? turns[turnIndex - 1] : undefined;
    const asked = new Set(
      previous?.role === 'assistant' ? previous.calls.map((call) => call.callId) : [],
    );
    const answered = new Set<string>();
    let otherContentSeen = false;
    for (const item of turn.items) {
      const result = item.result;
      if (result === undefined) {
        otherContentSeen = true;
        continue;
      }
      if (!asked.has(result.callId)) {
        add(
          'orphan-result',
          item.index,
          result.callId,
          `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${result.callId}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      } else if (answered.has(result.callId)) {
        add(
          'duplicate-result',
          item.index,
          result.callId,
          `each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${result.callId}`,
        );
      } else {
        answered.add(result.callId);
        if (otherContentSeen) {
          add(
            'result-not-first',
            item.index,
            result.callId,
            `Did not find ${asked.size} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`,
          );
        }
      }
    }
  });
  // Unanswered calls, reported in message order after the per-turn checks above.
  turns.forEach((turn, turnIndex) => {
    if (turn.role !== 'assistant') return;
    const next = turns[turnIndex + 1];
    const answered = new Set(
      next?.role === 'user' ? next.items.flatMap((item) => item.result?.callId ?? []) : [],
    );
    const reported = new Set<string>();
    for (const call of turn.calls) {
      if (answered.has(call.callId) || reported.has(call.callId)) continue;
      reported.add(call.callId);
      add(
        'unanswered-call',
        call.index,
        call.callId,
        `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${call.callId}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
  });
  return sortByIndex(classifyStrayResults(violations, messages));
}
