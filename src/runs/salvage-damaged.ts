import { peek } from '../transcript/peek.ts';
import { Session } from '../transcript/session.ts';
import type { CommandIo } from './command-io.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';

/**
 * A run `revive --salvage` can salvage: unreadable because damage ends its file (bad lines
 * after the last good record, none after them).
 *
 * @example
 * const found: Salvageable = { node, line: 9, badBytes: 212 };
 */
export interface Salvageable {
  node: RunNode;
  line: number;
  badBytes: number;
}

/**
 * The unreadable runs of the trees whose damage ends the file, found without writing anything.
 *
 * @example
 * const damaged = await findSalvageable(roots);
 */
export async function findSalvageable(roots: RunNode[]): Promise<Salvageable[]> {
  const found: Salvageable[] = [];
  for (const node of walkTree(roots)) {
    if (node.state !== 'unreadable') continue;
    const read = await peek(node.path);
    if (read.ok || read.salvage === undefined) continue;
    found.push({ node, line: read.line ?? 0, badBytes: read.salvage.badBytes });
  }
  return found;
}

/**
 * What `revive --salvage` will do, one line per run, for the plan printed before the question.
 *
 * @example
 * io.stdout.write(salvageText(damaged));
 */
export function salvageText(damaged: Salvageable[]): string {
  const lines = damaged.map(
    ({ node, line, badBytes }) =>
      `  ${node.displayPath}: move ${badBytes} damaged bytes from line ${line} on to a sidecar; answer every call of its last turn without a settle as interrupted, never run\n`,
  );
  return `Salvage (--salvage):\n${lines.join('')}\n`;
}

/**
 * Cut each run's damage off into a sidecar — `Session.open` with `salvageDamagedTail` — so
 * that the run can be revived, every call of its last turn without a settle then answered as
 * interrupted, never run. Returns how many were salvaged; a failure is reported and skipped.
 *
 * @example
 * if ((await salvage(damaged, io)) > 0) roots = await inspectTree(paths, maxRevivals, io.cwd);
 */
export async function salvage(damaged: Salvageable[], io: CommandIo): Promise<number> {
  let salvaged = 0;
  for (const { node, line } of damaged) {
    try {
      const session = await Session.open(node.path, { salvageDamagedTail: true });
      await session.close();
      salvaged += 1;
      io.stderr.write(`salvaged ${node.displayPath} from line ${line}\n`);
    } catch (error) {
      io.stderr.write(
        `not salvaged ${node.displayPath}: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
  }
  return salvaged;
}
