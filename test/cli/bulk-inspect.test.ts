import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  open,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { type CorpusState, writeTranscript } from '../../bench/status-corpus.ts';
import { bulkInspector, fileKey } from '../../src/runs/bulk-inspect.ts';
import { type BulkStats, EarlyHelpers, inspectInBulk } from '../../src/runs/bulk-pool.ts';
import { type FolderListing, findTranscripts } from '../../src/runs/find-transcripts.ts';
import { readLockTable } from '../../src/runs/lock-snapshot.ts';
import { StatusIndex } from '../../src/runs/status-index.ts';
import { Revival } from '../../src/revival/index.ts';
import { baseTranscripts, mutate } from '../revival/support/mutations.ts';
import { tempFolder } from '../revival/support/temp-folder.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';

/*
 * `status` inspects thousands of transcripts its own way (src/runs/bulk-inspect.ts: a few
 * system calls each, on every core, and what an earlier run read kept in the status index).
 * Its answers must be `Revival.inspect`'s, exactly, whatever the bytes.
 */

const seed = testSeed('bulk-inspect');
const CAPS = [0, 1, 3];
const STATES: CorpusState[] = [
  'finished',
  'revivable',
  'torn-revivable',
  'capped',
  'unreadable',
  'empty',
];

/**
 * A folder of transcripts: mutated small ones (damage anywhere, torn tails, junk), and long
 * ones (checkpoints every 32 KiB, longer than the 64 KiB window) in every state, some changed
 * near their end, where the window reads.
 */
async function corpus(folder: string, random: () => number, small = 150): Promise<string[]> {
  const bases = await baseTranscripts();
  for (let index = 0; index < small; index += 1) {
    const base = bases[Math.floor(random() * bases.length)] as Buffer;
    const bytes = random() < 0.2 ? base : mutate(base, random);
    await writeFile(join(folder, `small-${index}.jsonl`), bytes);
  }
  for (const [index, state] of STATES.entries()) {
    for (const size of [20_000, 90_000, 300_000]) {
      const path = join(folder, `long-${index}-${size}.agents`, 'worker-1.jsonl');
      const parent = join(folder, `long-${index}-${size}.jsonl`);
      await writeTranscript(parent, state, size, random, { agentId: 'main' });
      await writeTranscript(path, state, size / 2, random, {
        agentId: 'worker-1',
        parent: { transcript: `../long-${index}-${size}.jsonl`, callId: 'call_spawn_1' },
      });
      if (random() < 0.5) await changeNearEnd(parent, random);
    }
  }
  return findTranscripts([folder], folder);
}

/** Flip one bit somewhere in the last 70 KiB (the window, and a little before it). */
async function changeNearEnd(path: string, random: () => number): Promise<void> {
  const size = (await stat(path)).size;
  if (size === 0) return;
  const at = Math.max(0, size - 1 - Math.floor(random() * 70 * 1024));
  const handle = await open(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, at);
    byte[0] = (byte[0] as number) ^ (1 << Math.floor(random() * 8));
    await handle.write(byte, 0, 1, at);
  } finally {
    await handle.close();
  }
}

async function expected(paths: string[], maxRevivals: number) {
  return Promise.all(paths.map((path) => Revival.inspect({ path, maxRevivals })));
}

