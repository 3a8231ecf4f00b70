/**
 * `llm-agent-revival`: the everyday API in one import. A {@link Session} is a run's crash-safe
 * transcript, a {@link Loop} runs a model and its tools over one, {@link Revival} inspects and
 * revives an interrupted run, and a {@link Composer} lets a run start runs. Everything else —
 * and the same names — is in the subpaths `llm-agent-revival/transcript`, `/loop`, `/revival`
 * and `/subagents`.
 *
 * @example
 * import { Loop, Revival, Session } from 'llm-agent-revival';
 * const meta = { agentId: 'main', agentType: 'main', label: 'Main', model: 'openai:gpt-5' };
 * const session = await Session.create('runs/main.jsonl', meta);
 * const result = await new Loop({ backends: [model], writer: session, tools }).start('Hello');
 * await session.close();
 * const found = await Revival.inspect({ path: 'runs/main.jsonl', maxRevivals: 2 });
 *
 * @module
 */
export {
  type Durability,
  Session,
  type SessionMeta,
  type SessionOpenOptions,
  type SessionOptions,
} from './transcript/session.ts';
export { TranscriptError, type TranscriptErrorCode } from './transcript/transcript-error.ts';
export type { Idempotency, JsonValue, Message } from './transcript/records.ts';
export { Loop } from './loop/loop.ts';
export { RunAbortedError } from './loop/run-handle.ts';
export type {
  LoopEvent,
  LoopMessage,
  LoopOptions,
  ReconcileAnswer,
  ReconcileContext,
  RunHandle,
  RunResult,
  RunStatus,
  ToolContext,
  ToolDefinition,
  ToolFailure,
} from './loop/types.ts';
export { Revival } from './revival/index.ts';
export type {
  Inspection,
  InspectOptions,
  NotRevivableInspection,
  NotRevivableReason,
  RevivableInspection,
  ReviveOptions,
  ReviveRefused,
  Revived,
  TailKind,
} from './revival/index.ts';
export {
  type AgentDefinition,
  type AgentRegistry,
  type ModelResolver,
  backendsOf,
} from './subagents/agent-definition.ts';
export {
  Composer,
  type ComposerEvent,
  type ComposerOptions,
  type StartedRun,
} from './subagents/composer.ts';
export { resolveModelSpec } from './subagents/model-spec.ts';
export { spawnAgentTool } from './subagents/spawn-agent-tool.ts';
export { taskWaitTool } from './subagents/task-wait-tool.ts';
