import type { RunNode } from '../render/run-node.ts';
import type { Reconciliation } from '../revival/index.ts';
import { askReconciles, type PlanReconciliations } from '../runs/reconcile-plan.ts';
import type { TreeRevivalPlan } from '../runs/tree-revival-plan.ts';
import type { AgentRegistry } from '../subagents/agent-definition.ts';

/** The most runs whose answers are kept. */
const MAX_RUNS = 1_000;

/**
 * The reconcile answers of the plans the web view shows, kept for a while: a page is drawn again
 * whenever a file changes, and each drawing must not ask the outside world again. A run is
 * asked again once its open calls change or its answers are older than `ttlMs`.
 *
 * @example
 * const cache = new ReconcileCache(60_000, Date.now);
 * const answers = await cache.answers(plan, roots, registries);
 */
export class ReconcileCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #kept = new Map<string, { at: number; answers: Promise<readonly Reconciliation[]> }>();

  constructor(ttlMs: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The plan's answers: kept ones, and the runs missing asked now (all at once). */
  async answers(
    plan: TreeRevivalPlan,
    roots: RunNode[],
    registries: ReadonlyMap<RunNode, AgentRegistry>,
  ): Promise<PlanReconciliations> {
    const now = this.#now();
    const missing = plan.revivals.filter((revival) => {
      const kept = this.#kept.get(keyOf(revival.node));
      return kept === undefined || now - kept.at > this.#ttlMs;
    });
    if (missing.length > 0) {
      const asked = askReconciles({ ...plan, revivals: missing }, roots, registries);
      for (const revival of missing) {
        const key = keyOf(revival.node);
        this.#kept.delete(key);
        this.#kept.set(key, {
          at: now,
          answers: asked.then(
            (answers) => answers.get(revival.node.path) ?? [],
            () => [],
          ),
        });
      }
      while (this.#kept.size > MAX_RUNS) {
        const oldest = this.#kept.keys().next().value as string;
        this.#kept.delete(oldest);
      }
    }
    const answers = new Map<string, readonly Reconciliation[]>();
    for (const revival of plan.revivals) {
      const reply = (await this.#kept.get(keyOf(revival.node))?.answers) ?? [];
      if (reply.length > 0) answers.set(revival.node.path, reply);
    }
    return answers;
  }
}

/** A run and its calls in flight: the same key while nothing about them changed. */
function keyOf(node: RunNode): string {
  const open = node.inspection.openDispatches.map(
    (dispatch) => `${dispatch.callId}\u0000${dispatch.idempotencyKey ?? ''}`,
  );
  return [node.path, ...open.sort()].join('\u0001');
}
