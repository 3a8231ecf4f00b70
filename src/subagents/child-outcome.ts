import type { RunResult } from '../loop/types.ts';
import type { ForeignRecord, MessageBody, TranscriptRecord } from '../transcript/records.ts';
import { legacyFailureHalt } from '../transcript/run-halt.ts';

/**
 * How a child ended, as its parent reads it: its final answer, or why there is none.
 * `reason` is the run's own (`failed`, `aborted`, `max-turns`), a revival's reason as reported
 * (`revival-cap`, `unreadable`, `empty`, …), or what its transcript says: `not-revived` (it
 * ends mid-run and nothing runs it), `running-elsewhere` (another process holds it),
 * `missing` (no transcript), `unknown-agent` (not an agent id at all).
 *
 * @example
 * const outcome: ChildOutcome = { status: 'failed', reason: 'revival-cap', detail: 'revived 2 of 2 times' };
 */
export type ChildOutcome =
  | { status: 'finished'; answer: string }
  | { status: 'failed'; reason: string; detail: string; answer?: string };

/**
 * The outcome of a child's run result.
 *
 * @example
 * outcomeOfRun({ status: 'finished', text: '42', usage: { inputTokens: 9, outputTokens: 1 }, stopReason: 'stop' });
 * // { status: 'finished', answer: '42' }
 */
export function outcomeOfRun(result: RunResult): ChildOutcome {
  if (result.status === 'finished') return { status: 'finished', answer: result.text };
  const detail =
    result.error ??
    (result.status === 'max-turns'
      ? 'it stopped at its turn limit before giving a final answer'
      : `it stopped (${result.stopReason})`);
  const outcome: ChildOutcome = { status: 'failed', reason: result.status, detail };
  if (result.text !== '') outcome.answer = result.text;
  return outcome;
}

/**
 * How a child's transcript says it ended, or null when it has not: a run has ended when its
 * last message is an assistant turn asking for no tools. Its answer is that turn's text —
 * unless it is the failure turn versions before `run-failed` wrote, which is a failure, not an
 * answer. A run that failed or was stopped since has not ended: it is revivable.
 *
 * @example
 * const read = await peek(path);
 * const outcome = read.ok ? recordedOutcome(read.records) : null;
 */
export function recordedOutcome(
  records: readonly (TranscriptRecord | ForeignRecord)[],
): ChildOutcome | null {
  for (let index = records.length - 1; index >= 0; index -= 1) {
    const record = records[index];
    if (record === undefined || record.type !== 'message' || 'unknown' in record) continue;
    const message = record as TranscriptRecord & MessageBody;
    if (message.role !== 'assistant') return null;
    if (message.content.some((part) => part.type === 'tool-call')) return null;
    const legacy = legacyFailureHalt(message);
    if (legacy !== null) return { status: 'failed', reason: 'failed', detail: legacy.detail };
    const text = message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('');
    return { status: 'finished', answer: text };
  }
  return null;
}
