/**
 * `llm-agent-revival/loop`: the durable agent loop on the Vercel AI SDK — the `Loop`, its
 * options, events and results, and the tool types it takes. How it talks to a provider (the
 * prompt conversion, the model-error classification, compaction planning, input digests) is
 * not part of the API.
 *
 * @example
 * import { Loop } from 'llm-agent-revival/loop';
 * const result = await new Loop({ backends: [model], writer: session, tools }).start('Hello');
 *
 * @module
 */
export { ModelTimeoutError } from './call-model.ts';
export { COMPACTION_PREFIX } from './compaction.ts';
export { idempotencyOfMcpTool, type McpToolAnnotations } from './mcp-idempotency.ts';
export { Loop } from './loop.ts';
export { RunAbortedError } from './run-handle.ts';
export { toolDefinitionsOf } from './tool-set.ts';
export type * from './types.ts';
