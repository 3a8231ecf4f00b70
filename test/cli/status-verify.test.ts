import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { Session } from '../../src/transcript/session.ts';
import { tailStateToJson } from '../../src/transcript/tail-state.ts';
import { abandonSession } from '../support/abandon-session.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { writeCompactedRun } from '../revival/support/compacted-run.ts';
import { META } from '../revival/support/transcripts.ts';
import { tempFolder } from '../revival/support/temp-folder.ts';
import { runCli } from './support/cli-fixtures.ts';

/*
 * `status --verify`, the full check: what `status` (the last 64 KiB) and a revive of a run that
 * compacted (what its model will see) do not read, it reads — damage in a compacted record, a
 * checkpoint that lies about the records before it.
 */

const folder = await tempFolder('status-verify-', true);

async function status(path: string, verify: boolean) {
  const args = ['status', path, '--json', ...(verify ? ['--verify'] : [])];
  const run = await runCli(args, { cwd: folder });
  const json = JSON.parse(run.stdout) as { runs: { state: string; detail: string | null }[] };
  return { code: run.code, run: json.runs[0] };
}

async function compactedRun(name: string): Promise<{ path: string; lines: string[] }> {
  const path = join(folder, name);
  await writeCompactedRun(nodeFileSystem, path, seededRandom(3), 300, {
    checkpointBytes: 32 * 1024,
    padding: 3000,
    oddRanges: false,
  });
  return { path, lines: (await readFile(path, 'utf8')).split('\n').slice(0, -1) };
}

describe('status --verify reads every record', () => {
  test('damage in a compacted record: status and revive go on, --verify names the line', async () => {
    const { path, lines } = await compactedRun('hidden-damage.jsonl');
    const index = 40; // well inside the first compaction's range
    const line = lines[index] as string;
    const at = line.indexOf('"type"') + 2;
    lines[index] = `${line.slice(0, at)}x${line.slice(at + 1)}`;
    assert.notEqual(lines[index], line, 'the damage is real');
    await writeFile(path, `${lines.join('\n')}\n`);

    const plain = await status(path, false);
    assert.equal(plain.run?.state, 'revivable');
    assert.equal(plain.code, 3);
    const verified = await status(path, true);
    assert.equal(verified.run?.state, 'unreadable');
    // The file named once, then its line: `…/hidden-damage.jsonl:N: why`.
    assert.match(
      verified.run?.detail ?? '',
      new RegExp(`^[^:]*hidden-damage\\.jsonl:${index + 1}: `),
    );
    assert.equal(verified.code, 4);
    // What revive reads of a compacted run is what its model sees: the damage is not in it.
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 3 });
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
    await revived.session.close();
  });

  test('a lying checkpoint after compactions: believed by status and revive, found by --verify', async () => {
    const { path } = await compactedRun('lying.jsonl');
    const session = await Session.open(path, { durability: 'flush' });
    // CRC-valid, where the writer puts one: it says the run used its three revivals.
    const lie = { ...session.state, revivals: 3, revivedAfter: [1, 2, 3] };
    await session.append({ type: 'checkpoint', state: tailStateToJson(lie) });
    await abandonSession(session);

    const plain = await status(path, false);
    assert.equal(plain.run?.state, 'capped', 'status reads the checkpoint');
    // revive of a run that compacted starts from that checkpoint too: it refuses, capped.
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 3 });
    assert.equal(revived.ok, false);
    assert.equal(revived.ok ? '' : revived.reason, 'revival-cap');
    const verified = await status(path, true);
    assert.equal(verified.run?.state, 'unreadable');
    assert.match(
      verified.run?.detail ?? '',
      /its last checkpoint disagrees with the records before it/,
    );
    assert.equal(verified.code, 4);
  });
});
