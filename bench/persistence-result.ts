import type { TimelineSummary } from './step-timeline.ts';

/** The step counts at which cost per step, bytes and syncs are reported. */
export const REPORT_STEPS = [10, 100, 1000] as const;

/** A figure sampled after N steps had completed, keyed by N. */
export type AtSteps = Record<string, number>;

/** One row of the persistence benchmark: a system, a persistence setting, a scripted run. */
export type PersistenceRow =
  | ({
      ok: true;
      system: 'ours' | 'langgraph';
      /** Short name, such as `ours fsync` or `langgraph postgres sync`. */
      name: string;
      /** What actually ran: the real Loop or a stand-in, LangGraph's saver and durability. */
      engine: string;
      steps: number;
      /** Bytes persisted after N steps (ours: written through the file system). */
      bytesAt: AtSteps;
      bytesTotal: number;
      /** What `bytes` counts for this row. */
      bytesMeaning: string;
      /** Sync calls over the whole run (null when the system cannot tell). */
      syncs: number | null;
      syncsMeaning: string;
      notes: string[];
    } & TimelineSummary)
  | { ok: false; system: 'ours' | 'langgraph'; name: string; reason: string };
