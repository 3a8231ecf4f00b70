import type { FileSystem } from '../../../src/transcript/file-system.ts';
import type { RecordBody } from '../../../src/transcript/records.ts';
import { Session } from '../../../src/transcript/session.ts';
import { abandonSession } from '../../support/abandon-session.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  META,
  result,
  settle,
  user,
} from './transcripts.ts';

/**
 * A dead run of `turns` tool turns that compacted as the Loop does (from the first user turn
 * up to a finished turn, at random), with odd ranges too when asked (nested, overlapping), and
 * its last call in flight — written through a Session, with its checkpoints.
 */
export async function writeCompactedRun(
  fileSystem: FileSystem,
  path: string,
  random: () => number,
  turns: number,
  options: { checkpointBytes: number; padding: number; oddRanges: boolean },
): Promise<{ compactions: number }> {
  const session = await Session.create(path, META, {
    fileSystem,
    durability: 'flush',
    clock: fixedClock(),
    checkpointBytes: options.checkpointBytes,
  });
  const append = async (body: RecordBody): Promise<number> => (await session.append(body)).seq;
  const firstUser = await append(user('Work through the list.'));
  let compactions = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const text = 'x'.repeat(Math.floor(random() * options.padding));
    await append(assistant(`Turn ${turn}.`, [call(`c${turn}`, 'write_file', { text })]));
    await append(dispatch(`c${turn}`));
    await append(result(`c${turn}`, 'write_file', `wrote ${turn} ${text}`));
    const settled = await append(settle(`c${turn}`));
    if (random() < 0.2) {
      // As the Loop compacts: from the first user turn up to a finished turn.
      await append({
        type: 'compaction',
        fromSeq: firstUser,
        toSeq: settled,
        summary: `Up to ${turn}.`,
      });
      compactions += 1;
    } else if (options.oddRanges && random() < 0.1) {
      // Any range the format allows: nested, overlapping, reaching back past a summary.
      const to = Math.floor(random() * settled);
      const from = Math.floor(random() * (to + 1));
      await append({
        type: 'compaction',
        fromSeq: Math.max(from, 1),
        toSeq: Math.max(to, 1),
        summary: `Odd ${turn}.`,
      });
      compactions += 1;
    }
  }
  await append(user('And the last one.'));
  await append(assistant('Sending.', [call('last', 'send_email')]));
  await append(dispatch('last', 'send_email'));
  await abandonSession(session, fileSystem);
  return { compactions };
}
