/**
 * The opening of every turn the system writes into a conversation on its own initiative: a
 * child's result delivered while nobody waited, and (in `llm-agent-revival/revival`) the resume notice.
 * One marker for every producer, so that a model that has learned what it means from one does
 * not have to learn it again from another. Defined here because the subagents layer is the
 * lowest layer that writes such turns; revival imports it from here.
 *
 * @example
 * import { BACKGROUND_FRAME } from 'llm-agent-revival/revival';
 * const text = `${BACKGROUND_FRAME} The child agent researcher-1 has finished.`;
 */
export const BACKGROUND_FRAME =
  '[background event] Automated notification from the system, not the user speaking.';
