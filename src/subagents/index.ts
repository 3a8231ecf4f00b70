/**
 * `llm-agent-revival/subagents`: runs that start runs. A {@link Composer} gives a parent run the
 * tools `spawn_agent` and `task_wait`, delivers a child's end while nobody waits, and takes a
 * revived child back under its original id so that a parent's pending join finds it. Where a
 * child's transcript lives is a {@link ChildLayout} (`agentsLayout`, `X.agents/<id>.jsonl`, is
 * what the composer writes). How a join's answer is worded and how a family is tracked are not
 * part of the API.
 *
 * @example
 * import { Composer } from 'llm-agent-revival/subagents';
 * const composer = new Composer({ registry });
 * const { run } = await composer.start({ path: 'runs/main.jsonl', agentType: 'main', task });
 *
 * @module
 */
export {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
} from './agent-definition.ts';
export { type AgentIdFactory, agentIdForSpawn, type SpawnIdentity } from './agent-id.ts';
export { BACKGROUND_FRAME } from './background-frame.ts';
export {
  agentsLayout,
  type ChildLayout,
  childTranscriptPath,
  parentTranscriptPath,
} from './child-layout.ts';
export type { ChildOutcome } from './child-outcome.ts';
// How an application reviving a child finds the spawn call it answers (Composer.reviveChild).
export { readSessionMeta } from './child-transcript.ts';
export {
  Composer,
  type ComposerEvent,
  type ComposerOptions,
  type LoopFactory,
  type RevivedChild,
  type StartedRun,
} from './composer.ts';
export type { ChildRecord } from './family.ts';
export { SPAWN_AGENT_TOOL, TASK_WAIT_TOOL } from './join-output.ts';
export { ModelSpecError, resolveModelSpec } from './model-spec.ts';
export { spawnAgentTool } from './spawn-agent-tool.ts';
export { taskWaitTool } from './task-wait-tool.ts';
