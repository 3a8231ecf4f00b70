import { dirname, resolve } from 'node:path';
import type { FileSystem } from '../transcript/file-system.ts';
import type { SessionMetaBody } from '../transcript/records.ts';
import { scanRecords } from '../transcript/scan-transcript.ts';

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
