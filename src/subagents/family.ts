import type { Message } from '../transcript/records.ts';
import type { ChildOutcome } from './child-outcome.ts';
import { backgroundDelivery, type DeliveredChild, type JoinedChild } from './join-output.ts';

/**
 * A child as its parent knows it.
 *
 * @example
 * const child: ChildRecord = { agentId: 'a', agentType: 'worker', label: 'a', callId: 'call_1', sessionPath: 'runs/main.agents/a.jsonl' };
 */
export interface ChildRecord extends DeliveredChild {
  /** Where the child's transcript is: its path, or its run name in the Composer's store. */
  sessionPath: string;
}

interface Entry {
  child: ChildRecord;
  /** Null while the child runs. */
  outcome: ChildOutcome | null;
  ended: Promise<ChildOutcome>;
  /** Joins waiting for it right now. */
  waiters: number;
  /** Its outcome was returned by a join or queued for delivery: never delivered again. */
  reported: boolean;
}

interface Delivery {
  agentId: string;
  /** An outcome delivery is withdrawn when a join returns the same outcome first. */
  kind: 'outcome' | 'notice';
  message: Message;
}

/**
 * What a join found: the children that ended, and those still running when it stopped waiting.
 *
 * @example
 * const family = new Family(path);
 * const untracked = (agentId: string) => outcomeFromTranscript(filePlaces({}), agentId, childTranscriptPath(path, agentId));
 * const { joined, stillRunning }: JoinFound = await family.join(['researcher-1'], { untracked });
 */
export interface JoinFound {
  joined: JoinedChild[];
  stillRunning: string[];
}

/**
 * The children of one parent run and the turns waiting to be delivered to it. A child that
 * ends while a join waits for it is that join's; one that ends while nobody waits is queued
 * for delivery at the parent's next safe point; either way its outcome is reported once.
 *
 * @example
 * const family = new Family('runs/main.jsonl');
 * const sessionPath = childTranscriptPath(family.parentPath, 'researcher-1');
 * const child = { agentId: 'researcher-1', agentType: 'researcher', label: 'Researcher', callId: 'call_1', sessionPath };
 * family.track(child, new Loop({ backends, writer: session }).run(messages).result.then(outcomeOfRun));
 * const untracked = (agentId: string) => outcomeFromTranscript(filePlaces({}), agentId, childTranscriptPath(path, agentId));
 * const { joined } = await family.join([child.agentId], { untracked });
 */
export class Family {
  readonly parentPath: string;
  readonly #entries = new Map<string, Entry>();
  #deliveries: Delivery[] = [];

  constructor(parentPath: string) {
    this.parentPath = parentPath;
  }

  /** The child with this id, when this family tracks it. */
  child(agentId: string): { child: ChildRecord; outcome: ChildOutcome | null } | undefined {
    const entry = this.#entries.get(agentId);
    return entry === undefined ? undefined : { child: entry.child, outcome: entry.outcome };
  }

  /** Children still running. */
  get running(): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.outcome === null) count += 1;
    return count;
  }

  /**
   * Track a child run under its id. `ended` must never reject. Throws for an id already
   * tracked and still running: one id, one run.
   */
  track(child: ChildRecord, ended: Promise<ChildOutcome>): void {
    const existing = this.#entries.get(child.agentId);
    if (existing !== undefined && existing.outcome === null) {
      throw new Error(`agent ${child.agentId} is already running under ${this.parentPath}`);
    }
    const entry: Entry = { child, outcome: null, ended, waiters: 0, reported: false };
    this.#entries.set(child.agentId, entry);
    void ended.then((outcome) => {
      entry.outcome = outcome;
      if (entry.waiters === 0 && !entry.reported) {
        entry.reported = true;
        this.#deliveries.push({
          agentId: child.agentId,
          kind: 'outcome',
          message: backgroundDelivery(child, outcome),
        });
      }
    });
  }

  /** Queue a turn for the parent's next safe point. */
  deliver(agentId: string, kind: Delivery['kind'], message: Message): void {
    this.#deliveries.push({ agentId, kind, message });
  }

  /** The queued turns, in order, forgotten once taken (the loop's `takeDeliveries`). */
  takeDeliveries(): Message[] {
    const taken = this.#deliveries.map((delivery) => delivery.message);
    this.#deliveries = [];
    return taken;
  }

  /**
   * Wait for the named children. Untracked ids are answered by `untracked` (from their
   * transcripts). Stops early when `stop` resolves (a timeout, an abort): the children not
   * ended by then are `stillRunning`, and are delivered when they end.
   */
  async join(
    agentIds: readonly string[],
    options: {
      untracked: (agentId: string) => Promise<ChildOutcome>;
      stop?: Promise<void>;
    },
  ): Promise<JoinFound> {
    const unique = [...new Set(agentIds)];
    const tracked = unique.flatMap((agentId) => {
      const entry = this.#entries.get(agentId);
      return entry === undefined ? [] : [entry];
    });
    const fromTranscripts = new Map<string, ChildOutcome>();
    await Promise.all(
      unique
        .filter((agentId) => !this.#entries.has(agentId))
        .map(async (agentId) => fromTranscripts.set(agentId, await options.untracked(agentId))),
    );
    for (const entry of tracked) entry.waiters += 1;
    try {
      const all = Promise.all(tracked.map((entry) => entry.ended)).then(() => undefined);
      await (options.stop === undefined ? all : Promise.race([all, options.stop]));
    } finally {
      for (const entry of tracked) entry.waiters -= 1;
    }
    const joined: JoinedChild[] = [];
    const stillRunning: string[] = [];
    for (const agentId of unique) {
      const entry = this.#entries.get(agentId);
      const outcome = entry === undefined ? fromTranscripts.get(agentId) : entry.outcome;
      if (outcome === null || outcome === undefined) {
        stillRunning.push(agentId);
        continue;
      }
      joined.push({ agentId, outcome });
      if (entry !== undefined) entry.reported = true;
      // A join that returns an outcome takes it: a delivery of the same outcome still queued
      // (a tracked child that ended just before, or one a revived parent was to be told about)
      // would tell the parent twice.
      this.#deliveries = this.#deliveries.filter(
        (delivery) => !(delivery.agentId === agentId && delivery.kind === 'outcome'),
      );
    }
    return { joined, stillRunning };
  }
}
