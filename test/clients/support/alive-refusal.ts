/*
 * The check each client test makes while its client is alive inside a long tool: after six
 * quiet seconds (past repair's quiet window, so only knowing that the client still runs can
 * refuse), `llm-agent repair FILE` without any flag must refuse as live (exit 7) and write
 * nothing: no backup, and no byte of ours in the file. The client itself may append to its
 * own file meanwhile (the check compares what our repair could have written, not the client's
 * bytes): the file must still start with what it held before, and anything after must not be
 * our interrupted text. `--dry-run` and `--scan` must give the same verdict.
 */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { INTERRUPTED_MESSAGE } from '../../../src/revival/texts.ts';
import { repairCli, waitFor } from './client-run.ts';

/**
 * `repair --dry-run FILE` and `repair --scan` of FILE's folder give the verdict a repair gives
 * while the client is alive: live (a dry run exits 7 as the repair does; a scan lists FILE as
 * refused, live). Neither writes.
 */
export async function assertDryRunAndScanLive(file: string): Promise<void> {
  const dry = await repairCli([file, '--dry-run', '--json']);
  assert.equal(dry.code, 7, `--dry-run of a live session: ${dry.stdout}${dry.stderr}`);
  const [planned] = JSON.parse(dry.stdout) as { status: string; reason: string }[];
  assert.equal(planned?.reason, 'live', dry.stdout);
  const scan = await repairCli(['--scan', dirname(file), '--json']);
  assert.notEqual(scan.code, 2, scan.stderr);
  const { sessions } = JSON.parse(scan.stdout) as {
    sessions: { path: string; status: string; reason?: string }[];
  };
  const listed = sessions.find((session) => session.path === file);
  assert.equal(listed?.status, 'refused', `--scan of a live session: ${scan.stdout}`);
  assert.equal(listed?.reason, 'live', scan.stdout);
}

/** Refused as live, nothing written (by the repair, its dry run or a scan); returns the refusal's detail. */
export async function assertRefusedWhileAlive(file: string): Promise<string> {
  await waitFor(() => Date.now() - statSync(file).mtimeMs > 6_000, 30_000, 'six quiet seconds');
  const before = await readFile(file);
  const live = await repairCli([file, '--json']);
  assert.equal(live.code, 7, `repair of a live session: ${live.stdout}${live.stderr}`);
  const [outcome] = JSON.parse(live.stdout) as { status: string; reason: string; detail: string }[];
  assert.equal(outcome?.status, 'refused');
  assert.equal(outcome?.reason, 'live');
  await assertDryRunAndScanLive(file);
  const after = await readFile(file);
  assert.ok(after.subarray(0, before.length).equals(before), 'the file still holds its bytes');
  const added = after.subarray(before.length).toString('utf8');
  const ours = JSON.stringify(INTERRUPTED_MESSAGE).slice(1, -1);
  assert.ok(!added.includes(ours), `the refusal wrote our text: ${added}`);
  assert.deepEqual(
    readdirSync(dirname(file)).filter((name) => name.includes('.bak-')),
    [],
    'the refusal made no backup',
  );
  return outcome.detail;
}
