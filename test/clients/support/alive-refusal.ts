/*
 * The check each client test makes while its client is alive inside a long tool: after six
 * quiet seconds (past repair's quiet window, so only knowing that the client still runs can
 * refuse), `llm-agent repair FILE` without any flag must refuse as live (exit 7) and write
 * nothing: no backup, and no byte of ours in the file. The client itself may append to its
 * own file meanwhile (the check compares what our repair could have written, not the client's
 * bytes): the file must still start with what it held before, and anything after must not be
 * our interrupted text.
 */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { INTERRUPTED_MESSAGE } from '../../../src/revival/texts.ts';
import { repairCli, waitFor } from './client-run.ts';

/** Refused as live, nothing written; returns the refusal's detail. */
export async function assertRefusedWhileAlive(file: string): Promise<string> {
  await waitFor(() => Date.now() - statSync(file).mtimeMs > 6_000, 30_000, 'six quiet seconds');
  const before = await readFile(file);
  const live = await repairCli([file, '--json']);
  assert.equal(live.code, 7, `repair of a live session: ${live.stdout}${live.stderr}`);
  const [outcome] = JSON.parse(live.stdout) as { status: string; reason: string; detail: string }[];
  assert.equal(outcome?.status, 'refused');
  assert.equal(outcome?.reason, 'live');
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
