/**
 * The keys of the calls the wrapped function tools are running, by the runner's call item (the
 * runner hands the tool's `execute` the same item, in `details.toolCall`, that the wrapper saw).
 */
const keys = new WeakMap<object, string>();

/**
 * Remember the key of a call about to run (the wrapper does this after recording the dispatch).
 *
 * @example
 * rememberCallKey(details.toolCall, 'ik-0123');
 */
export function rememberCallKey(toolCall: object, key: string): void {
  keys.set(toolCall, key);
}

/**
 * The idempotency key of the call a function tool wrapped by `revivableFunctionTools` is running,
 * from the `details` the runner hands its `execute`: the key recorded in the call's dispatch
 * before the tool started, the same in every process that runs, revives or reconciles the call.
 * Pass it to the outside world (a payment's idempotency key, a message id), so a repeat is
 * recognised there. A TypeError when the call did not come through `revivableFunctionTools`.
 *
 * @example
 * import { tool } from '@openai/agents';
 * import { functionToolIdempotencyKey, revivableFunctionTools } from 'llm-agent-revival/openai-agents';
 * import { z } from 'zod';
 * const send = tool({
 *   name: 'send', description: 'Send a report', parameters: z.object({ to: z.string() }),
 *   execute: async ({ to }, _context, details) => `sent to ${to} as ${functionToolIdempotencyKey(details)}`,
 * });
 * const tools = revivableFunctionTools([send]);
 */
export function functionToolIdempotencyKey(
  details: { readonly toolCall?: object } | undefined,
): string {
  const key = details?.toolCall === undefined ? undefined : keys.get(details.toolCall);
  if (key === undefined) {
    throw new TypeError(
      'functionToolIdempotencyKey: this call carries no idempotency key — wrap the tools with revivableFunctionTools and run them inside a TranscriptSession',
    );
  }
  return key;
}
