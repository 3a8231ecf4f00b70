import type { UIMessage } from 'ai';
import { INTERRUPTED_MESSAGE } from '../../revival/texts.ts';

/** Tool part states that have no outcome yet: the call was asked for and never answered. */
const DANGLING = new Set(['input-streaming', 'input-available', 'approval-responded']);

/**
 * A `useChat` history whose tool parts a crash left without an outcome — the server died while
 * the tool ran, or before it — with each such part answered as an error the model reads,
 * `INTERRUPTED_MESSAGE` ("… Whether it took effect is unknown, and it has NOT been retried …"),
 * instead of dropped as `convertToModelMessages(…, { ignoreIncompleteToolCalls: true })` drops
 * them (the model then forgets the call and may make it again). A part waiting for the user's
 * approval is left as it is. Pure: returns new messages, the given ones untouched.
 *
 * @example
 * import { convertToModelMessages, type UIMessage } from 'ai';
 * import { answerInterruptedToolParts } from 'llm-agent-revival/ai-sdk';
 * declare const uiMessages: UIMessage[]; // from the request body
 * const modelMessages = await convertToModelMessages(answerInterruptedToolParts(uiMessages));
 */
export function answerInterruptedToolParts<MESSAGE extends UIMessage>(
  messages: readonly MESSAGE[],
): MESSAGE[] {
  return messages.map((message) => {
    if (message.role !== 'assistant') return message;
    let changed = false;
    const parts = message.parts.map((part) => {
      const state = (part as { state?: unknown }).state;
      const isTool = part.type === 'dynamic-tool' || part.type.startsWith('tool-');
      if (!isTool || typeof state !== 'string' || !DANGLING.has(state)) return part;
      changed = true;
      const { output: _output, ...rest } = part as Record<string, unknown>;
      return { ...rest, state: 'output-error', errorText: INTERRUPTED_MESSAGE } as typeof part;
    });
    return changed ? { ...message, parts } : message;
  });
}
