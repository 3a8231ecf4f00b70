import { setTimeout as sleepFor } from 'node:timers/promises';
import type { JoinResolver, ToolContext, ToolDefinition, ToolFailure } from '../loop/types.ts';
import type { RunQueue } from '../store/run-queue.ts';
import type { AgentIdFactory } from '../subagents/agent-id.ts';
import { type ChildOutcome, recordedOutcome } from '../subagents/child-outcome.ts';
import {
  backgroundDelivery,
  type DeliveredChild,
  type JoinedChild,
  joinOutput,
  runningAgainNotice,
} from '../subagents/join-output.ts';
import type { TaskWaitInput } from '../subagents/task-wait-tool.ts';
import { isAgentId, type JsonValue, type Message } from '../transcript/records.ts';
import { unheardChildren } from '../subagents/spawned-children.ts';
import { childRunName } from '../store/child-run-name.ts';

/** Statuses of an unowned run that end it for its parent. */
const ENDED = new Set(['finished', 'failed', 'stopped', 'capped', 'open']);

/**
 * The children of one run in progress: its tools, its join resolver and its deliveries.
 *
 * @example
 * const family = await childRuns.familyOf({ run: 'main', agentId: 'main', depth: 0, canSpawn: true, messages, pendingJoins: [] });
 * try { await new Loop({ ...options, tools: family.tools, resolveJoin: family.resolveJoin, takeDeliveries: family.takeDeliveries }).run(messages); }
 * finally { family.stop(); }
 */
export class RunFamily {
  /** `spawn_agent` and `task_wait`, when the run may spawn. */
  readonly tools: ToolDefinition<never>[] = [];
  readonly #store: RunQueue;
  readonly #run: string;
  readonly #ids: AgentIdFactory;
  readonly #pollMs: number;
  /** Children whose end the run has not heard, by agent id. */
  readonly #unheard = new Map<string, DeliveredChild>();
  /** Children a join is waiting for now: their end is the join's to report. */
  readonly #joining = new Map<string, number>();
  #deliveries: { agentId: string; message: Message }[] = [];
  readonly #stopped = new AbortController();
  #watching: Promise<void> | null = null;

  constructor(options: { store: RunQueue; run: string; ids: AgentIdFactory; pollMs: number }) {
    this.#store = options.store;
    this.#run = options.run;
    this.#ids = options.ids;
    this.#pollMs = options.pollMs;
  }

  /** Answers a join left pending by a revival, from the children's runs. */
  readonly resolveJoin: JoinResolver = ({ agentIds, signal }) => this.join(agentIds, signal);

  /** The deliveries queued since the last call, forgotten once taken (the loop's hook). */
  readonly takeDeliveries = (): Message[] => {
    const taken = this.#deliveries.map((delivery) => delivery.message);
    this.#deliveries = [];
    return taken;
  };

  /** Stop watching the children (the run ended); they go on in the store. */
  stop(): void {
    this.#stopped.abort();
  }

