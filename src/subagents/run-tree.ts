import type { RunHandle } from '../loop/types.ts';
import { isAgentId, type JsonValue } from '../transcript/records.ts';
import { describeError } from '../transcript/transcript-error.ts';
import { type ChildOutcome, outcomeOfRun } from './child-outcome.ts';
import type { ComposerEvent } from './composer-types.ts';
import { type ChildRecord, Family } from './family.ts';
import { joinOutput } from './join-output.ts';
import { outcomeFromTranscript } from './outcome-from-transcript.ts';
import type { RunPlaces } from './run-places.ts';
import { stopWhen } from './stop-when.ts';

/**
 * The live state of one process's tree of runs: every parent's {@link Family}, the runs in
 * flight (to abort them, to wait for them), and the children reported as not revivable. A
 * join asks it for the named children: a child running here is awaited; any other is
 * answered from its transcript.
 *
 * @example
 * const tree = new RunTree({ places: filePlaces({}) });
 * tree.track(child, run, run.result, false);
 * const answer = await tree.join('runs/main.jsonl', [child.agentId], signal);
 */
export class RunTree {
  readonly #places: RunPlaces;
  readonly #onEvent: ((event: ComposerEvent) => void) | undefined;
  readonly #families = new Map<string, Family>();
  readonly #unrevivable = new Map<string, { reason: string; detail: string }>();
  readonly #active = new Set<Promise<unknown>>();
  readonly #handles = new Set<RunHandle>();

  constructor(options: { places: RunPlaces; onEvent?: (event: ComposerEvent) => void }) {
    this.#places = options.places;
    this.#onEvent = options.onEvent;
  }

  /** The family of the run at `parentPath` (made on first use). */
  familyOf(parentPath: string): Family {
    const key = this.#places.keyOf(parentPath);
    let family = this.#families.get(key);
    if (family === undefined) {
      family = new Family(parentPath);
      this.#families.set(key, family);
    }
    return family;
  }

  /** Children running now, in every family. */
  get running(): number {
    let count = 0;
    for (const family of this.#families.values()) count += family.running;
    return count;
  }

  /**
   * Track a child's run in its parent's family; `closed` settles once its session is released.
   * Throws a TypeError for a run that is not a child by the layout (outside a `*.agents` folder).
   */
  track(child: ChildRecord, run: RunHandle, closed: Promise<unknown>, revived: boolean): void {
    const parentPath = this.#places.parentOf(child.sessionPath);
    if (parentPath === null) {
      throw new TypeError(`${child.sessionPath} is not inside a *.agents folder`);
    }
    const family = this.familyOf(parentPath);
    const ended = (async (): Promise<ChildOutcome> => {
      let outcome: ChildOutcome;
      try {
        outcome = outcomeOfRun(await run.result);
      } catch (error) {
        outcome = { status: 'failed', reason: 'failed', detail: describeError(error) };
      }
      await closed.catch(() => undefined);
      this.#emit({ type: 'child-end', parentPath, child, outcome });
      return outcome;
    })();
    family.track(child, ended);
    this.watch(run);
    this.keep(ended);
    this.#emit({ type: 'child-start', parentPath, child, run, revived });
  }

  /** Remember a run so that {@link abort} reaches it. */
  watch(run: RunHandle): void {
    this.#handles.add(run);
    void run.result.catch(() => undefined).finally(() => this.#handles.delete(run));
  }

  /** Remember work that {@link idle} waits for. */
  keep(promise: Promise<unknown>): void {
    const kept = promise.catch(() => undefined).finally(() => this.#active.delete(kept));
    this.#active.add(kept);
  }

  /** A child that cannot be revived: joins answer with this reason instead of waiting. */
  reportUnrevivable(sessionPath: string, reason: string, detail: string): void {
    this.#unrevivable.set(this.#places.keyOf(sessionPath), { reason, detail });
  }

  /** The outcome of a child not running here: a reported reason, or its transcript's word. */
  untracked(parentPath: string, agentId: string): Promise<ChildOutcome> {
    if (!isAgentId(agentId)) {
      return Promise.resolve({
        status: 'failed',
        reason: 'unknown-agent',
        detail: `${JSON.stringify(agentId)} is not an agent id`,
      });
    }
    const location = this.#places.childOf(parentPath, agentId);
    return outcomeFromTranscript(
      this.#places,
      agentId,
      location,
      this.#unrevivable.get(this.#places.keyOf(location)),
    );
  }

  /**
   * A join of `parentPath`'s children: waits until they end, `signal` aborts, or `timer` (a
   * timeout) ends, and answers as `task_wait` does.
   */
  async join(
    parentPath: string,
    agentIds: readonly string[],
    signal: AbortSignal,
    timer?: (signal: AbortSignal) => Promise<void>,
  ): Promise<{ output: JsonValue; isError: boolean }> {
    const stop = stopWhen(signal, timer);
    try {
      const found = await this.familyOf(parentPath).join(agentIds, {
        untracked: (agentId) => this.untracked(parentPath, agentId),
        stop: stop.promise,
      });
      return joinOutput(found.joined, found.stillRunning);
    } finally {
      stop.dispose();
    }
  }

  /** Abort every run remembered. */
  abort(reason?: string): void {
    for (const handle of this.#handles) handle.abort(reason);
  }

  /** Resolves once all remembered work has ended. */
  async idle(): Promise<void> {
    while (this.#active.size > 0) await Promise.all([...this.#active]);
  }

  #emit(event: ComposerEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // A display's failure must not change what the tree does.
    }
  }
}
