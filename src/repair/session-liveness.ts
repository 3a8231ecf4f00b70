import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ProcessTable, readProcessTable } from './process-table.ts';
import { type OwnedSession, type SessionOwner, sessionOwners } from './session-owners.ts';

/**
 * What a session's file says of the session, for liveness: its format, and the id and working
 * folder the client recorded (when the format records them).
 *
 * @example
 * const facts: SessionFacts = { format: 'pi', id: '0f1e2d3c-…', cwd: '/work/app' };
 */
export interface SessionFacts {
  format: string;
  id?: string;
  cwd?: string;
  /** The folder (or database file) a client holds open while it owns the session; default the file's folder. */
  folder?: string;
}

/**
 * Whether a session may still be in its client's hands.
 *
 * - `live: false`: no process of its client is tied to it, none has it open, it has been quiet.
 * - `live: true`: `reason` says why (naming each process and what matched); `owners` lists them.
 *
 * @example
 * const verdict: Liveness = { live: true, reason: 'pid 42 (pi): its working folder is …', owners: [] };
 */
export type Liveness = { live: false } | { live: true; reason: string; owners: SessionOwner[] };

/**
 * How {@link sessionLiveness} looks: the quiet time, the clock, and the process table (a seam:
 * tests give their own; a scan reads it once for every file).
 *
 * @example
 * const options: LivenessOptions = { quietMs: 5000 };
 */
export interface LivenessOptions {
  /** How long the file must have been left alone (default 5 s). */
  quietMs?: number;
  now?: Date;
  processTable?: () => Promise<ProcessTable>;
}

/**
 * Whether the session at `path` may still be owned by a running client — the check `repair`
 * makes before it writes, and reports in `--dry-run` and `--scan`. A client is looked for among
 * the processes (`/proc`): one that has the file open (any process), or a process of the
 * session's client whose command line names the session's id, whose working folder is the
 * session's, or that holds a descriptor in the session's folder. Claude Code and pi keep no
 * session file open and write nothing while a tool runs, so the file alone cannot tell. Then the
 * quiet time: a file changed within `quietMs` is live. A process table read cut short is live
 * too (what was not looked at may be the client). Never throws on a process that vanishes.
 *
 * @example
 * const verdict = await sessionLiveness('/h/.pi/agent/sessions/--w--/s.jsonl',
 *   { format: 'pi', id: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0', cwd: '/work/app' });
 * if (verdict.live) console.log(verdict.reason);
 */
export async function sessionLiveness(
  path: string,
  facts: SessionFacts,
  options: LivenessOptions = {},
): Promise<Liveness> {
  const table = await (options.processTable ?? readProcessTable)();
  const session = await ownedSession(path, facts);
  const owners = sessionOwners(table, session);
  if (owners.length > 0) {
    const named = owners.map((owner) => `pid ${owner.pid} (${owner.program}): ${owner.matched}`);
    return {
      live: true,
      reason: `its client may be running: ${named.join('; ')}`,
      owners,
    };
  }
  if (!table.complete) {
    return {
      live: true,
      reason:
        'not every process could be looked at within 10 s (too many processes, or a machine too busy): its client may still be running',
      owners,
    };
  }
  const changed = (await lstat(path)).mtimeMs;
  const age = (options.now ?? new Date()).getTime() - changed;
  const quietMs = options.quietMs ?? 5000;
  if (age < quietMs) {
    return {
      live: true,
      reason: `changed ${Math.max(0, Math.round(age))} ms ago: its client may still be writing it`,
      owners,
    };
  }
  return { live: false };
}

/** The session as the matcher sees it: names resolved, the file's identity. */
async function ownedSession(path: string, facts: SessionFacts): Promise<OwnedSession> {
  const cwds = new Set<string>();
  if (facts.cwd?.startsWith('/')) {
    cwds.add(facts.cwd);
    const resolved = await realpath(facts.cwd).catch(() => null);
    if (resolved !== null) cwds.add(resolved);
  }
  const folder = facts.folder ?? dirname(path);
  const session: OwnedSession = {
    path: await realpath(path).catch(() => path),
    format: facts.format,
    cwds: [...cwds],
    folder: await realpath(folder).catch(() => folder),
  };
  if (facts.id !== undefined) session.id = facts.id;
  const file = await stat(path).catch(() => null);
  if (file !== null) session.file = { dev: file.dev, ino: file.ino };
  return session;
}
