import { Revival } from '../revival/index.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import type { InspectionView } from './inspection.ts';

/**
 * `Revival.inspect` for one transcript, as the CLI shows it. Never throws (inspect promises
 * that; this guards the promise): whatever goes wrong is an `unreadable` answer.
 *
 * @example
 * const inspection = await inspectTranscript('/runs/a.jsonl', 3);
 */
export async function inspectTranscript(
  path: string,
  maxRevivals: number,
  fileSystem?: FileSystem,
): Promise<InspectionView> {
  try {
    return await Revival.inspect(
      fileSystem === undefined ? { path, maxRevivals } : { path, maxRevivals, fileSystem },
    );
  } catch (error) {
    return {
      path,
      revivable: false,
      reason: 'unreadable',
      detail: `${path}: ${error instanceof Error ? error.message : String(error)}`,
      revivalsUsed: 0,
      maxRevivals,
      openDispatches: [],
      neverDispatched: [],
      pendingJoins: [],
      bytes: 0,
      messages: 0,
      estimatedTokens: 0,
    };
  }
}
