import { BACKGROUND_FRAME } from '../subagents/background-frame.ts';

export { BACKGROUND_FRAME };

/**
 * The result revival writes for a tool call that was in flight when the process died
 * (`isError: true`). It says what is known — the call may or may not have taken effect — and
 * what the model should do about it, because a model told "this may have half-happened" can go
 * and look, and a replay heuristic cannot. The call is never replayed.
 *
 * @example
 * import { INTERRUPTED_MESSAGE } from 'llm-agent-revival/revival';
 * const part = { type: 'tool-result', callId: 'call_1', toolName: 'read_file', output: INTERRUPTED_MESSAGE, isError: true };
 */
export const INTERRUPTED_MESSAGE =
  'The previous session ended while this tool call was in flight, so it was interrupted. ' +
  'Whether it took effect is unknown, and it has NOT been retried: check the state of ' +
  'anything it was changing — a file it was writing may have been left half-written — before ' +
  'assuming either way.';

/**
 * The user turn every revived run is told immediately before it starts thinking again. It opens
 * with {@link BACKGROUND_FRAME}, the marker the subagents layer's background deliveries use, so
 * a model that has learned what `[background event]` means from one producer need not learn it
 * again from another. Written with `extras.injected = 'revival'`.
 *
 * @example
 * import { RESUME_NOTICE } from 'llm-agent-revival/revival';
 * RESUME_NOTICE.startsWith('[background event]'); // true
 */
export const RESUME_NOTICE =
  `${BACKGROUND_FRAME} The previous session ended while this run was working, and the run has ` +
  'been resumed: everything above is its own conversation, up to the moment it stopped. Work ' +
  'it had not finished is still unfinished.';

/**
 * The sentence a revival puts before the output of a call that was in flight when the process
 * died and that the tool's reconcile found had completed: the model reads the real output, and
 * knows it was recovered, not produced just now. A string output follows it after a blank line;
 * any other output is handed over as `{ recovered: RECOVERED_NOTE, output }`.
 *
 * @example
 * import { RECOVERED_NOTE } from 'llm-agent-revival/revival';
 * const output = `${RECOVERED_NOTE}\n\nCharged 12.00 EUR (ch_1).`;
 */
export const RECOVERED_NOTE =
  'Recovered after a crash: the previous session ended while this tool call was in flight, ' +
  'and the tool has since confirmed that it completed with the output below — it was not run ' +
  'again.';

/**
 * The result (`isError: true`) a revival writes for a call that was in flight when the process
 * died and that the tool's reconcile found never took effect. Nothing is retried: the model
 * decides whether the call is still needed.
 *
 * @example
 * import { DID_NOT_HAPPEN_MESSAGE } from 'llm-agent-revival/revival';
 * DID_NOT_HAPPEN_MESSAGE.includes('NOT been retried'); // true
 */
export const DID_NOT_HAPPEN_MESSAGE =
  'The previous session ended while this tool call was in flight, so it was interrupted. The ' +
  'tool has since checked, and the call did not take effect; it has NOT been retried: call it ' +
  'again if it is still needed.';
