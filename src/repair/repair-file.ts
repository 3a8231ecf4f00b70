import { isSqliteFile, repairOpencodeDatabase } from './opencode-database.ts';
import { type RepairOptions, type RepairOutcome, repairSession } from './repair-session.ts';

/**
 * Repair one session store of another agent, whichever it is: an SQLite database (opencode's
 * `opencode.db`) by {@link repairOpencodeDatabase}, any other file (the JSONL sessions of
 * Claude Code, Codex, pi and Gemini CLI) by {@link repairSession}. Never throws.
 *
 * @example
 * const outcome = await repairFile('/home/me/.local/share/opencode/opencode.db', { dryRun: true });
 * console.log(outcome.status);
 */
export async function repairFile(
  path: string,
  options: RepairOptions = {},
): Promise<RepairOutcome> {
  return (await isSqliteFile(path))
    ? repairOpencodeDatabase(path, options)
    : repairSession(path, options);
}
