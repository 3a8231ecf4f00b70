import type { RecordOf, TranscriptRecord } from '../transcript/records.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { RevivalPlan } from './plan-revival.ts';

/**
 * Write a revival plan through a run's writer in the order the write rules need: the
 * interrupted answers, durable before the settles that point at them; the settles; the resume
 * notice; the `run-revived` envelope; a barrier. Returns what it appended (the envelope last).
 * A failed write rejects: the run is then as a crash would leave it, and the next revive
 * completes the work without doubling any of it.
 *
 * @example
 * const { appended, revival } = await writeRevival(writer, plan);
 */
export async function writeRevival(
  writer: TranscriptWriter,
  plan: RevivalPlan,
): Promise<{ appended: TranscriptRecord[]; revival: RecordOf<'run-revived'> }> {
  const appended: TranscriptRecord[] = [];
  for (const message of plan.interruptedMessages) appended.push(await writer.append(message));
  // The answer is durable before the settle that points at it (docs/loop.md, "Write order").
  if (plan.interruptedMessages.length > 0) await writer.barrier();
  for (const settle of plan.settles) appended.push(await writer.append(settle));
  if (plan.notice !== null) appended.push(await writer.append(plan.notice));
  const revival = (await writer.append(plan.envelope)) as RecordOf<'run-revived'>;
  appended.push(revival);
  await writer.barrier();
  return { appended, revival };
}
