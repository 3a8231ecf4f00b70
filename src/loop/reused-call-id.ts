import { callsOf } from './model-messages.ts';
import type { LoopMessage } from './types.ts';

/**
 * The first call of the conversation's last assistant turn whose id an earlier call already
 * used — in an earlier turn of the run, or earlier in the same turn — or undefined. A call's
 * idempotency key is derived from the run and its call id, so a model that reuses an id would
 * hand the new call the old call's key: a provider keeping keys would take it for a repeat and
 * not do it (or, worse, answer with the old call's result). No provider accepts such a
 * conversation either, so the Loop refuses the turn before running any of its calls. (Ids a
 * compaction summarised away are no longer seen.) Pure.
 *
 * @example
 * reusedCallId([turn1, results1, turn2]); // 'call_0' when turn2 calls call_0 again
 */
export function reusedCallId(messages: readonly LoopMessage[]): string | undefined {
  let turnIndex = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]?.role === 'assistant') {
      turnIndex = index;
      break;
    }
  }
  const turn = messages[turnIndex];
  if (turn === undefined) return undefined;
  const seen = new Set<string>();
  for (const message of messages.slice(0, turnIndex)) {
    if (message.role !== 'assistant') continue;
    for (const call of callsOf(message)) seen.add(call.callId);
  }
  for (const call of callsOf(turn)) {
    if (seen.has(call.callId)) return call.callId;
    seen.add(call.callId);
  }
  return undefined;
}
