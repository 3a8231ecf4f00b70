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

/** Anthropic's pattern for `tool_use.id` (`messages.N.content.M.tool_use.id`). */
export const ANTHROPIC_TOOL_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;
/** The longest tool id Anthropic takes. */
export const ANTHROPIC_TOOL_ID_MAX_LENGTH = 64;
/** The longest `tool_calls[].id` OpenAI Chat Completions takes. */
export const OPENAI_CHAT_TOOL_ID_MAX_LENGTH = 40;

/**
 * Every breach of the tool-call pairing rules of Anthropic Messages, OpenAI Chat Completions
 * and OpenAI Responses in `messages` (our message model, as the AI SDK would send it), so a
 * view can be checked before a provider refuses it. `rules` picks one provider; the default,
 * `'all'`, checks the three. Violations come grouped by provider, each group in message order.
 * Pure; never throws.
 *
 * **Anthropic** (checked on turns as the API sees them: consecutive `user` and `tool` messages
 * are merged into one user turn, consecutive `assistant` messages into one assistant turn —
 * the AI SDK does this and so does the API; a `system` message is a turn of its own, so it
 * breaks adjacency):
 * - `unanswered-call`: a `tool_use` whose id has no `tool_result` in the very next turn (none
 *   at all, a later turn, or no next turn): "`tool_use` ids were found without `tool_result`
 *   blocks immediately after: ID. Each `tool_use` block must have a corresponding
 *   `tool_result` block in the next message."
 * - `orphan-result`: a `tool_result` whose id is not a `tool_use` of the turn right before
 *   (never asked, asked earlier, or answered a second time in a later turn): "unexpected
 *   `tool_use_id` found in `tool_result` blocks: ID. Each `tool_result` block must have a
 *   corresponding `tool_use` block in the previous message."
 * - `result-not-first`: a `tool_result` after other content of its user turn, so the results
 *   are not first or not together — a user message or background delivery written between
 *   the calls and (some of) their results: "Did not find N tool_result block(s) at the
 *   beginning of this message. Messages following tool_use blocks must begin with a matching
 *   number of tool_result blocks." (N = the calls of the turn before). A tool message followed
 *   by a user message is fine: the merged turn starts with the results.
 * - `duplicate-result`: a second `tool_result` for one id in one turn: "each tool_use must have
 *   a single result. Found multiple `tool_result` blocks with id: ID" (quoted from memory; no
 *   stored source confirms the exact words).
 * - `duplicate-call-id`: a `tool_use` id used before anywhere in the request: "`tool_use` ids
 *   must be unique".
 * - `invalid-call-id`: an id not matching `^[a-zA-Z0-9_-]+$` ("String should match pattern
 *   '^[a-zA-Z0-9_-]+$'"), or longer than 64 characters ("String should have at most 64
 *   characters"; the limit is the one pi's transform-messages enforces, the wording is the
 *   API's validator's for length). Checked on calls; a result repeats its call's id.
 *
 * **OpenAI Chat Completions** (each result part becomes one `role: "tool"` message; assistant
 * messages are not merged):
 * - `unanswered-call`: a call whose id has no tool message in the unbroken run of tool messages
 *   right after its assistant message: "An assistant message with 'tool_calls' must be followed
 *   by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not
 *   have response messages: ID"
 * - `orphan-result`: a tool message not in such a run (after a user, system or plain assistant
 *   message, or first): "Invalid parameter: messages with role 'tool' must be a response to a
 *   preceeding message with 'tool_calls'." (sic); or in a run but answering an id its assistant
 *   message did not ask: "Invalid parameter: 'tool_call_id' of 'ID' not found in 'tool_calls'
 *   of previous message."
 * - `duplicate-result`: a second tool message for one id in one run: "Invalid parameter:
 *   Duplicate value for 'tool_call_id' of 'ID', in messages[A] and messages[B]." (A and B are
 *   our message indices).
 * - `duplicate-call-id`: two calls with one id in one assistant message (their answers cannot
 *   be told apart; our wording). Ids reused in a later turn are allowed: Chat pairs by
 *   adjacency.
 * - `invalid-call-id`: an id longer than 40 characters: "Invalid
 *   'messages[I].tool_calls[J].id': string too long. Expected a string with maximum length 40,
 *   but got a string with length L instead." (I, J are our indices).
 *
 * **OpenAI Responses** (a flat list of items; a call is a `function_call`, a result a
 * `function_call_output`; the API pairs by `call_id` over the whole input, so adjacency is not
 * its rule — Anthropic's and Chat's checks cover that):
 * - `unanswered-call`: a call with no output after it: "No tool output found for function call
 *   ID."
 * - `orphan-result`: an output with no call before it: "No tool call found for function call
 *   output with call_id ID."
 * - `duplicate-result`: a second output for one call id (our wording).
 * - `duplicate-call-id`: a second call with an id already used (our wording).
 *
 * Tool-result parts only count in `tool` messages and tool-call parts only in `assistant`
 * messages (the record validator allows nothing else).
 *
 * @example
 * const problems = pairingViolations(view, 'anthropic');
 * for (const problem of problems) console.error(`message ${problem.index}: ${problem.message}`);
 */
export function pairingViolations(
  messages: readonly Message[],
  rules: PairingRules | 'all' = 'all',
): PairingViolation[] {
  const violations: PairingViolation[] = [];
  if (rules === 'all' || rules === 'anthropic') violations.push(...anthropicViolations(messages));
  if (rules === 'all' || rules === 'openai-chat') violations.push(...chatViolations(messages));
  if (rules === 'all' || rules === 'openai-responses') {
    violations.push(...responsesViolations(messages));
  }
  return violations;
}

/** A call, with the index of the message that asked it and its place in that message. */
interface Call {
  callId: string;
  index: number;
  position: number;
}

function callsOf(message: Message, index: number): Call[] {
  const calls: Call[] = [];
  let position = 0;
  for (const part of message.content) {
    if (part.type !== 'tool-call') continue;
    calls.push({ callId: part.callId, index, position });
    position += 1;
  }
  return calls;
}

function resultsOf(message: Message): ToolResultPart[] {
  return message.role === 'tool'
    ? message.content.filter((part): part is ToolResultPart => part.type === 'tool-result')
    : [];
}

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

function anthropicViolations(messages: readonly Message[]): PairingViolation[] {
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
  return sortByIndex(violations);
}

function chatViolations(messages: readonly Message[]): PairingViolation[] {
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
  return sortByIndex(violations);
}

function responsesViolations(messages: readonly Message[]): PairingViolation[] {
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
  return sortByIndex(violations);
}

/** Stable sort by message index, so reports read top to bottom. */
function sortByIndex(violations: PairingViolation[]): PairingViolation[] {
  return violations.sort((left, right) => left.index - right.index);
}
