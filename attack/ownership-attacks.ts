import { copyFileSync, mkdirSync, renameSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Attack,
  type AttackContext,
  bytesOrNull,
  faultNotProven,
  interruptedRun,
  type LiveWriter,
  lstatOrNull,
  verdict,
  withLiveWriter,
  writeTranscript,
} from './support.ts';

/*
 * The transcript itself is moved under a live writer: renamed away and replaced by a copy,
 * deleted, or replaced by a symlink to a file outside the tree. The writer must notice before
 * its next durability barrier and stop for good: never write into the file now at the path,
 * never keep appending to a ghost inode as if nothing happened.
 */

type Swap = 'replaced-by-copy' | 'deleted' | 'replaced-by-symlink';

async function open(context: AttackContext, writer: LiveWriter): Promise<string> {
  const path = join(context.folder, 'runs', 'main.jsonl');
  await writeTranscript(path, interruptedRun());
  const opened = await writer.send({ op: 'open', path });
  if (!opened.ok) throw new Error(`the live writer could not open its run: ${opened.message}`);
  const first = await writer.send({ op: 'append', text: 'before the swap' });
  if (!first.ok) throw new Error(`the live writer could not append: ${first.message}`);
  return path;
}

function swapped(swap: Swap): Attack {
  return {
    name: `transcript-${swap}-while-live`,
    family: 'ownership',
    what: `the live transcript is ${swap.replaceAll('-', ' ')}; the writer must stop and never write into what is now at the path`,
    run: (context) =>
      withLiveWriter(async (writer) => {
        const path = await open(context, writer);
        const away = `${path}.away`;
        const victim = join(context.folder, 'outside', 'victim.jsonl');
        const inode = statSync(path).ino;
        if (swap === 'deleted') unlinkSync(path);
        else {
          renameSync(path, away);
          if (swap === 'replaced-by-copy') copyFileSync(away, path);
          else {
            mkdirSync(join(context.folder, 'outside'), { recursive: true });
            copyFileSync(away, victim);
            symlinkSync(victim, path);
          }
        }
        const now = lstatOrNull(path);
        const proven =
          swap === 'deleted'
            ? now === null
            : swap === 'replaced-by-copy'
              ? now?.isFile() && now.ino !== inode
              : now?.isSymbolicLink() === true;
        if (!proven) return faultNotProven(`the transcript was not ${swap}`);
        const target = swap === 'replaced-by-symlink' ? victim : path;
        const before = bytesOrNull(target);
        const ghostBefore = bytesOrNull(away)?.length ?? 0;
        const second = await writer.send({ op: 'append', text: 'after the swap' });
        const third = await writer.send({ op: 'append', text: 'again after the swap' });
        const after = bytesOrNull(target);
        const untouched =
          swap === 'deleted'
            ? after === null
            : before !== null && after !== null && before.equals(after);
        const ghostGrew = (bytesOrNull(away)?.length ?? 0) - ghostBefore;
        const stopped = !second.ok && !third.ok;
        return verdict(
          untouched && stopped,
          `path ${swap} (inode ${inode}→${now?.ino ?? 'none'}${now?.isSymbolicLink() ? ', symlink' : ''}); writer's next appends: ${second.ok ? 'ok' : second.code}, ${third.ok ? 'ok' : third.code}; file at the path ${untouched ? 'unchanged' : 'CHANGED'}${swap === 'deleted' ? '' : `; the moved inode grew ${ghostGrew} bytes`}`,
        );
      }),
  };
}

/** The ownership attacks. */
export const OWNERSHIP_ATTACKS: Attack[] = [
  swapped('replaced-by-copy'),
  swapped('deleted'),
  swapped('replaced-by-symlink'),
];
