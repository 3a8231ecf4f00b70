/**
 * `llm-agent-revival/subagents`: runs that start runs. A {@link Composer} gives a parent run the
 * tools `spawn_agent` and `task_wait`, delivers a child's end while nobody waits, and takes a
 * revived child back under its original id so that a parent's pending join finds it.
 *
 * @example
 * import { Composer } from 'llm-agent-revival/subagents';
 * const composer = new Composer({ registry });
 * const { run } = await composer.start({ path: 'runs/main.jsonl', agentType: 'main', task });
 *
 * @module
 */
export { adoptChildren } from './adopt-children.ts';
export {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
  modelSpecOf,
} from './agent-definition.ts';
export { type AgentIdFactory, agentIdForSpawn, type SpawnIdentity } from './agent-id.ts';
export { BACKGROUND_FRAME } from './background-frame.ts';
export {
  agentsLayout,
  type ChildLayout,
  childrenFolder,
  childTranscriptPath,
  parentLinkPath,
  parentTranscriptPath,
} from './child-layout.ts';
export { type ChildOutcome, recordedOutcome, outcomeOfRun } from './child-outcome.ts';
export { outcomeFromTranscript, readSessionMeta } from './child-transcript.ts';
export {
  Composer,
  type ComposerEvent,
  type ComposerOptions,
  type LoopFactory,
  type RevivedChild,
  type StartedRun,
} from './composer.ts';
export { type ChildRecord, Family, type JoinFound } from './family.ts';
export {
  backgroundDelivery,
  type DeliveredChild,
  type JoinedChild,
  joinOutput,
  reportedAgentIds,
  runningAgainNotice,
  SPAWN_AGENT_TOOL,
  TASK_WAIT_TOOL,
} from './join-output.ts';
export {
  checkModelSpec,
  MODEL_PROVIDERS,
  ModelSpecError,
  type ModelSpecProblem,
  resolveModelSpec,
} from './model-spec.ts';
export { type SpawnInput, spawnAgentTool } from './spawn-agent-tool.ts';
export { type TaskWaitInput, taskWaitTool } from './task-wait-tool.ts';
