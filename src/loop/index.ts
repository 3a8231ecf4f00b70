/**
 * `llm-agent-revival/loop`: the durable agent loop on the Vercel AI SDK — the `Loop`, its
 * options, events and results, and the tool types it takes. How it talks to a provider (the
 * prompt conversion, the model-error classification, compaction planning, input digests) is
 * not part of the API; docs/architecture.md ("The public surface") gives the reason for each
 * name.
 *
 * @example
 * import { Loop } from 'llm-agent-revival/loop';
 * const result = await new Loop({ backends: [model], writer: session, tools }).start('Hello');
 *
 * @module
 */
// The Loop and what it ends with: its answer, and the errors a run's result carries.
export { Loop } from './loop.ts';
export { RunAbortedError } from './run-handle.ts';
export { ModelTimeoutError } from './call-model.ts';
export type {
  LoopEvent,
  LoopMessage,
  LoopOptions,
  RunHandle,
  RunResult,
  RunStatus,
} from './types.ts';
// What a user writes against: tools (and their reconcile), backends with settings of their
// own, and the callbacks' arguments (a callback written apart from the options needs a name
// for them). The types of the other options are read from `LoopOptions`.
export type {
  BackendOptions,
  BrokenToolCall,
  ModelCall,
  ModelCallSettings,
  ReconcileAnswer,
  ReconcileContext,
  ToolContext,
  ToolDefinition,
  ToolFailure,
} from './types.ts';
// Tools from elsewhere: an AI SDK ToolSet as the Loop reads it, an MCP tool's idempotency.
export { toolDefinitionsOf } from './tool-set.ts';
export { idempotencyOfMcpTool } from './mcp-idempotency.ts';
// How a compaction's summary reads in the conversation (applications match on it).
export { COMPACTION_PREFIX } from './compaction.ts';
