import { idempotencyKeyOf } from '../../transcript/idempotency-key.ts';
import type { RunRecorder } from './run-recorder.ts';

/**
 * The idempotency key of a call of the run a recorder writes: derived from the run's agent id,
 * its start time and the call id ({@link idempotencyKeyOf}), the same however often the run is
 * opened, revived or reconciled. The wrapped tools record it in the call's dispatch before the
 * tool starts, and hand the tool that recorded key.
 *
 * @example
 * const key = recordedCallKey(recorder, 'call_1');
 */
export function recordedCallKey(recorder: RunRecorder, callId: string): string {
  const meta = recorder.session.state.meta;
  if (meta === null) return idempotencyKeyOf({ agentId: recorder.session.path }, callId);
  return idempotencyKeyOf(
    meta.createdAt === undefined
      ? { agentId: meta.agentId }
      : { agentId: meta.agentId, createdAt: meta.createdAt },
    callId,
  );
}

/**
 * The idempotency key of the call a tool wrapped by `revivableTools` is running, from the
 * options the AI SDK hands its `execute`: the key recorded in the call's dispatch before the
 * tool started, so the same call has the same key in every process that runs, revives or
 * reconciles it. Pass it to the outside world (a payment's idempotency key, a message id), so a
 * repeat is recognised there. A TypeError when the options did not come through
 * `revivableTools` (the call was not recorded, so it has no key).
 *
 * @example
 * import { tool } from 'ai';
 * import { revivableTools, toolIdempotencyKey } from 'llm-agent-revival/ai-sdk';
 * import { z } from 'zod';
 * const tools = revivableTools({
 *   send: tool({
 *     inputSchema: z.object({ to: z.string() }),
 *     execute: async ({ to }, options) => `sent to ${to} as ${toolIdempotencyKey(options)}`,
 *   }),
 * });
 */
export function toolIdempotencyKey(options: { readonly toolCallId: string }): string {
  const key = (options as { idempotencyKey?: unknown }).idempotencyKey;
  if (typeof key !== 'string') {
    throw new TypeError(
      'toolIdempotencyKey: these tool options carry no idempotency key — wrap the tools with revivableTools and run them inside a revivable run',
    );
  }
  return key;
}
