import { spawn } from 'node:child_process';
import { readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Session } from '../src/transcript/session.ts';
import {
  AGENTS_MODULE,
  type Attack,
  CLI,
  type AttackContext,
  bytesOrNull,
  ending,
  faultNotProven,
  firstLine,
  interruptedRun,
  type LiveWriter,
  ledgerCount,
  lstatOrNull,
  revivedCount,
  runCli,
  sleep,
  verdict,
  withLiveWriter,
  writeTranscript,
} from './support.ts';

/*
 * Lock bypass: while a run is live, its lock (or nametag) file is deleted, renamed or replaced;
 * then a second writer or the CLI's `revive --yes` tries to get in. Whatever the mechanism of
 * the claim, none of them may: a live run is never shared and never revived.
 */

type Fault = 'deleted' | 'renamed' | 'replaced';

/** The files beside a transcript that are about who holds it (`X.jsonl.lock`, `X.jsonl.owner`, …). */
function lockFiles(path: string): string[] {
  const name = basename(path);
  return readdirSync(dirname(path))
    .filter((entry) => entry.startsWith(`${name}.`) && !entry.includes('.torn-'))
    .filter((entry) => !entry.endsWith('.agents') && !entry.endsWith('.moved'))
    .map((entry) => join(dirname(path), entry));
}

/** Do the fault to every lock file; the proof that it happened, or null when it did not. */
function attackLockFiles(path: string, fault: Fault): string | null {
  const files = lockFiles(path);
  if (files.length === 0) return 'no lock or nametag file beside the live transcript';
  const proofs: string[] = [];
  for (const file of files) {
    // A holder's temporary name may vanish between the listing and here: not a lock file.
    const found = lstatOrNull(file);
    if (found === null || !found.isFile()) continue;
    const before = found.ino;
    if (fault === 'deleted') unlinkSync(file);
    if (fault === 'renamed') renameSync(file, `${file}.moved`);
    if (fault === 'replaced') {
      writeFileSync(`${file}.new`, JSON.stringify({ pid: 1, since: null, host: null }), {
        mode: 0o600,
      });
      renameSync(`${file}.new`, file);
    }
    const after = lstatOrNull(file);
    const ok =
      fault === 'replaced'
        ? after !== null && after.ino !== before
        : after === null && (fault === 'deleted' || lstatOrNull(`${file}.moved`) !== null);
    if (!ok) return null;
    proofs.push(
      `${basename(file)} ${fault}${fault === 'replaced' ? ` (inode ${before}→${after?.ino})` : ' (lstat ENOENT)'}`,
    );
  }
  return proofs.length === 0
    ? 'no lock or nametag file beside the live transcript'
    : proofs.join(', ');
}

async function liveRun(context: AttackContext, writer: LiveWriter): Promise<string> {
  const path = join(context.folder, 'runs', 'main.jsonl');
  await writeTranscript(path, interruptedRun());
  const opened = await writer.send({ op: 'open', path });
  if (!opened.ok) throw new Error(`the live writer could not open its run: ${opened.message}`);
  return path;
}

function secondOpen(fault: Fault): Attack {
  return {
    name: `lock-${fault}-second-open`,
    family: 'lock',
    what: `while a run is live its lock file is ${fault}; a second Session.open must be refused`,
    run: (context) =>
      withLiveWriter(async (writer) => {
        const path = await liveRun(context, writer);
        const proof = attackLockFiles(path, fault);
        if (proof === null) return faultNotProven(`the lock file was not ${fault}`);
        if (proof.startsWith('no lock')) return verdict(true, `${proof}: nothing to ${fault}`);
        let second: Session | null = null;
        try {
          second = await Session.open(path, { durability: 'fsync' });
        } catch (error) {
          return verdict(
            true,
            `${proof}; second Session.open refused: ${String(error).split('\n')[0]?.slice(0, 120)}`,
          );
        }
        const before = bytesOrNull(path)?.length ?? 0;
        await second
          .append({
            type: 'message',
            role: 'user',
            content: [{ type: 'text', text: 'second writer' }],
          })
          .catch(() => undefined);
        await second.barrier().catch(() => undefined);
        const live = await writer.send({ op: 'append', text: 'first writer' });
        await second.close().catch(() => undefined);
        const after = bytesOrNull(path)?.length ?? 0;
        return verdict(
          false,
          `${proof}; a second Session.open got in while the run was live (file ${before}→${after} bytes, live writer append ${live.ok ? 'ok' : live.code}): two writers`,
        );
      }),
  };
}

