/**
 * `llm-agent-revival/loop`: the durable agent loop on the Vercel AI SDK.
 *
 * @example
 * import { Loop } from 'llm-agent-revival/loop';
 * const result = await new Loop({ backends: [model], session, tools }).start('Hello');
 *
 * @module
 */
export { classifyModelError, describeModelError, ModelTimeoutError } from './call-model.ts';
export { checkJsonSchema } from './check-json-schema.ts';
export {
  COMPACTION_PREFIX,
  type CompactionPlan,
  estimateTokens,
  planCompaction,
} from './compaction.ts';
export { canonicalJson, inputDigest } from './input-digest.ts';
export { idempotencyOfMcpTool, type McpToolAnnotations } from './mcp-idempotency.ts';
export { defaultBackoff, Loop } from './loop.ts';
export {
  assistantMessageFromOutput,
  fromModelMessages,
  type ModelOutputPart,
  toModelMessages,
  toModelPrompt,
  toToolResultOutput,
} from './model-messages.ts';
export { RunAbortedError } from './run-handle.ts';
export { type CallOutcome, validateInput } from './run-tool-call.ts';
export { classifyTailCalls, type TailCallState } from './tail-calls.ts';
export {
  type LoopTools,
  type ToolIdempotency,
  type ToolSetByName,
  toolDefinitionsOf,
} from './tool-set.ts';
export type * from './types.ts';