  /** `task_wait`: join the named children, up to `timeoutSeconds`. */
  async wait(input: TaskWaitInput, context: ToolContext): Promise<JsonValue | ToolFailure> {
    const timeout = new AbortController();
    const timer =
      input.timeoutSeconds === undefined
        ? undefined
        : setTimeout(() => timeout.abort(), input.timeoutSeconds * 1000);
    try {
      const { output, isError } = await this.join(
        input.agentIds,
        AbortSignal.any([context.signal, timeout.signal]),
      );
      return isError ? { isError: true, output } : output;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Wait until each named child's run has ended (or `signal` aborts) and say how each did. */
  async join(
    agentIds: readonly string[],
    signal: AbortSignal,
  ): Promise<{ output: JsonValue; isError: boolean }> {
    const unique = [...new Set(agentIds)];
    const joined: JoinedChild[] = [];
    const runs = new Map<string, string>();
    for (const agentId of unique) {
      if (isAgentId(agentId)) runs.set(agentId, childRunName(this.#run, agentId));
      else
        joined.push({
          agentId,
          outcome: { status: 'failed', reason: 'unknown-agent', detail: 'not an agent id' },
        });
    }
    for (const agentId of runs.keys())
      this.#joining.set(agentId, (this.#joining.get(agentId) ?? 0) + 1);
    try {
      const ended = await this.#untilEnded(runs, signal);
      const stillRunning: string[] = [];
      for (const [agentId] of runs) {
        const outcome = ended.get(agentId);
        if (outcome === undefined) {
          stillRunning.push(agentId);
          continue;
        }
        joined.push({ agentId, outcome });
        // A join that reports an end takes it: never delivered again.
        this.#unheard.delete(agentId);
        this.#deliveries = this.#deliveries.filter((delivery) => delivery.agentId !== agentId);
      }
      joined.sort((a, b) => unique.indexOf(a.agentId) - unique.indexOf(b.agentId));
      return joinOutput(joined, stillRunning);
    } finally {
      for (const agentId of runs.keys()) {
        const left = (this.#joining.get(agentId) ?? 1) - 1;
        if (left === 0) this.#joining.delete(agentId);
        else this.#joining.set(agentId, left);
      }
    }
  }

  /** A child started by this run: its end is delivered unless a join reports it. */
  follow(child: DeliveredChild): void {
    this.#unheard.set(child.agentId, child);
    this.#watching ??= this.#watch();
  }

  /**
   * Before a revived run goes on: each child its `spawn_agent` calls started whose
   * end its conversation does not hold and no pending join names is delivered when it ends —
   * at once when it already has — and if the crash lost the spawn's result (so the run does not
   * know the child's id), a notice names it now.
   */
  async adopt(
    parentAgentId: string,
    messages: readonly Message[],
    pendingJoins: readonly string[],
  ): Promise<void> {
    const unheard = unheardChildren({ messages, pendingJoins, ids: this.#ids, parentAgentId });
    const candidates = unheard.map(({ child }) => child);
    const knownIds = new Set(
      unheard.flatMap(({ child, idKnown }) => (idKnown ? [child.agentId] : [])),
    );
    if (candidates.length === 0) return;
    const standing = await this.#store.standing(
      candidates.map((child) => childRunName(this.#run, child.agentId)),
    );
    for (const child of candidates) {
      const found = standing.get(childRunName(this.#run, child.agentId));
      if (found === undefined) continue; // never created: nothing to hear
      if (!knownIds.has(child.agentId) && !endedStanding(found)) {
        this.#deliveries.push({ agentId: child.agentId, message: runningAgainNotice(child) });
      }
      this.follow(child);
    }
  }

  /** Deliver each followed child's end when it comes, unless a join is waiting for it. */
  async #watch(): Promise<void> {
    const signal = this.#stopped.signal;
    while (!signal.aborted && this.#unheard.size > 0) {
      const runs = new Map(
        [...this.#unheard.keys()]
          .filter((agentId) => !this.#joining.has(agentId))
          .map((agentId) => [agentId, childRunName(this.#run, agentId)]),
      );
      let ended: Map<string, ChildOutcome>;
      try {
        ended = await this.#untilEnded(runs, signal, true);
      } catch {
        await sleep(this.#pollMs, signal);
        continue;
      }
      for (const [agentId, outcome] of ended) {
        const child = this.#unheard.get(agentId);
        if (child === undefined || this.#joining.has(agentId)) continue;
        this.#unheard.delete(agentId);
        this.#deliveries.push({ agentId, message: backgroundDelivery(child, outcome) });
      }
      if (ended.size === 0) await sleep(this.#pollMs, signal);
    }
    this.#watching = null;
  }

  /**
   * Wait until every run in `runs` (agent id → run) has ended, or `signal` aborts — or, with
   * `any`, until at least one has — and return the outcomes of those that have.
   */
  async #untilEnded(
    runs: ReadonlyMap<string, string>,
    signal: AbortSignal,
    any = false,
  ): Promise<Map<string, ChildOutcome>> {
    const store = this.#store;
    const pollMs = this.#pollMs;
    const outcomes = new Map<string, ChildOutcome>();
    if (runs.size === 0) return outcomes;
    const watch = await store.watch([...runs.values()]);
    try {
      for (;;) {
        const waiting = [...runs].filter(([agentId]) => !outcomes.has(agentId));
        try {
          const standing = await store.standing(waiting.map(([, run]) => run));
          for (const [agentId, run] of waiting) {
            const found = standing.get(run);
            if (found === undefined) {
              outcomes.set(agentId, {
                status: 'failed',
                reason: 'missing',
                detail: `no child run ${run} exists`,
              });
            } else if (endedStanding(found)) {
              const outcome = await this.#outcomeOf(run, found.status);
              if (outcome !== null) outcomes.set(agentId, outcome);
            }
          }
        } catch {
          // The database went away for a moment: a join waits on, it never answers for a child
          // it could not read.
        }
        if (outcomes.size === runs.size || (any && outcomes.size > 0) || signal.aborted) {
          return outcomes;
        }
        await watch.changed(pollMs, signal);
      }
    } finally {
      watch.dispose();
    }
  }

  /** How an ended child's run says it ended; null when it cannot be read just now. */
  async #outcomeOf(run: string, status: string): Promise<ChildOutcome | null> {
    if (status === 'capped') {
      return {
        status: 'failed',
        reason: 'revival-cap',
        detail: `its worker died and it has used every revival allowed; a person can revive it with llm-agent revive --database URL --max-revivals N ${run}`,
      };
    }
    const read = await this.#store.read(run);
    if (!read.ok && read.reason === 'io-error') return null;
    if (!read.ok) return { status: 'failed', reason: 'unreadable', detail: read.detail };
    if (status === 'finished') {
      const outcome = recordedOutcome(read.records);
      if (outcome !== null) return outcome;
    }
    for (let index = read.records.length - 1; index >= 0; index -= 1) {
      const record = read.records[index];
      if (record?.type === 'run-failed' && 'error' in record) {
        return { status: 'failed', reason: 'failed', detail: String(record.error) };
      }
      if (record?.type === 'run-stopped' && 'reason' in record) {
        return { status: 'failed', reason: 'stopped', detail: String(record.reason) };
      }
      if (record?.type === 'message') break;
    }
    return {
      status: 'failed',
      reason: 'not-revived',
      detail: 'it ended without a final answer (its turn limit, or a revival that was refused)',
    };
  }
}

/** A child's run has ended for its parent: nobody holds it and nobody will run it again unasked. */
function endedStanding(found: { owner: string | null; status: string }): boolean {
  return found.owner === null && ENDED.has(found.status);
}

/** Wait `milliseconds`, or less when `signal` aborts. Never rejects. */
function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return sleepFor(milliseconds, undefined, { signal }).catch(() => undefined);
}
