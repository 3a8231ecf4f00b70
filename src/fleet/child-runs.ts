import { dirname, posix } from 'node:path';
import type { ToolContext, ToolDefinition, ToolFailure } from '../loop/types.ts';
import type { RunQueue } from '../store/run-queue.ts';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import { modelSpecOf } from '../subagents/agent-definition.ts';
import { type AgentIdFactory, agentIdForSpawn } from '../subagents/agent-id.ts';
import { planSpawn } from '../subagents/plan-spawn.ts';
import { type SpawnInput, spawnAgentTool } from '../subagents/spawn-agent-tool.ts';
import { taskWaitTool } from '../subagents/task-wait-tool.ts';
import type { JsonValue, Message } from '../transcript/records.ts';
import { TranscriptError, describeError } from '../transcript/transcript-error.ts';
import { childRunName } from '../store/child-run-name.ts';
import { RunFamily } from './run-family.ts';

/**
 * What {@link ChildRuns} needs: the store, the agent types, the limits.
 *
 * @example
 * const options: ChildRunsOptions = { store, registry, maxDepth: 2, maxConcurrent: 4 };
 */
export interface ChildRunsOptions {
  store: RunQueue;
  registry: AgentRegistry;
  /** How deep a tree may grow (a root is depth 0; default 2). */
  maxDepth?: number;
  /** Children of one run not yet ended, at most (default 4). */
  maxConcurrent?: number;
  /** How a spawn call names its child (default: type and call id). */
  ids?: AgentIdFactory;
  /** The longest a join sleeps between looks when no notification comes (default 1000 ms). */
  pollMs?: number;
}

/**
 * Children for the runs of a PostgreSQL store, across machines. A parent's `spawn_agent` submits
 * the child as a run of its own (`session-meta` naming the parent and the spawn call, the task
 * as its first turn, committed, then `queued`) that any worker takes — the parent's or another.
 * `task_wait`, and a join a revival left pending, wait for the children's runs to end in the
 * database — woken by its notifications, looking again at least every `pollMs` — and read each
 * child's answer from its records. A child that ends while nobody waits is delivered to its
 * parent at its next safe point; a revived parent is told about children the crash hid from it.
 * A child revived on any worker answers its parent on any other: nothing is in memory.
 *
 * @example
 * const children = new ChildRuns({ store, registry });
 * const family = children.familyOf('main', messages);
 * new Loop({ backends, writer, tools: [...tools, ...family.tools],
 *   resolveJoin: family.resolveJoin, takeDeliveries: family.takeDeliveries });
 */
export class ChildRuns {
  readonly #store: RunQueue;
  readonly #registry: AgentRegistry;
  readonly #maxDepth: number;
  readonly #maxConcurrent: number;
  readonly #ids: AgentIdFactory;
  readonly #pollMs: number;

  constructor(options: ChildRunsOptions) {
    this.#store = options.store;
    this.#registry = options.registry;
    this.#maxDepth = options.maxDepth ?? 2;
    this.#maxConcurrent = options.maxConcurrent ?? 4;
    this.#ids = options.ids ?? agentIdForSpawn;
    this.#pollMs = options.pollMs ?? 1000;
  }

  /**
   * What the loop of run `run` (agent `agentId`, at `depth`) gets: `spawn_agent` and
   * `task_wait` when it may spawn, the join resolver, the deliveries — with the children its
   * conversation `messages` started and has not heard the end of adopted (see
   * {@link ChildRuns}). Call `stop()` once the run has ended.
   */
  async familyOf(request: {
    run: string;
    agentId: string;
    depth: number;
    canSpawn: boolean;
    messages: readonly Message[];
    pendingJoins: readonly string[];
  }): Promise<RunFamily> {
    const family = new RunFamily({
      store: this.#store,
      run: request.run,
      ids: this.#ids,
      pollMs: this.#pollMs,
    });
    await family.adopt(request.agentId, request.messages, request.pendingJoins);
    if (request.canSpawn && request.depth < this.#maxDepth) {
      family.tools.push(
        spawnAgentTool(this.#registry, (input, context) =>
          this.#spawn(family, request, input, context),
        ) as ToolDefinition<never>,
        taskWaitTool((input, context) => family.wait(input, context)) as ToolDefinition<never>,
      );
    }
    return family;
  }

  async #spawn(
    family: RunFamily,
    parent: { run: string; agentId: string; depth: number },
    input: SpawnInput,
    context: ToolContext,
  ): Promise<JsonValue | ToolFailure> {
    const plan = planSpawn({
      registry: this.#registry,
      ids: this.#ids,
      maxDepth: this.#maxDepth,
      parentDepth: parent.depth,
      parentAgentId: parent.agentId,
      callId: context.callId,
      input,
    });
    if (!plan.ok) return { isError: true, output: plan.refusal };
    const { agentId, definition, label } = plan;
    const started = { agentId, agentType: input.agentType, label };
    const run = childRunName(parent.run, agentId);
    try {
      if ((await this.#store.activeChildren(parent.run)) >= this.#maxConcurrent) {
        return {
          isError: true,
          output: `Cannot spawn: ${this.#maxConcurrent} children are already running, the most allowed at once. Wait for one with task_wait, then try again.`,
        };
      }
      await this.#store.submit(
        run,
        {
          agentId,
          agentType: input.agentType,
          label,
          model: modelSpecOf(definition),
          parent: {
            transcript: posix.relative(dirname(`${run}.jsonl`), `${parent.run}.jsonl`),
            callId: context.callId,
          },
        },
        input.task,
        // Fenced by the parent's epoch: a parent's worker paused past its lease and resumed
        // mid-spawn cannot start a child its revived self was told was interrupted.
        { run: parent.run, epoch: (context.writer as { epoch?: number }).epoch ?? 0 },
      );
    } catch (error) {
      // The id is derived from this very call: a run of that name is this call's child, made
      // before a crash lost the call's result — the same child, never a second one.
      if (TranscriptError.isInstance(error) && error.code === 'ownership-lost') {
        return { isError: true, output: `Cannot start ${agentId}: ${error.message}` };
      }
      if (TranscriptError.isInstance(error) && error.code === 'exists') {
        family.follow({ ...started, callId: context.callId });
        return {
          ...started,
          status: 'already-started',
          note: `This call had already started ${agentId}; join it with task_wait.`,
        };
      }
      // The submit may have committed with only its answer lost (a cut connection): then the
      // child exists and will run, and saying it did not start would be false.
      const exists = await this.#store
        .standing([run])
        .then((standing) => standing.has(run))
        .catch(() => false);
      if (!exists) {
        return { isError: true, output: `Cannot start ${agentId}: ${describeError(error)}` };
      }
    }
    family.follow({ ...started, callId: context.callId });
    return { ...started, status: 'running' };
  }
}
