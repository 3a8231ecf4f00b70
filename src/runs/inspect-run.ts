// `inspectTranscript` is `Revival.inspect`, imported from its own module: the revival entry
// point also brings revive and reconcile, and through them the AI SDK, which `status` does not
// need.
import { inspectTranscript, unreadableInspection } from '../revival/inspect.ts';
import { VerifiedUnderClaim } from '../revival/verified-under-claim.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import type { TreeClaim } from '../transcript/tree-claim.ts';
import type { InspectionView } from './inspection.ts';

/**
 * `Revival.inspect` for one transcript, as the CLI shows it. Never throws (inspect promises
 * that; this guards the promise): whatever goes wrong is an `unreadable` answer. An inspection
 * made under a held `treeClaim` is carried with the claim ({@link VerifiedUnderClaim}), so the
 * revive of the run under it does not inspect again.
 *
 * @example
 * const inspection = await inspectRun('/runs/a.jsonl', 3);
 */
export async function inspectRun(
  path: string,
  maxRevivals: number,
  fileSystem?: FileSystem,
  treeClaim?: TreeClaim,
  verify = false,
): Promise<InspectionView> {
  try {
    const inspection = await inspectTranscript({
      path,
      maxRevivals,
      ...(fileSystem === undefined ? {} : { fileSystem }),
      ...(treeClaim === undefined ? {} : { treeClaim }),
      ...(verify ? { verify } : {}),
    });
    // Made under the claim: the revive of this run under it acts on this inspection.
    if (treeClaim?.held === true) VerifiedUnderClaim.of(treeClaim).rememberInspection(inspection);
    return inspection;
  } catch (error) {
    return unreadableInspection(
      path,
      maxRevivals,
      `${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
