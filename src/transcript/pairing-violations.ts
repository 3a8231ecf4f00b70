import { anthropicPairingViolations } from './anthropic-pairing.ts';
import { openaiChatPairingViolations } from './openai-chat-pairing.ts';
import { openaiResponsesPairingViolations } from './openai-responses-pairing.ts';
import type { PairingRules, PairingViolation } from './pairing-rules.ts';
import type { Message } from './records.ts';

export { ANTHROPIC_TOOL_ID_MAX_LENGTH, ANTHROPIC_TOOL_ID_PATTERN } from './anthropic-pairing.ts';
export { OPENAI_CHAT_TOOL_ID_MAX_LENGTH } from './openai-chat-pairing.ts';
export type { PairingRules, PairingViolation, PairingViolationCode } from './pairing-rules.ts';

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
 * - a stray `tool_result`, whose id is not a `tool_use` of the turn right before: "unexpected
 *   `tool_use_id` found in `tool_result` blocks: ID. Each `tool_result` block must have a
 *   corresponding `tool_use` block in the previous message." (see the stray results below).
 * - `result-not-first`: a `tool_result` after other content of its user turn, so the results
 *   are not first or not together — a user message or background delivery written between
 *   the calls and (some of) their results: "Did not find N tool_result block(s) at the
 *   beginning of this message. Messages following tool_use blocks must begin with a matching
 *   number of tool_result blocks." (N = the calls of the turn before). A tool message followed
 *   by a user message is fine: the merged turn starts with the results.
 * - `duplicate-result`: a second `tool_result` for one id in the same turn: "each tool_use must
 *   have a single result. Found multiple `tool_result` blocks with id: ID" (quoted from
 *   memory; no stored source confirms the exact words).
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
 * - a stray tool message, not in such a run (after a user, system or plain assistant message,
 *   or first): "Invalid parameter: messages with role 'tool' must be a response to a
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
 * - a stray output, with no call before it: "No tool call found for function call output
 *   with call_id ID."
 * - `duplicate-result`: a second output for one call id (our wording).
 * - `duplicate-call-id`: a second call with an id already used (our wording).
 *
 * **Stray results** get the provider's words but one of three codes, so a caller knows what
 * went wrong: `orphan-result` when the call is asked nowhere in the messages,
 * `duplicate-result` when the call already has its answer where the rules want it (a second
 * answer, later), `misplaced-result` when the call has none (the result is in a later turn,
 * or before its call; the call is reported `unanswered-call` too).
 *
 * Tool-result parts only count in `tool` messages and tool-call parts only in `assistant`
 * messages (the record validator allows nothing else). A `system` message counts as a turn of
 * its own everywhere; AI SDK 7 refuses system messages in `messages` altogether (they go in
 * `instructions`). Before any request, the AI SDK itself throws `AI_MissingToolResultsError`
 * for a call with no result before the next user or system message or the end: a view with
 * a run's pending calls cannot be sent until the loop answers them. The grouping described
 * here is checked against the requests the real provider packages build
 * (test/transcript/pairing-wire.test.ts).
 *
 * @example
 * const problems = pairingViolations(conversationView(records), 'anthropic');
 * for (const problem of problems) console.error(`message ${problem.index}: ${problem.message}`);
 */
export function pairingViolations(
  messages: readonly Message[],
  rules: PairingRules | 'all' = 'all',
): PairingViolation[] {
  const violations: PairingViolation[] = [];
  if (rules === 'all' || rules === 'anthropic') {
    violations.push(...anthropicPairingViolations(messages));
  }
  if (rules === 'all' || rules === 'openai-chat') {
    violations.push(...openaiChatPairingViolations(messages));
  }
  if (rules === 'all' || rules === 'openai-responses') {
    violations.push(...openaiResponsesPairingViolations(messages));
  }
  return violations;
}
