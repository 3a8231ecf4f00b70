import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { type TailState, tailStateToJson } from '../../src/transcript/tail-state.ts';
import { abandonSession } from '../support/abandon-session.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  META,
  result,
  settle,
  user,
} from '../revival/support/transcripts.ts';
import { tempFolder } from '../revival/support/temp-folder.ts';
import { runCli } from './support/cli-fixtures.ts';

/*
 * One verdict: `status` and `revive` decide from the same function, so a checkpoint that lies
 * about the records before it (its CRC intact: forged or edited, never a crash) gets the same
 * answer from both — the same reason and the same detail — instead of "revivable" from one and
 * a refusal from the other.
 */

const folder = await tempFolder('lying-checkpoint-', true);
let counter = 0;

/**
 * A transcript of `bodies`, then a checkpoint holding the true state of everything before it
 * with `lie` applied — CRC-valid, in the place the writer puts one.
 */
async function withLyingCheckpoint(
  bodies: RecordBody[],
  lie: (truth: TailState) => TailState,
): Promise<string> {
  const path = join(folder, `run-${counter++}.jsonl`);
  const session = await Session.create(path, META, { durability: 'flush', clock: fixedClock() });
  for (const body of bodies) await session.append(body);
  await session.append({ type: 'checkpoint', state: tailStateToJson(lie(session.state)) });
  await abandonSession(session);
  return path;
}

async function bothVerdicts(path: string) {
  const status = await runCli(['status', path, '--json'], { cwd: folder });
  const run = (JSON.parse(status.stdout) as { runs: { state: string; detail: string | null }[] })
    .runs[0];
  const bytes = await readFile(path);
  const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 3 });
  if (revived.ok) await revived.session.close();
  return { run, revived, untouched: (await readFile(path)).equals(bytes) };
}

describe('a checkpoint that lies: status and revive give one verdict', () => {
  test('it says the run is mid-turn when the records say it finished', async () => {
    const path = await withLyingCheckpoint([user('Hi'), assistant('All done.')], (truth) => ({
      ...truth,
      lastMessage: { seq: 1, role: 'user', calls: [] },
    }));
    // The lie is real: read from the checkpoint the run looks revivable, read whole it finished.
    const fromCheckpoint = await readTailState(path);
    const whole = await readTailState(path, { strategy: 'full' });
    assert.ok(fromCheckpoint.ok && whole.ok);
    assert.notEqual(fromCheckpoint.fromCheckpoint, null);
    assert.equal(fromCheckpoint.state.lastMessage?.role, 'user');
    assert.equal(whole.state.lastMessage?.role, 'assistant');
    const { run, revived, untouched } = await bothVerdicts(path);
    assert.equal(run?.state, 'unreadable');
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'unreadable');
    assert.match(revived.detail, /its last checkpoint disagrees with the records before it/);
    assert.equal(run?.detail, revived.detail, 'the same detail in both');
    assert.ok(
      revived.detail.startsWith(`${path}: its last checkpoint`),
      `the file named once, first: ${revived.detail}`,
    );
    assert.ok(untouched, 'revive wrote nothing');
  });

  test('it says a call is still open when the records settled it', async () => {
    const path = await withLyingCheckpoint(
      [
        user('Write a.txt'),
        assistant('', [call('c1')]),
        dispatch('c1'),
        result('c1'),
        settle('c1'),
      ],
      (truth) => ({
        ...truth,
        open: [
          { callId: 'c1', toolName: 'write_file', idempotency: 'side-effect', seq: 3, turnSeq: 2 },
        ],
      }),
    );
    const { run, revived, untouched } = await bothVerdicts(path);
    assert.equal(run?.state, 'unreadable');
    assert.ok(!revived.ok);
    assert.equal(run?.detail, revived.detail);
    assert.match(revived.detail, /open \["c1"\].*the records say: .*open \[\]/);
    assert.ok(untouched);
  });

  test('it says a dispatched call is settled when the records leave it open', async () => {
    const path = await withLyingCheckpoint(
      [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')],
      (truth) => ({ ...truth, open: [] }),
    );
    const { run, revived, untouched } = await bothVerdicts(path);
    assert.equal(run?.state, 'unreadable');
    assert.ok(!revived.ok);
    assert.equal(run?.detail, revived.detail);
    assert.ok(untouched);
  });

  test('an honest checkpoint: both revivable', async () => {
    const path = await withLyingCheckpoint(
      [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')],
      (truth) => truth,
    );
    const { run, revived } = await bothVerdicts(path);
    assert.equal(run?.state, 'revivable');
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
  });
});
