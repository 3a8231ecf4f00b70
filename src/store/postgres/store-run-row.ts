import type { TailState } from '../../transcript/tail-state.ts';

/**
 * One run as the `runs` table holds it.
 *
 * @example
 * const row: StoreRunRow = (await store.runs())[0];
 */
export interface StoreRunRow {
  run: string;
  /** The worker holding it, or null. */
  owner: string | null;
  epoch: number;
  leaseExpires: string | null;
  /** True when it is held and its lease ran out: its worker died. */
  leaseExpired: boolean;
  lastSeq: number;
  status: string;
  revivalsUsed: number;
  /** The run whose `spawn_agent` started it; null for a root run. */
  parent: string | null;
  /** 0 for a root run, its parent's plus one for a child. */
  depth: number;
  /** The size of its lines: what its transcript file would take. */
  bytes: number;
  /** Why it was parked `unreadable` (null in any other status). */
  detail: string | null;
}

/**
 * A run's state folded from its records ({@link PostgresStore.tails}): from its last checkpoint
 * on, every line's checksum verified — or why it cannot be read.
 *
 * @example
 * const tail: StoreTail = (await store.tails()).get('main');
 */
export type StoreTail = { ok: true; state: TailState } | { ok: false; detail: string };

/**
 * A run's row with its summary ({@link PostgresStore.summaries}): the state its records fold
 * to, kept by every append in the same statement — or null for a run not written since the
 * schema had summaries (fold its records instead).
 *
 * @example
 * const [first] = await store.summaries();
 * console.log(first?.summary?.revivals);
 */
export interface StoreRunSummary extends StoreRunRow {
  summary: TailState | null;
  /** How many runs name it as their parent, read in the same snapshot as every row. */
  children: number;
}
