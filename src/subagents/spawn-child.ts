import type { LanguageModel } from 'ai';
import type { LoopMessage, RunHandle, ToolContext, ToolFailure } from '../loop/types.ts';
import type { JsonValue } from '../transcript/records.ts';
import { describeError } from '../transcript/transcript-error.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
  modelSpecOf,
} from './agent-definition.ts';
import type { AgentIdFactory } from './agent-id.ts';
import { type ChildSessionResult, createChildSession } from './child-session.ts';
import type { ChildRecord } from './family.ts';
import { planSpawn } from './plan-spawn.ts';
import type { RunPlaces } from './run-places.ts';
import type { RunTree } from './run-tree.ts';
import type { SpawnInput } from './spawn-agent-tool.ts';

/**
 * Where a run stands in its tree, by its key ({@link RunPlaces.keyOf}).
 *
 * @example
 * runs.set(places.keyOf('runs/main.jsonl'), { agentId: 'main', depth: 0 });
 */
export interface RunInfo {
  agentId: string;
  depth: number;
}

/**
 * What {@link spawnChild} needs of its composer: the registry and limits, the tree of runs,
 * the slots reserved by spawns still creating their transcripts, and how to start a loop.
 *
 * @example
 * const result = await spawnChild(spawnContext, 'runs/main.jsonl', input, toolContext);
 */
export interface SpawnContext {
  registry: AgentRegistry;
  ids: AgentIdFactory;
  maxDepth: number;
  maxConcurrent: number;
  tree: RunTree;
  runs: Map<string, RunInfo>;
  /** Children counted against `maxConcurrent` while their transcripts are being created. */
  slots: { reserved: number };
  resolveModel: ModelResolver;
  places: RunPlaces;
  runLoop: (
    writer: TranscriptWriter,
    definition: AgentDefinition,
    backends: LanguageModel[],
    depth: number,
    messages: LoopMessage[],
    location: string,
  ) => RunHandle;
}

/**
 * The `spawn_agent` tool's work: plan the child (its id is a pure function of the call, so
 * a call made again after a crash finds its own child rather than starting a second one),
 * within the depth and concurrency limits; create its transcript (`session-meta` and task,
 * durable) and only then start it in the background. Every refusal is a result the model
 * reads; never throws for the model's mistakes.
 *
 * @example
 * const answer = await spawnChild(spawnContext, 'runs/main.jsonl', { agentType: 'researcher', task }, context);
 */
export async function spawnChild(
  composer: SpawnContext,
  parentPath: string,
  input: SpawnInput,
  context: ToolContext,
): Promise<JsonValue | ToolFailure> {
  const parent = composer.runs.get(composer.places.keyOf(parentPath));
  const depth = parent?.depth ?? 0;
  const plan = planSpawn({
    registry: composer.registry,
    ids: composer.ids,
    maxDepth: composer.maxDepth,
    parentDepth: depth,
    parentAgentId: parent?.agentId ?? 'main',
    callId: context.callId,
    input,
  });
  if (!plan.ok) return failure(plan.refusal);
  const { agentId, definition, label } = plan;
  const started = { agentId, agentType: input.agentType, label };
  const known = composer.tree.familyOf(parentPath).child(agentId);
  if (known !== undefined) {
    return { ...started, status: known.outcome === null ? 'running' : 'ended' };
  }
  if (composer.tree.running + composer.slots.reserved >= composer.maxConcurrent) {
    return failure(
      `Cannot spawn: ${composer.maxConcurrent} children are already running, the most allowed at once. Wait for one with task_wait, then try again.`,
    );
  }
  let backends: LanguageModel[];
  try {
    backends = backendsOf(definition, composer.resolveModel);
  } catch (error) {
    return failure(`Cannot start a ${input.agentType}: ${describeError(error)}`);
  }
  const child: ChildRecord = {
    ...started,
    callId: context.callId,
    sessionPath: composer.places.childOf(parentPath, agentId),
  };
  composer.slots.reserved += 1;
  let created: ChildSessionResult;
  try {
    created = await createChildSession({
      places: composer.places,
      child,
      parentPath,
      model: modelSpecOf(definition),
      task: input.task,
    });
  } finally {
    composer.slots.reserved -= 1;
  }
  if (!created.ok) {
    // The id is derived from this very call, so an existing transcript is this call's child,
    // made before a crash lost the call's result: the same child, never a second one.
    return created.existing
      ? {
          ...started,
          status: 'already-started',
          note: `This call had already started ${agentId}; join it with task_wait.`,
        }
      : failure(`Cannot start ${agentId}: ${created.detail}`);
  }
  const { writer, first } = created;
  composer.runs.set(composer.places.keyOf(child.sessionPath), { agentId, depth: depth + 1 });
  let run: RunHandle;
  try {
    run = composer.runLoop(writer, definition, backends, depth + 1, [first], child.sessionPath);
  } catch (error) {
    await writer.close().catch(() => undefined);
    return failure(`Cannot start ${agentId}: ${describeError(error)}`);
  }
  composer.tree.track(
    child,
    run,
    run.result.then(() => writer.close()),
    false,
  );
  return { ...started, status: 'running' };
}

function failure(text: string): ToolFailure {
  return { isError: true, output: text };
}
