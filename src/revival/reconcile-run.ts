import type { TranscriptStore } from '../store/transcript-store.ts';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { scanRecords } from '../transcript/scan-transcript.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';
import {
  callsToReconcile,
  type ReconcileOptions,
  type Reconciliation,
  reconcileCalls,
} from './reconcile-calls.ts';

/**
 * Which transcript file to reconcile, and how.
 *
 * @example
 * const options: ReconcileTranscriptOptions = { path: 'runs/a.jsonl', tools };
 */
export interface ReconcileTranscriptOptions extends ReconcileOptions {
  path: string;
  fileSystem?: FileSystem;
}

/**
 * Ask the tools of a transcript's calls in flight what became of them (see
 * {@link reconcileCalls}). Reads the file (streaming, in constant memory beyond the last
 * assistant turn) and writes nothing; never throws — a transcript that cannot be read has
 * nothing to ask about (`[]`), and its revive answers every call as interrupted.
 *
 * @example
 * const reconciled = await reconcileTranscript({ path, tools });
 * await Revival.revive({ path, agentId: 'main', maxRevivals: 2, reconciled });
 */
export async function reconcileTranscript(
  options: ReconcileTranscriptOptions,
): Promise<Reconciliation[]> {
  let state = emptyTailState();
  let lastTurn: TranscriptRecord | null = null;
  try {
    const iterator = scanRecords(options.path, {
      fileSystem: options.fileSystem ?? nodeFileSystem,
    });
    for (;;) {
      const step = await iterator.next();
      if (step.done === true) {
        if (!step.value.ok) return [];
        break;
      }
      const record = step.value.record;
      state = foldTailState(state, record, 0);
      if (isAssistantTurn(record)) lastTurn = record;
    }
  } catch {
    return [];
  }
  return reconcileCalls(callsToReconcile(lastTurn === null ? [] : [lastTurn], state), options);
}

/**
 * Which run of a store to reconcile, and how.
 *
 * @example
 * const options: ReconcileStoreRunOptions = { store, run: 'report-42', tools, timeoutMs: 5_000 };
 */
export interface ReconcileStoreRunOptions extends ReconcileOptions {
  store: TranscriptStore;
  run: string;
}

/**
 * {@link reconcileTranscript} for a run of a store (PostgreSQL): reads its records, writes
 * nothing, never throws.
 *
 * @example
 * const reconciled = await reconcileStoreRun({ store, run: 'report-42', tools, deadline: Date.now() + 5_000 });
 * await reviveStoreRun({ store, run: 'report-42', maxRevivals: 3, reconciled });
 */
export async function reconcileStoreRun(
  options: ReconcileStoreRunOptions,
): Promise<Reconciliation[]> {
  let records: (TranscriptRecord | ForeignRecord)[];
  try {
    const read = await options.store.read(options.run);
    if (!read.ok) return [];
    records = read.records;
  } catch {
    return [];
  }
  let state = emptyTailState();
  for (const record of records) state = foldTailState(state, record, 0);
  return reconcileCalls(callsToReconcile(records, state), options);
}

function isAssistantTurn(record: TranscriptRecord | ForeignRecord): record is TranscriptRecord {
  return isKnownRecord(record) && record.type === 'message' && record.role === 'assistant';
}