function cliRevive(fault: Fault): Attack {
  return {
    name: `lock-${fault}-cli-revive`,
    family: 'lock',
    what: `while a run is live its lock file is ${fault}; \`revive --yes\` must not revive it`,
    run: (context) =>
      withLiveWriter(async (writer) => {
        const path = await liveRun(context, writer);
        const ledger = join(context.folder, 'ledger.jsonl');
        const proof = attackLockFiles(path, fault);
        if (proof === null) return faultNotProven(`the lock file was not ${fault}`);
        const result = await runCli(['revive', path, '--yes', '--agents', AGENTS_MODULE], {
          cwd: context.folder,
          timeoutMs: 30_000,
          env: { ATTACK_LEDGER: ledger },
        });
        const revivals = revivedCount(path);
        const effects = ledgerCount(ledger);
        const live = await writer.send({ op: 'append', text: 'still live' });
        const held = revivals === 0 && effects === 0 && !result.timedOut;
        return verdict(
          held,
          `${proof}; revive ${ending(result)}: ${firstLine(result)}; run-revived records ${revivals}, effects run ${effects}, live writer afterwards ${live.ok ? 'ok' : live.code}`,
        );
      }),
  };
}

const claimDeletedDuringRevive: Attack = {
  name: 'claim-deleted-during-revive',
  family: 'lock',
  what: 'while a CLI revive runs a revived run, every lock, nametag and claim file of the tree is deleted; a second `revive --yes` must not revive it again',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    // A run whose model asked for a side effect that was never started: the revive starts it,
    // and it never returns (ATTACK_HANG), so the first reviver stays live.
    await writeTranscript(path, interruptedRun({ what: 'hangme' }).slice(0, 3));
    const ledger = join(context.folder, 'ledger.jsonl');
    const first = spawn(
      process.execPath,
      [CLI, 'revive', path, '--yes', '--agents', AGENTS_MODULE],
      {
        cwd: context.folder,
        env: { ...process.env, ATTACK_LEDGER: ledger, ATTACK_HANG: 'hangme', NO_COLOR: '1' },
        stdio: 'ignore',
      },
    );
    try {
      const deadline = Date.now() + 30_000;
      while (ledgerCount(ledger, 'hangme') === 0 && Date.now() < deadline) await sleep(20);
      if (ledgerCount(ledger, 'hangme') !== 1)
        return faultNotProven('the first revive never ran the side effect');
      const proof = attackLockFiles(path, 'deleted');
      if (proof === null) return faultNotProven('the lock files were not deleted');
      const second = await runCli(['revive', path, '--yes', '--agents', AGENTS_MODULE], {
        cwd: context.folder,
        timeoutMs: 30_000,
        env: { ATTACK_LEDGER: ledger },
      });
      const revivals = revivedCount(path);
      const effects = ledgerCount(ledger, 'hangme');
      return verdict(
        revivals === 1 && effects === 1,
        `first revive live (its side effect running); ${proof}; second revive ${ending(second)}: ${firstLine(second)}; run-revived ${revivals}, side effect ran ${effects}×`,
      );
    } finally {
      first.kill('SIGKILL');
    }
  },
};

const staleNames: Attack = {
  name: 'stale-claim-and-nametag',
  family: 'lock',
  what: 'a crashed run with leftover lock, nametag and claim files naming a live process (pid 1): they are names, not claims — revive still works',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    await writeTranscript(path, interruptedRun());
    const forged = JSON.stringify({ pid: 1, since: '2026-01-01T00:00:00.000Z', host: hostname() });
    for (const suffix of ['lock', 'owner', 'claim'])
      writeFileSync(`${path}.${suffix}`, forged, { mode: 0o600 });
    if (lockFiles(path).length < 3) return faultNotProven('the forged files were not written');
    const result = await runCli(['revive', path, '--yes', '--agents', AGENTS_MODULE], {
      cwd: context.folder,
      timeoutMs: 30_000,
      env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
    });
    const revivals = revivedCount(path);
    return verdict(
      revivals === 1,
      `.lock/.owner/.claim name pid 1 (alive) but nobody holds them; revive ${ending(result)}: ${firstLine(result)}; run-revived ${revivals}`,
    );
  },
};

/** The lock attacks. */
export const LOCK_ATTACKS: Attack[] = [
  claimDeletedDuringRevive,
  staleNames,
  secondOpen('deleted'),
  secondOpen('renamed'),
  secondOpen('replaced'),
  cliRevive('deleted'),
  cliRevive('replaced'),
];
