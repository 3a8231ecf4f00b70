import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import { type ChildOutcome, recordedOutcome } from './child-outcome.ts';
import type { RunPlaces } from './run-places.ts';

/**
 * What a child's transcript says about a child this process is not running: its final answer
 * when it finished, otherwise a failure naming the child and why it cannot answer — the
 * reason a caller `reported` (a revival refused: `revival-cap`, …) when there is one. A
 * finished transcript wins over any report: a run that ended has its answer. Never throws;
 * never writes.
 *
 * @example
 * const places = filePlaces({});
 * const outcome = await outcomeFromTranscript(places, 'researcher-1', 'runs/main.agents/researcher-1.jsonl');
 */
export async function outcomeFromTranscript(
  places: RunPlaces,
  agentId: string,
  location: string,
  reported?: { reason: string; detail: string },
): Promise<ChildOutcome> {
  const read = await places.read(location);
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
          detail: `no child of this run has the id ${agentId}: ${location} does not exist`,
        }
      : {
          status: 'failed',
          reason: 'unreadable',
          detail: `child ${agentId} cannot be read: ${read.detail}`,
        };
  }
  let held = false;
  try {
    held = await places.held(location);
  } catch {
    // A probe that fails says nothing either way; the transcript is reported as not revived.
  }
  return held
    ? {
        status: 'failed',
        reason: 'running-elsewhere',
        detail: `child ${agentId} is being run by another process, so it cannot be joined from this one`,
      }
    : {
        status: 'failed',
        reason: 'not-revived',
        detail: `child ${agentId} did not finish and was not revived: ${endedHow(read.records)} (${location})`,
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
