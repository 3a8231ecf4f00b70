import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { abandonSession } from '../support/abandon-session.ts';
import {
  makeTempFolder,
  removeFolder,
  sessionMeta,
  steppingClock,
} from '../support/transcripts.ts';

/*
 * A repair that cut a torn tail and died before writing its record leaves only its sidecar.
 * When a repair at the same length already kept other bytes, its sidecar is `…-2` (or later):
 * the next open must find it there too, or the cut bytes' possible dispatch is forgotten and
 * the call could run twice. A sidecar it cannot read refuses the open, naming it.
 */

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await removeFolder(folder);
});

const turnWithCall: RecordBody = {
  type: 'message',
  role: 'assistant',
  content: [{ type: 'tool-call', callId: 'c1', toolName: 'deploy', input: {} }],
};

/** A transcript whose last turn asks for a call that was never dispatched, and its length. */
async function transcript(): Promise<{ path: string; validBytes: number }> {
  const folder = await makeTempFolder();
  folders.push(folder);
  const path = join(folder, 'run.jsonl');
  const session = await Session.create(path, sessionMeta('main'), { clock: steppingClock() });
  await session.append({ type: 'message', role: 'user', content: [{ type: 'text', text: 'Go' }] });
  await session.appendDurable(turnWithCall);
  // Dies without closing: no closing checkpoint, nothing after the turn, the lock gone.
  await abandonSession(session);
  const validBytes = (await readFile(path)).length;
  return { path, validBytes };
}

test('the second sidecar of a repair at one length is found: its possible dispatch is never forgotten', async () => {
  const { path, validBytes } = await transcript();
  // An earlier repair at this length kept a torn message; a later one, whose record never got
  // written, kept what may be the call's dispatch.
  await writeFile(`${path}.torn-${validBytes}`, '{"v":1,"seq":3,"type":"message","at":"2026');
  await writeFile(
    `${path}.torn-${validBytes}-2`,
    '{"v":1,"seq":3,"type":"tool-dispatched","at":"20',
  );
  const opened = await Session.open(path, { clock: steppingClock() });
  try {
    const marked = opened.state.open.find((dispatch) => dispatch.callId === 'c1');
    assert.equal(marked?.possiblyDispatched, true, 'the call counts as dispatched: never run');
  } finally {
    await opened.close();
  }
  const lines = (await readFile(path, 'utf8')).trim().split('\n');
  const repair = JSON.parse(lines[3] ?? '{}').tailRepair;
  assert.equal(repair?.sidecar, `run.jsonl.torn-${validBytes}-2`);
  assert.equal(repair?.possiblyDispatched, true);
});

test('with only a sidecar that cannot hold a dispatch, the call is left to run', async () => {
  const { path, validBytes } = await transcript();
  await writeFile(`${path}.torn-${validBytes}`, '{"v":1,"seq":3,"type":"message","at":"2026');
  const opened = await Session.open(path, { clock: steppingClock() });
  try {
    assert.deepEqual(opened.state.open, [], 'the fault: nothing marks the call');
  } finally {
    await opened.close();
  }
});

test('a sidecar that exists but cannot be read refuses the open, naming it', async (t) => {
  if (process.getuid?.() === 0) {
    // Root reads any file whatever its mode: make it unreadable another way (a folder).
    const { path, validBytes } = await transcript();
    const { mkdir } = await import('node:fs/promises');
    await mkdir(`${path}.torn-${validBytes}`);
    await assert.rejects(Session.open(path), (error: unknown) => {
      assert.ok(TranscriptError.isInstance(error));
      assert.equal(error.code, 'io');
      assert.match(error.message, new RegExp(`cannot read .*run\\.jsonl\\.torn-${validBytes}`));
      return true;
    });
    t.diagnostic('unreadable made by a folder in the sidecar’s place (running as root)');
    return;
  }
  const { path, validBytes } = await transcript();
  const sidecar = `${path}.torn-${validBytes}`;
  await writeFile(sidecar, '{"v":1,"seq":3,"type":"tool-dispatched"');
  await chmod(sidecar, 0o000);
  await assert.rejects(Session.open(path), /cannot read .*may hold a tool's dispatch/);
});
