import { linkSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { snapshotFolder } from '../test/support/transcripts.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  bytesOrNull,
  ending,
  faultNotProven,
  firstLine,
  interruptedRun,
  lstatOrNull,
  openOutcome,
  runCli,
  verdict,
  waitingParent,
  writeTranscript,
} from './support.ts';

/*
 * Redirection: a symlink (or a hard link) planted where the package creates, truncates or
 * writes a file or a folder. The defence is judged on the files outside the tree: not a byte
 * of them may change.
 */

const VICTIM = 'victim bytes: must never change\n';

function victim(context: AttackContext, name: string): string {
  const path = join(context.folder, 'outside', name);
  mkdirSync(join(context.folder, 'outside'), { recursive: true, mode: 0o700 });
  writeFileSync(path, VICTIM, { mode: 0o600 });
  return path;
}

function plant(link: string, target: string): void {
  symlinkSync(target, link);
}

async function outsideChanged(
  context: AttackContext,
  before: Map<string, string>,
): Promise<string[]> {
  const after = await snapshotFolder(join(context.folder, 'outside'));
  const changed = new Set<string>();
  for (const [name, value] of after) if (before.get(name) !== value) changed.add(name);
  for (const name of before.keys()) if (!after.has(name)) changed.add(name);
  return [...changed];
}

function revive(context: AttackContext, path: string) {
  return runCli(['revive', path, '--yes', '--agents', AGENTS_MODULE], {
    cwd: context.folder,
    timeoutMs: 30_000,
    env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
  });
}

const lockPaths: Attack = {
  name: 'symlink-at-lock-paths',
  family: 'symlink',
  what: 'the lock, nametag and tree-claim paths of a crashed run are symlinks to files outside; revive must not write through them',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    await writeTranscript(path, interruptedRun());
    const planted = ['lock', 'owner', 'claim'].map((suffix) => {
      const link = `${path}.${suffix}`;
      plant(link, victim(context, `victim-${suffix}`));
      return link;
    });
    const before = await snapshotFolder(join(context.folder, 'outside'));
    if (!planted.every((link) => lstatOrNull(link)?.isSymbolicLink()))
      return faultNotProven('no symlink planted');
    const opened = await openOutcome(path, 'ok');
    const cli = await revive(context, path);
    const changed = await outsideChanged(context, before);
    return verdict(
      changed.length === 0,
      `symlinks at .lock/.owner/.claim existed before the writes; Session.open ${opened}; revive ${ending(cli)}; outside files changed: ${changed.join(', ') || 'none'}`,
    );
  },
};

const sidecarNames: Attack = {
  name: 'symlink-at-sidecar-names',
  family: 'symlink',
  what: 'the torn-tail sidecar names (the predictable X.jsonl.torn-<validBytes>.tmp and guesses) are symlinks to outside; repair must not write through them',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const valid = await writeTranscript(path, interruptedRun());
    const torn = Buffer.from('{"v":1,"seq":4,"at":"2026-01-01T00:00:04.000Z","type":"mess');
    writeFileSync(path, Buffer.concat([valid, torn]), { mode: 0o600 });
    const base = `${path}.torn-${valid.length}`;
    const guesses = [
      `${base}.tmp`,
      base,
      `${base}-1.tmp`,
      `${base}-1`,
      `${base}-2.tmp`,
      `${base}.tmp.tmp`,
    ];
    for (let index = 0; index < 8; index++)
      guesses.push(`${base}.${Math.floor(context.random() * 1e6)}.tmp`);
    for (const [index, guess] of guesses.entries())
      plant(guess, victim(context, `victim-${index}`));
    const before = await snapshotFolder(join(context.folder, 'outside'));
    if (!lstatOrNull(`${base}.tmp`)?.isSymbolicLink())
      return faultNotProven('no symlink at the sidecar name');
    const opened = await openOutcome(path, 'repaired and opened');
    const changed = await outsideChanged(context, before);
    return verdict(
      changed.length === 0,
      `${guesses.length} symlinks planted at sidecar names (torn tail of ${torn.length} bytes after ${valid.length}); Session.open ${opened}; outside files changed: ${changed.join(', ') || 'none'}`,
    );
  },
};

const CHILD = { callId: 'call_s1', agentId: 'worker-call_s1', task: 'alpha' };

