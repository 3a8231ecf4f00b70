import { peek } from '../transcript/peek.ts';
import { Session } from '../transcript/session.ts';
import type { CommandIo } from './command.ts';
import { type RunNode, walkTree } from './run-tree.ts';

/**
 * `revive --salvage`: for every unreadable run of the trees whose damage ends the file (bad
 * lines after the last good record, none after them), cut that damage off into a sidecar —
 * `Session.open` with `salvageDamagedTail` — so the plan then shows the run as revivable, with
 * every call of its last turn without a settle answered as interrupted, never run. Damage
 * anywhere else is left alone (the run stays unreadable). Returns how many were salvaged.
 *
 * @example
 * if ((await salvageDamaged(roots, io)) > 0) roots = await inspectTree(paths, maxRevivals, io.cwd);
 */
export async function salvageDamaged(roots: RunNode[], io: CommandIo): Promise<number> {
  let salvaged = 0;
  for (const node of walkTree(roots)) {
    if (node.state !== 'unreadable') continue;
    const found = await peek(node.path);
    if (found.ok || found.salvage === undefined) continue;
    try {
      const session = await Session.open(node.path, { salvageDamagedTail: true });
      await session.close();
      salvaged += 1;
      io.stderr.write(
        `salvaged ${node.displayPath}: ${found.salvage.badBytes} damaged bytes from line ${found.line ?? '?'} moved to a sidecar; the calls of its last turn are answered as interrupted, never run\n`,
      );
    } catch (error) {
      io.stderr.write(
        `not salvaged ${node.displayPath}: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
  }
  return salvaged;
}