/** Every file below `folder`: its path, size and modification time. */
async function snapshot(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const lines: string[] = [];
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    const stats = await stat(path);
    lines.push(`${path} ${stats.size} ${stats.mtimeMs}`);
  }
  return lines.sort();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('status inspects in bulk what Revival.inspect would answer', () => {
  test('each answer is the same, or left to Revival.inspect', async () => {
    const folder = await tempFolder('bulk-inspect-');
    const random = seededRandom(seed);
    const paths = await corpus(folder, random);
    const listing: FolderListing = { folders: new Set(), claims: new Set() };
    await findTranscripts([folder], folder, [], listing);
    let answered = 0;
    for (const maxRevivals of CAPS) {
      const inspect = bulkInspector({ maxRevivals, table: readLockTable(), listing });
      const want = await expected(paths, maxRevivals);
      for (const [index, path] of paths.entries()) {
        const answer = inspect(path);
        if (answer === null) continue;
        answered += 1;
        assert.deepEqual(answer.inspection, want[index], path);
        assert.equal(
          JSON.stringify(answer.inspection),
          JSON.stringify(want[index]),
          `${path}: the same fields in the same order`,
        );
      }
    }
    // The common case is the bulk path's: only what it cannot decide from the window is not.
    assert.ok(answered > 0.9 * paths.length * CAPS.length, `${answered} of ${paths.length * 3}`);
  });

  test('on worker threads too: the same answers', async () => {
    const folder = await tempFolder('bulk-threads-');
    const paths = await corpus(folder, seededRandom(seed + 1), 100);
    const many = Array.from({ length: 20 }, () => paths).flat();
    const table = readLockTable();
    const alone = await inspectInBulk(many, 3, table, { helpers: 0 });
    const stats: BulkStats = { kept: 0, read: 0, byHelpers: 0 };
    // The calling thread leaves the reading to the worker: on a loaded machine it could
    // otherwise finish every path before the worker has started.
    const shared = await inspectInBulk(many, 3, table, { helpers: 1, stats, callerReads: false });
    assert.deepEqual(
      shared.map((answer) => answer?.inspection ?? null),
      alone.map((answer) => answer?.inspection ?? null),
    );
    assert.equal(stats.read, many.length);
    console.log(`bulk-inspect: ${stats.byHelpers} of ${many.length} answered by the worker`);
    assert.ok(stats.byHelpers > 0, 'the worker thread answered some of them');

    // Started before the list is known (as status does during its walk): the same answers.
    const early = EarlyHelpers.start();
    const earlyStats: BulkStats = { kept: 0, read: 0, byHelpers: 0, helpers: 0 };
    const fromEarly = await inspectInBulk(many, 3, table, {
      helpers: 1,
      stats: earlyStats,
      callerReads: false,
      early,
    });
    assert.deepEqual(
      fromEarly.map((answer) => answer?.inspection ?? null),
      alone.map((answer) => answer?.inspection ?? null),
    );
    assert.equal(earlyStats.helpers, 1);
    assert.ok(earlyStats.byHelpers > 0, 'the early worker answered some of them');
    // One never given a job is ended, and holds nothing meanwhile.
    EarlyHelpers.start().close();
  });

  test('the status index: kept outside the folder, used while a file is unchanged, never after', async () => {
    const folder = await tempFolder('bulk-index-');
    const cache = await tempFolder('bulk-index-cache-');
    const env = { XDG_CACHE_HOME: cache };
    const random = seededRandom(seed + 2);
    const paths = await corpus(folder, random, 40);
    // A file is kept only once it has not changed for two seconds.
    await pause(2100);
    const before = await snapshot(folder);
    const run = async () => {
      const index = StatusIndex.open(paths, env);
      assert.ok(index !== null);
      const stats: BulkStats = { kept: 0, read: 0, byHelpers: 0 };
      const answers = await inspectInBulk(paths, 3, readLockTable(), { index, stats });
      index.save();
      return { inspections: answers.map((answer) => answer?.inspection ?? null), stats };
    };
    const first = await run();
    assert.equal(first.stats.kept, 0);
    const files = await readdir(join(cache, 'llm-agent', 'status'));
    assert.equal(files.length, 1, 'one index, in the cache');
    assert.deepEqual(await snapshot(folder), before, 'nothing written in the folder');

    const second = await run();
    assert.ok(second.stats.kept > 0.9 * paths.length, `${second.stats.kept} kept`);
    assert.deepEqual(second.inspections, first.inspections);
    const want = await expected(paths, 3);
    for (const [index, inspection] of second.inspections.entries()) {
      if (inspection !== null) assert.deepEqual(inspection, want[index], paths[index]);
    }

    // A byte changed in place, the size the same: its change time is new, and it is read again.
    const kept = (path: string) =>
      StatusIndex.open(paths, env)?.lookup(path, fileKey(statSync(path, { bigint: true })));
    const changed = paths.find((path) => path.includes('long-') && kept(path) !== undefined);
    assert.ok(changed !== undefined, 'a long transcript is kept');
    const size = statSync(changed).size;
    await changeNearEnd(changed, () => 0.001);
    assert.equal(statSync(changed).size, size);
    assert.equal(kept(changed), undefined, 'its key is not the one kept');
    const third = await run();
    const at = paths.indexOf(changed);
    assert.deepEqual(
      third.inspections[at],
      await Revival.inspect({ path: changed, maxRevivals: 3 }),
    );
    assert.equal(third.stats.kept, second.stats.kept - 1);
    assert.deepEqual(await snapshot(folder), await snapshotExcept(folder, before, changed));

    // An index whose bytes changed is not believed.
    const indexPath = join(cache, 'llm-agent', 'status', files[0] as string);
    const bytes = await readFile(indexPath);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 1;
    await writeFile(indexPath, bytes);
    const fourth = await run();
    assert.equal(fourth.stats.kept, 0);
    assert.deepEqual(fourth.inspections, third.inspections);

    // A file that changed moments before it was read is not kept; one that had not, is.
    const stable = paths.find((path) => path !== changed && kept(path) !== undefined) as string;
    const fresh = join(folder, 'fresh.jsonl');
    await writeFile(fresh, await readFile(paths[0] as string));
    // Changed "moments before" whatever the machine's speed: its modification time is ahead.
    const ahead = new Date(Date.now() + 3_600_000);
    await utimes(fresh, ahead, ahead);
    const withFresh = [...paths, fresh];
    const index = StatusIndex.open(withFresh, env);
    await inspectInBulk(withFresh, 3, readLockTable(), { index });
    index?.save();
    const keptNow = StatusIndex.open(withFresh, env);
    const keyOf = (path: string) => fileKey(statSync(path, { bigint: true }));
    assert.equal(keptNow?.lookup(fresh, keyOf(fresh)), undefined);
    assert.notEqual(keptNow?.lookup(stable, keyOf(stable)), undefined);

    assert.equal(StatusIndex.open(paths, { ...env, LLM_AGENT_STATUS_INDEX: 'off' }), null);
  });

  test('the status index: one another user could have written or swapped is not believed', async () => {
    const folder = await tempFolder('bulk-index-private-');
    const cache = await tempFolder('bulk-index-private-cache-');
    const env = { XDG_CACHE_HOME: cache };
    const paths = await corpus(folder, seededRandom(seed + 3), 20);
    await pause(2100);
    const keptNow = async (): Promise<number> => {
      const index = StatusIndex.open(paths, env);
      const stats: BulkStats = { kept: 0, read: 0, byHelpers: 0 };
      await inspectInBulk(paths, 3, readLockTable(), { index, stats });
      return stats.kept;
    };
    const first = StatusIndex.open(paths, env);
    assert.ok(first !== null);
    await inspectInBulk(paths, 3, readLockTable(), { index: first });
    first.save();
    const believed = await keptNow();
    assert.ok(believed > 0.9 * paths.length, `${believed} kept`);

    // Writable by the group or by anyone: the fault is in place, and nothing of it is used.
    for (const mode of [0o620, 0o602]) {
      await chmod(first.path, mode);
      assert.equal((await stat(first.path)).mode & 0o777, mode);
      assert.equal(await keptNow(), 0, `mode ${mode.toString(8)}`);
    }
    await chmod(first.path, 0o600);
    assert.equal(await keptNow(), believed, 'believed again once private');

    // Swapped for a symbolic link to a file of the same bytes: not followed.
    const elsewhere = join(cache, 'planted.index');
    await copyFile(first.path, elsewhere);
    await rm(first.path);
    await symlink(elsewhere, first.path);
    assert.ok((await lstat(first.path)).isSymbolicLink());
    assert.equal(await keptNow(), 0, 'a symbolic link is not followed');
    await rm(first.path);

    // The cache folder itself writable by others: no index is opened at all.
    const status = join(cache, 'llm-agent', 'status');
    await chmod(status, 0o777);
    assert.equal(StatusIndex.open(paths, env), null);
    await chmod(status, 0o700);
    assert.notEqual(StatusIndex.open(paths, env), null);
  });
});

/** `before`, with `changed`'s line as it is now (it was written on purpose). */
async function snapshotExcept(folder: string, before: string[], changed: string) {
  const now = (await snapshot(folder)).find((line) => line.startsWith(`${changed} `));
  return before.map((line) => (line.startsWith(`${changed} `) ? (now as string) : line));
}
