import { dirname, resolve } from 'node:path';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { peek } from '../transcript/peek.ts';
import type { ForeignRecord, SessionMetaBody, TranscriptRecord } from '../transcript/records.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import { scanRecords } from '../transcript/scan-transcript.ts';
import { type ChildOutcome, recordedOutcome } from './child-outcome.ts';

/**
 * What a child's transcript says about a child this process is not running: its final answer
 * when it finished, otherwise a failure naming the child and why it cannot answer — the
 * reason a caller `reported` (a revival refused: `revival-cap`, …) when there is one. A
 * finished transcript wins over any report: a run that ended has its answer. Never throws;
 * never writes.
 *
 * @example
 * const outcome = await outcomeFromTranscript('researcher-1', 'runs/main.agents/researcher-1.jsonl');
 */
export async function outcomeFromTranscript(
  agentId: string,
  path: string,
  fileSystem?: FileSystem,
  reported?: { reason: string; detail: string },
): Promise<ChildOutcome> {
  const options = fileSystem === undefined ? {} : { fileSystem };
  const read = await peek(path, options);
  const recorded = read.ok ? recordedOutcome(read.records) : null;
  if (recorded !== null) return recorded;
  if (reported !== undefined) {
    return {
      status: 'failed',
      reason: reported.reason,
      detail: `child ${agentId} could not be revived: ${reported.detail}`,
    };
  }
  if (!read.ok) {
    return read.reason === 'missing'
      ? {
          status: 'failed',
          reason: 'missing',
          detail: `no child of this run has the id ${agentId}: ${path} does not exist`,
        }
      : {
          status: 'failed',
          reason: 'unreadable',
          detail: `child ${agentId} cannot be read: ${read.detail}`,
        };
  }
  let locked = false;
  try {
    locked = await (fileSystem ?? nodeFileSystem).isLocked(path);
  } catch {
    // A probe that fails says nothing either way; the transcript is reported as not revived.
  }
  return locked
    ? {
        status: 'failed',
        reason: 'running-elsewhere',
        detail: `child ${agentId} is being run by another process, so it cannot be joined from this one`,
      }
    : {
        status: 'failed',
        reason: 'not-revived',
        detail: `child ${agentId} did not finish and was not revived: ${endedHow(read.records)} (${path})`,
      };
}

/** How a transcript that did not finish ends, in a few words: failed, stopped, or mid-run. */
function endedHow(records: readonly (TranscriptRecord | ForeignRecord)[]): string {
  let state = emptyTailState();
  for (const record of records) state = foldTailState(state, record, 0);
  const halt = state.halt;
  if (halt === null) return 'its transcript ends mid-run';
  return halt.state === 'failed' ? `it failed: ${halt.detail}` : `it was stopped: ${halt.detail}`;
}

/**
 * The `session-meta` of a transcript, read from its first line only; null when the first
 * record is not one or the file cannot be read.
 *
 * @example
 * const meta = await readSessionMeta('runs/main.agents/researcher-1.jsonl');
 * if (meta?.parent) console.log('child of', meta.parent.transcript);
 */
export async function readSessionMeta(
  path: string,
  fileSystem?: FileSystem,
): Promise<SessionMetaBody | null> {
  const iterator = scanRecords(path, fileSystem === undefined ? {} : { fileSystem });
  try {
    const step = await iterator.next();
    if (step.done === true || step.value.record.type !== 'session-meta') return null;
    return step.value.record as unknown as SessionMetaBody;
  } catch {
    return null;
  } finally {
    await iterator.return(undefined as never).catch(() => undefined);
  }
}

/**
 * How deep a run is in its tree: 0 for a root, 1 for its child, … — known depths first
 * (`known`, for runs built in this process), else counted along the `session-meta` parent
 * links. A broken or cyclic chain ends the count where it breaks (at most 64).
 *
 * @example
 * const depth = await depthOf('runs/main.agents/a.agents/b.jsonl', () => undefined); // 2
 */
export async function depthOf(
  path: string,
  known: (path: string) => number | undefined,
  fileSystem?: FileSystem,
): Promise<number> {
  let current = resolve(path);
  for (let hops = 0; hops < 64; hops += 1) {
    const depth = known(current);
    if (depth !== undefined) return depth + hops;
    const meta = await readSessionMeta(current, fileSystem);
    if (meta?.parent === undefined) return hops;
    current = resolve(dirname(current), meta.parent.transcript);
  }
  return 64;
}
