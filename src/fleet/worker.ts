import { describeError, TranscriptError } from '../transcript/transcript-error.ts';
import type { LanguageModel } from 'ai';
import { Loop } from '../loop/loop.ts';
import { toolDefinitionsOf } from '../loop/tool-set.ts';
import type { LoopMessage, LoopOptions, RunResult, ToolDefinition } from '../loop/types.ts';
import type { Reconciliation } from '../revival/reconcile-calls.ts';
import type { ReviveRefused } from '../revival/revive.ts';
import { reviveStoreRun } from '../revival/revive-store-run.ts';
import type { LeasedWriter, RunQueue } from '../store/run-queue.ts';
import {
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
} from '../subagents/agent-definition.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import { ChildRuns } from './child-runs.ts';
import { reconcileInLease } from './reconcile-in-lease.ts';
import type { RunFamily } from './run-family.ts';

/**
 * What to do with a run whose worker died (its lease expired): `auto` revives it at once, up
 * to the cap; `ask` fences it and leaves it `awaiting-approval` until a person approves it
 * (`llm-agent revive --database URL RUN`), after which any worker revives it.
 *
 * @example
 * const policy: RevivalPolicy = 'ask';
 */
export type RevivalPolicy = 'auto' | 'ask';

/**
 * A worker's setting: the store, the agent types it can run, what to do with dead runs.
 *
 * @example
 * const options: WorkerOptions = { store, agents, resolveModel, policy: 'ask', maxRevivals: 3 };
 */
export interface WorkerOptions {
  store: RunQueue;
  agents: AgentRegistry;
  /** Turns a model spec of an agent definition into a model. */
  resolveModel: ModelResolver;
  policy: RevivalPolicy;
  maxRevivals: number;
  /** Runs looked at per tick (default 16). */
  batch?: number;
  /** Runs this worker carries at once (default 4). A parent waiting for its children holds one. */
  concurrency?: number;
  /** Children: how deep a tree may grow (default 2), how many of one run's at once (default 4). */
  children?: { maxDepth?: number; maxConcurrent?: number };
  /** The longest a join sleeps between looks at its children when no notification comes (default 1000 ms). */
  joinPollMs?: number;
  /** Aborts the run in progress (it records `run-stopped`) and ends {@link Worker.serve}. */
  signal?: AbortSignal;
  /**
   * How long each tool's reconcile may take when a dead or approved run is revived (default
   * 10 000 ms); half the store's lease bounds it too, so a reconcile that hangs never holds a
   * run past its lease.
   */
  reconcileTimeoutMs?: number;
  /** Hears what the worker does, one line each (default: nothing). */
  log?: (line: string) => void;
}

/**
 * What one tick did, run by run.
 *
 * @example
 * const report: TickReport = await worker.tick();
 * console.log(report.ran.length, 'runs carried on');
 */
export interface TickReport {
  /** Runs taken and run to their end (queued, revived or approved), with how they ended. */
  ran: { run: string; how: 'queued' | 'revived'; result: RunResult }[];
  /**
   * Runs fenced and left waiting: dead ones (`awaiting-approval`, `capped`), and any taken that
   * could not be read (`unreadable`: parked for a person, with why).
   */
  parked: { run: string; status: 'awaiting-approval' | 'capped' | 'unreadable' }[];
  /** Runs another worker took first, or that could not be taken (with why). */
  skipped: { run: string; why: string }[];
}

/**
 * A worker over the PostgreSQL store: each tick it looks for work — runs whose worker died,
 * runs queued, runs a person approved — and takes each it can. Taking is exclusive: a queued run
 * is opened (a new epoch), a dead or approved one revived (`reviveStoreRun`, which opens it
 * the same way), so of several workers exactly one gets each run, and a dead worker coming
 * back can never write to it again. Every worker supervises: under the `ask` policy a dead run
 * is fenced and parked `awaiting-approval` (no tokens are spent without a person); under `auto`
 * it is revived at once, up to the cap counted from its own records; a run at its cap is parked
 * `capped`. A worker carries up to `concurrency` runs at once. A run's `spawn_agent` submits its
 * child as a run of its own that any worker takes (deepest runs first), and its `task_wait` waits
 * for the child in the database ({@link ChildRuns}): a child revived on one worker answers its
 * parent's join on another.
 *
 * @example
 * const worker = new Worker({ store, agents, resolveModel, policy: 'auto', maxRevivals: 3 });
 * await worker.serve(1000); // until options.signal aborts
 */
