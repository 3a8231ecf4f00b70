import type { WrapperSection } from './wrapper-section.ts';
import type { MachineInfo } from './machine-info.ts';
import type { MemorySection } from './memory-section.ts';
import type { PersistenceSection } from './persistence-section.ts';
import type { RevivalSection } from './revival-section.ts';
import type { StatusSection } from './status-section.ts';
import type { UiSection } from './ui-section.ts';

/** Goal 1's figures as bench/inspect.ts measures them, or why they are missing. */
export type InspectSection =
  | {
      ok: true;
      source: string;
      sizes: {
        bytes: number;
        inspectMs: number;
        firstInspectMs?: number;
        fullParseMs: number;
        ratio: number;
      }[];
    }
  | { ok: false; reason: string };

/** One goal of issue 8, judged. `met` is null when it could not be measured. */
export interface GoalVerdict {
  goal: string;
  target: string;
  measured: string;
  met: boolean | null;
}

/** Everything one `npm run bench` measured: what bench/results.json holds. */
export interface BenchResults {
  formatVersion: 1;
  startedAt: string;
  durationMs: number;
  quick: boolean;
  /** The commit measured, and whether the working tree had changes on top of it. */
  commit: { id: string; dirty: boolean };
  machine: MachineInfo;
  goals: GoalVerdict[];
  inspect?: InspectSection;
  status?: StatusSection;
  persistence?: PersistenceSection;
  revival?: RevivalSection;
  memory?: MemorySection;
  ui?: UiSection;
  wrapper?: WrapperSection;
}