const agentsFolder: Attack = {
  name: 'symlink-agents-folder',
  family: 'symlink',
  what: 'X.agents is a symlink to a folder outside holding the waited-on child; revive must not write outside',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    await writeTranscript(path, waitingParent([CHILD]));
    await writeTranscript(
      join(context.folder, 'outside', `${CHILD.agentId}.jsonl`),
      interruptedRun({
        agentId: CHILD.agentId,
        agentType: 'worker',
        task: 'alpha',
        what: 'alpha',
        parent: { transcript: '../main.jsonl', callId: CHILD.callId },
      }),
    );
    symlinkSync(join(context.folder, 'outside'), join(context.folder, 'runs', 'main.agents'));
    const before = await snapshotFolder(join(context.folder, 'outside'));
    if (!lstatOrNull(join(context.folder, 'runs', 'main.agents'))?.isSymbolicLink())
      return faultNotProven('main.agents is not a symlink');
    const cli = await revive(context, path);
    const changed = await outsideChanged(context, before);
    return verdict(
      changed.length === 0,
      `main.agents → outside/ (symlink); revive ${ending(cli)}: ${firstLine(cli)}; outside files changed: ${changed.join(', ') || 'none'}`,
    );
  },
};

const agentsFolderNewChild: Attack = {
  name: 'symlink-agents-folder-new-child',
  family: 'symlink',
  what: 'X.agents is a symlink to an empty folder outside and the revived run spawns children; no child transcript may be created outside',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    // A run killed after its model asked for two spawns and before either was dispatched.
    const bodies = waitingParent([
      CHILD,
      { callId: 'call_s2', agentId: 'worker-call_s2', task: 'beta' },
    ]).slice(0, 3);
    await writeTranscript(path, bodies);
    mkdirSync(join(context.folder, 'outside'), { recursive: true, mode: 0o700 });
    symlinkSync(join(context.folder, 'outside'), join(context.folder, 'runs', 'main.agents'));
    if (!lstatOrNull(join(context.folder, 'runs', 'main.agents'))?.isSymbolicLink())
      return faultNotProven('main.agents is not a symlink');
    const before = await snapshotFolder(join(context.folder, 'outside'));
    const cli = await revive(context, path);
    const changed = await outsideChanged(context, before);
    return verdict(
      changed.length === 0,
      `main.agents → empty outside/ (symlink), the revived run starts 2 spawns; revive ${ending(cli)}; files created or changed outside: ${changed.join(', ') || 'none'}`,
    );
  },
};

const childTranscriptSymlink: Attack = {
  name: 'symlink-child-transcript-to-outside',
  family: 'symlink',
  what: 'a child transcript inside the tree is a symlink to a transcript outside; revive must not write to it',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    await writeTranscript(path, waitingParent([CHILD]));
    const outside = join(context.folder, 'outside', 'victim.jsonl');
    await writeTranscript(
      outside,
      interruptedRun({
        agentId: CHILD.agentId,
        agentType: 'worker',
        task: 'alpha',
        what: 'alpha',
        parent: { transcript: '../main.jsonl', callId: CHILD.callId },
      }),
    );
    mkdirSync(join(context.folder, 'runs', 'main.agents'), { mode: 0o700 });
    const link = join(context.folder, 'runs', 'main.agents', `${CHILD.agentId}.jsonl`);
    symlinkSync(outside, link);
    const before = await snapshotFolder(join(context.folder, 'outside'));
    if (!lstatOrNull(link)?.isSymbolicLink()) return faultNotProven('the child is not a symlink');
    const cli = await revive(context, path);
    const changed = await outsideChanged(context, before);
    return verdict(
      changed.length === 0,
      `main.agents/${CHILD.agentId}.jsonl → outside/victim.jsonl (symlink); revive ${ending(cli)}; outside files changed: ${changed.join(', ') || 'none'}`,
    );
  },
};

const hardLink: Attack = {
  name: 'hardlink-transcript-from-outside',
  family: 'symlink',
  what: 'a crashed transcript is hard-linked from outside the tree (nlink 2); revive must not write to a file with other links',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    await writeTranscript(path, interruptedRun());
    mkdirSync(join(context.folder, 'outside'), { recursive: true, mode: 0o700 });
    const outside = join(context.folder, 'outside', 'linked.jsonl');
    linkSync(path, outside);
    const links = statSync(path).nlink;
    if (links < 2) return faultNotProven('the hard link was not made');
    const before = bytesOrNull(outside);
    const cli = await revive(context, path);
    const after = bytesOrNull(outside);
    const unchanged = before !== null && after !== null && before.equals(after);
    return verdict(
      unchanged,
      `nlink ${links} before revive; revive ${ending(cli)}: ${firstLine(cli)}; the outside link ${unchanged ? 'unchanged' : `CHANGED (${before?.length}→${after?.length} bytes)`}`,
    );
  },
};

/** The redirection attacks. */
export const SYMLINK_ATTACKS: Attack[] = [
  lockPaths,
  sidecarNames,
  agentsFolder,
  agentsFolderNewChild,
  childTranscriptSymlink,
  hardLink,
];