export class Worker {
  readonly #options: WorkerOptions;
  readonly #concurrency: number;
  readonly #children: ChildRuns;
  /** The runs this worker carries now, by name. */
  readonly #carrying = new Map<string, Promise<void>>();

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.#concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(this.#concurrency) || this.#concurrency < 1) {
      throw new RangeError('Worker: concurrency must be a positive integer');
    }
    this.#children = new ChildRuns({
      store: options.store,
      registry: options.agents,
      ...(options.children?.maxDepth === undefined ? {} : { maxDepth: options.children.maxDepth }),
      ...(options.children?.maxConcurrent === undefined
        ? {}
        : { maxConcurrent: options.children.maxConcurrent }),
      ...(options.joinPollMs === undefined ? {} : { pollMs: options.joinPollMs }),
    });
  }

  /**
   * Look for work every `pollMs` — and whenever a run ends — taking what fits in the free slots,
   * until the signal aborts; then wait for the runs in progress to stop.
   */
  async serve(pollMs: number): Promise<void> {
    const signal = this.#options.signal;
    while (signal?.aborted !== true) {
      const report: TickReport = { ran: [], parked: [], skipped: [] };
      let started: Promise<void>[] = [];
      try {
        started = await this.#takeWork(report);
      } catch (error) {
        // The database went away for a moment (a restart, a cut connection): look again later.
        this.#log(`cannot look for work: ${describeError(error)}`);
      }
      if (report.parked.length > 0) continue;
      await new Promise<void>((done) => {
        const timer = setTimeout(finish, started.length > 0 ? 0 : pollMs);
        const ending = this.#carrying.size >= this.#concurrency;
        function finish() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', finish);
          done();
        }
        signal?.addEventListener('abort', finish, { once: true });
        // With every slot taken, look again as soon as one frees.
        if (ending) void Promise.race(this.#carrying.values()).then(finish);
      });
    }
    await Promise.all(this.#carrying.values());
  }

  /**
   * Look for work once, take what fits in the free slots, and wait until the runs taken have
   * ended.
   */
  async tick(): Promise<TickReport> {
    const report: TickReport = { ran: [], parked: [], skipped: [] };
    await Promise.all(await this.#takeWork(report));
    return report;
  }

  /** Take the work listed that fits in the free slots; the runs taken, each running. */
  async #takeWork(report: TickReport): Promise<Promise<void>[]> {
    const { store, policy } = this.#options;
    const started: Promise<void>[] = [];
    if (this.#carrying.size >= this.#concurrency) return started;
    for (const item of await store.work(this.#options.batch ?? 16)) {
      if (this.#options.signal?.aborted === true) break;
      if (this.#carrying.size >= this.#concurrency) break;
      if (item.dead && policy === 'ask') {
        if (await store.park(item.run, 'awaiting-approval')) {
          report.parked.push({ run: item.run, status: 'awaiting-approval' });
          this.#log(`${item.run}: its worker died; fenced, awaiting approval`);
        } else report.skipped.push({ run: item.run, why: 'another supervisor took it first' });
        continue;
      }
      const kind = item.dead ? 'dead' : item.status === 'approved' ? 'approved' : 'queued';
      let writer: LeasedWriter | null;
      try {
        writer = await store.take(item.run, kind);
      } catch (error) {
        this.#notTaken(item.run, error, report);
        continue;
      }
      if (writer === null) {
        report.skipped.push({ run: item.run, why: 'another worker took it first' });
        continue;
      }
      const taken = writer;
      const carried = this.#carry(item.run, kind, taken, report)
        .catch(async (error: unknown) => {
          // Let the run go (its lease would keep it held for ever otherwise): another worker,
          // or this one, carries it on.
          report.skipped.push({ run: item.run, why: describeError(error) });
          this.#log(`${item.run}: ${describeError(error)}`);
          taken.abandon(describeError(error));
          await taken.close().catch(() => undefined);
        })
        .finally(() => this.#carrying.delete(item.run));
      this.#carrying.set(item.run, carried);
      started.push(carried);
    }
    return started;
  }

  /**
   * Say why a run could not be taken. One that cannot be read was parked `unreadable` by the
   * store ({@link RunQueue.take}): no worker takes it again, so this is said once.
   */
  #notTaken(run: string, error: unknown, report: TickReport): void {
    const why = describeError(error);
    if (TranscriptError.isInstance(error) && error.code === 'unreadable') {
      report.parked.push({ run, status: 'unreadable' });
      this.#log(`${run}: cannot be read (${why}); parked unreadable for a person`);
      return;
    }
    report.skipped.push({ run, why });
    this.#log(`${run}: cannot be taken (${why})`);
  }

  /** Carry a taken run to its end: revive it first unless it was queued. */
  async #carry(
    run: string,
    kind: 'dead' | 'queued' | 'approved',
    writer: LeasedWriter,
    report: TickReport,
  ): Promise<void> {
    const { store, maxRevivals } = this.#options;
    if (kind !== 'queued') {
      // Tools that can see the world say what became of the calls in flight: asked only now,
      // with the run held, and within the lease. Nothing is run again.
      const reconciled = await this.#reconcile(run, writer);
      const revived = await reviveStoreRun({ store, run: run, maxRevivals, writer, reconciled });
      if (!revived.ok) {
        await this.#refused(run, writer, revived, report);
        return;
      }
      this.#log(`${run}: revived (revival ${revived.revival.ordinal} of ${maxRevivals})`);
      const pendingJoins = revived.pendingJoins.flatMap((join) => join.agentIds);
      // revived.writer is the writer taken above: revive goes on with the caller's own.
      const result = await this.#run(run, writer, revived.messages, pendingJoins);
      report.ran.push({ run: run, how: 'revived', result });
      return;
    }
    const read = await store.read(run);
    if (!read.ok) {
      // Back to the queue as it was: nothing of it ran.
      writer.releaseAs('queued');
      await writer.close();
      report.skipped.push({ run: run, why: read.detail });
      return;
    }
    this.#log(`${run}: taken`);
    const result = await this.#run(run, writer, conversationView(read.records), []);
    report.ran.push({ run: run, how: 'queued', result });
  }

  /** Ask the run's tools that have a reconcile about its calls in flight; say what each answered. */
  async #reconcile(run: string, writer: LeasedWriter): Promise<Reconciliation[]> {
    const type = writer.state.meta?.agentType ?? '';
    const definition = Object.hasOwn(this.#options.agents, type)
      ? this.#options.agents[type]
      : undefined;
    const tools = toolDefinitionsOf(definition?.tools ?? [], definition?.idempotency);
    if (!tools.some((tool) => tool.reconcile !== undefined)) return [];
    const reconciled = await reconcileInLease({
      store: this.#options.store,
      run,
      writer,
      tools: tools as ToolDefinition<unknown>[],
      ...(this.#options.reconcileTimeoutMs === undefined
        ? {}
        : { timeoutMs: this.#options.reconcileTimeoutMs }),
      ...(this.#options.signal === undefined ? {} : { signal: this.#options.signal }),
    });
    for (const asked of reconciled) {
      this.#log(
        `${run}: reconcile of ${asked.toolName} ${asked.callId}: ${asked.answer}${asked.detail === undefined ? '' : ` (${asked.detail})`}`,
      );
    }
    return reconciled;
  }

  /**
   * Let a run go whose revival was refused: at its cap, released `capped` (one statement, so it
   * is never left looking unfinished); finished or empty, as it is; refused because the database
   * failed for a moment, abandoned — the lease runs out and it is work again for any worker —
   * unless the run really is unreadable, which is parked `unreadable` for a person, with why.
   */
  async #refused(
    run: string,
    writer: LeasedWriter,
    refusal: ReviveRefused,
    report: TickReport,
  ): Promise<void> {
    if (refusal.reason === 'revival-cap') {
      writer.releaseAs('capped');
      await writer.close();
      report.parked.push({ run, status: 'capped' });
      this.#log(`${run}: at its revival cap; parked`);
      return;
    }
    if (refusal.reason === 'unreadable') {
      // Its records read, but not as a run that can go on (a checkpoint that lies): a person
      // decides, as for a run whose records do not read.
      writer.abandon(refusal.detail);
      await writer.close();
      if (await this.#options.store.parkUnreadable(run, writer.epoch, refusal.detail)) {
        report.parked.push({ run, status: 'unreadable' });
        this.#log(`${run}: cannot be revived (${refusal.detail}); parked unreadable for a person`);
      }
      return;
    }
    report.skipped.push({ run, why: `${refusal.reason}: ${refusal.detail}` });
    if (writer.fenced) this.#log(`${run}: fenced — another worker took it over; this one stops it`);
    if (refusal.reason === 'io-error') writer.abandon(`${refusal.reason}: ${refusal.detail}`);
    await writer.close();
  }

  /** Run a taken run to its end with its agent type's definition and its children, then let it go. */
  async #run(
    run: string,
    writer: LeasedWriter,
    messages: LoopMessage[],
    pendingJoins: string[],
  ): Promise<RunResult> {
    const meta = writer.state.meta;
    const type = meta?.agentType ?? '';
    const definition = Object.hasOwn(this.#options.agents, type)
      ? this.#options.agents[type]
      : undefined;
    let family: RunFamily | undefined;
    let fenced = false;
    try {
      if (definition === undefined) {
        return {
          status: 'failed',
          text: '',
          usage: { inputTokens: 0, outputTokens: 0 },
          stopReason: 'error',
          error: `this worker's agents define no type "${type}"`,
        };
      }
      const backends: LanguageModel[] = backendsOf(definition, this.#options.resolveModel);
      const depth = (await this.#options.store.standing([run])).get(run)?.depth ?? 0;
      family = await this.#children.familyOf({
        run,
        agentId: meta?.agentId ?? run,
        depth,
        canSpawn: definition.canSpawn !== false,
        messages,
        pendingJoins,
      });
      const createLoop = definition.createLoop ?? ((options: LoopOptions) => new Loop(options));
      const handle = createLoop({
        backends,
        writer: writer,
        system: definition.system,
        tools: [
          ...toolDefinitionsOf(definition.tools ?? [], definition.idempotency),
          ...family.tools,
        ] as ToolDefinition<never>[],
        resolveJoin: family.resolveJoin,
        takeDeliveries: family.takeDeliveries,
        ...(definition.maxTurns === undefined ? {} : { maxTurns: definition.maxTurns }),
        ...(definition.compaction === undefined ? {} : { compaction: definition.compaction }),
      }).run(messages);
      const stop = () => handle.abort('SIGTERM: the worker is stopping');
      this.#options.signal?.addEventListener('abort', stop, { once: true });
      // A writer fenced out (this worker paused past its lease and another took the run over)
      // stops its run at once — even one waiting in a join, which writes nothing to find out.
      const fence = setInterval(() => {
        if (!fenced && writer.fenced) {
          fenced = true;
          this.#log(`${run}: fenced — another worker took it over; this one stops it`);
          handle.abort('fenced: another worker took this run over');
        }
      }, 100);
      let result: RunResult;
      try {
        result = await handle;
      } finally {
        clearInterval(fence);
      }
      this.#options.signal?.removeEventListener('abort', stop);
      this.#log(
        `${writer.path}: ${result.status}${result.error === undefined ? '' : ` (${result.error})`}`,
      );
      return result;
    } catch (error) {
      // Not carried to an end (the database went away mid-way): never let it go looking
      // settled — its lease runs out and a supervisor carries it on.
      writer.abandon(describeError(error));
      throw error;
    } finally {
      family?.stop();
      await writer.close();
      if (!fenced && writer.fenced) {
        this.#log(`${run}: fenced — another worker took it over; this one stops it`);
      }
    }
  }

  #log(line: string): void {
    this.#options.log?.(line);
  }
}
