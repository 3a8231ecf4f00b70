import { type FileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import type { Session } from '../../src/transcript/session.ts';

/**
 * End a session as a process killed after its last append would: every record appended is in
 * the file, and nothing a clean close adds (its closing checkpoint) is. The writer lock is
 * released, as the kernel releases it when the process dies.
 *
 * Tests that build the transcript of a run that died — the run revival exists for — use it;
 * `close()` would end the file with a checkpoint no dead process writes.
 *
 * @example
 * await session.append(dispatch('call_1', 'deploy'));
 * await abandonSession(session, fileSystem); // as if killed while the deploy ran
 */
export async function abandonSession(
  session: Session,
  fileSystem: FileSystem = nodeFileSystem,
): Promise<void> {
  await session.barrier();
  const fd = await fileSystem.open(session.path, 'read-write');
  try {
    const written = await fileSystem.size(fd);
    await session.close();
    await fileSystem.truncate(fd, written);
  } finally {
    await fileSystem.close(fd);
  }
}
