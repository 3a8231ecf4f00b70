import { describeError } from '../transcript/session-error.ts';
import type { LanguageModel } from 'ai';
import { Loop } from '../loop/loop.ts';
import type { LoopMessage, RunResult } from '../loop/types.ts';
import { reviveStoreRun } from '../revival/revive-store-run.ts';
import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import {
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
} from '../subagents/agent-definition.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';

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
  store: PostgresStore;
  agents: AgentRegistry;
  /** Turns a model spec of an agent definition into a model. */
  resolveModel: ModelResolver;
  policy: RevivalPolicy;
  maxRevivals: number;
  /** Runs looked at per tick (default 16). */
  batch?: number;
  /** Aborts the run in progress (it records `run-stopped`) and ends {@link Worker.serve}. */
  signal?: AbortSignal;
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
  /** Dead runs fenced and left waiting (`awaiting-approval`, `capped`). */
  parked: { run: string; status: 'awaiting-approval' | 'capped' }[];
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
 * `capped`. Runs are run one at a time, to their end; runs of a store have no children yet.
 *
 * @example
 * const worker = new Worker({ store, agents, resolveModel, policy: 'auto', maxRevivals: 3 });
 * await worker.serve(1000); // until options.signal aborts
 */
export class Worker {
  readonly #options: WorkerOptions;

  constructor(options: WorkerOptions) {
    this.#options = options;
  }

  /** Tick every `pollMs` until the signal aborts. */
  async serve(pollMs: number): Promise<void> {
    const signal = this.#options.signal;
    while (signal?.aborted !== true) {
      const report = await this.tick();
      if (report.ran.length > 0 || report.parked.length > 0) continue;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, pollMs);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            done();
          },
          { once: true },
        );
      });
    }
  }

  /** Look for work once and do all of it that this worker can take. */
  async tick(): Promise<TickReport> {
    const { store, policy, maxRevivals } = this.#options;
    const report: TickReport = { ran: [], parked: [], skipped: [] };
    for (const item of await store.work(this.#options.batch ?? 16)) {
      if (this.#options.signal?.aborted === true) break;
      if (item.dead && policy === 'ask') {
        if (await store.park(item.run, 'awaiting-approval')) {
          report.parked.push({ run: item.run, status: 'awaiting-approval' });
          this.#log(`${item.run}: its worker died; fenced, awaiting approval`);
        } else report.skipped.push({ run: item.run, why: 'another supervisor took it first' });
        continue;
      }
      const kind = item.dead ? 'dead' : item.status === 'approved' ? 'approved' : 'queued';
      let writer: TranscriptWriter | null;
      try {
        writer = await store.take(item.run, kind);
      } catch (error) {
        report.skipped.push({ run: item.run, why: describeError(error) });
        continue;
      }
      if (writer === null) {
        report.skipped.push({ run: item.run, why: 'another worker took it first' });
        continue;
      }
      if (kind !== 'queued') {
        const revived = await reviveStoreRun({ store, run: item.run, maxRevivals, writer });
        if (!revived.ok) {
          if (revived.reason === 'revival-cap') {
            // Revive let the run go as `open`; say why it stays so.
            await store.mark(item.run, 'open', 'capped');
            report.parked.push({ run: item.run, status: 'capped' });
            this.#log(`${item.run}: at its revival cap; parked`);
          } else {
            report.skipped.push({ run: item.run, why: `${revived.reason}: ${revived.detail}` });
          }
          continue;
        }
        this.#log(`${item.run}: revived (revival ${revived.revival.ordinal} of ${maxRevivals})`);
        const result = await this.#run(revived.writer, revived.messages);
        report.ran.push({ run: item.run, how: 'revived', result });
        continue;
      }
      const read = await store.read(item.run);
      if (!read.ok) {
        await writer.close();
        report.skipped.push({ run: item.run, why: read.detail });
        continue;
      }
      this.#log(`${item.run}: taken`);
      const result = await this.#run(writer, conversationView(read.records));
      report.ran.push({ run: item.run, how: 'queued', result });
    }
    return report;
  }

  /** Run a taken run to its end with its agent type's definition, then let it go. */
  async #run(writer: TranscriptWriter, messages: LoopMessage[]): Promise<RunResult> {
    const type = writer.state.meta?.agentType ?? '';
    const definition = this.#options.agents[type];
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
      const run = new Loop({
        backends,
        session: writer,
        system: definition.system,
        ...(definition.tools === undefined ? {} : { tools: definition.tools }),
        ...(definition.maxTurns === undefined ? {} : { maxTurns: definition.maxTurns }),
      }).run(messages);
      const stop = () => run.abort('SIGTERM: the worker is stopping');
      this.#options.signal?.addEventListener('abort', stop, { once: true });
      const result = await run;
      this.#options.signal?.removeEventListener('abort', stop);
      this.#log(
        `${writer.path}: ${result.status}${result.error === undefined ? '' : ` (${result.error})`}`,
      );
      return result;
    } finally {
      await writer.close();
    }
  }

  #log(line: string): void {
    this.#options.log?.(line);
  }
}
