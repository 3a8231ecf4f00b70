import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, symlinkSync } from 'node:fs';
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { CLI, type ChildOutcome, ending, runBounded } from '../../attack/support.ts';
import { startPathFlipper } from '../support/path-flipper.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { buildTranscript, sampleBodies } from '../support/transcripts.ts';
import { temporaryFolder } from './support/cli-fixtures.ts';

/*
 * `import` reads the file it checked, through the descriptor it checked, in bounded memory:
 * a path swapped after the check (for /dev/zero, for a FIFO) is refused or read as checked —
 * never followed into an endless read or a hang; a file over the size bound is refused before
 * its first byte is read; a 42 MB transcript imports under a 64 MB heap.
 */

let database: TestDatabase;
let client: pg.Client;
let folder = '';
before(async () => {
  database = await testDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  folder = await temporaryFolder();
  const migrated = await importCli(['db', 'migrate', '--schema', database.schema]);
  assert.equal(migrated.code, 0, migrated.stderr);
});
after(async () => {
  await client?.end();
  await database?.stop();
  await rm(folder, { recursive: true, force: true });
});

function importCli(
  args: string[],
  options: { heapMb?: number; timeoutMs?: number; rssLimitMb?: number } = {},
): Promise<ChildOutcome> {
  return runBounded(
    [
      ...(options.heapMb === undefined ? [] : [`--max-old-space-size=${options.heapMb}`]),
      CLI,
      ...args,
    ],
    {
      cwd: folder,
      timeoutMs: options.timeoutMs ?? 60_000,
      ...(options.rssLimitMb === undefined ? {} : { rssLimitMb: options.rssLimitMb }),
      env: { LLM_AGENT_DATABASE_URL: database.url },
    },
  );
}

async function stored(run: string): Promise<{ records: number; bytes: number }> {
  const found = await client.query<{ records: string; bytes: string | null }>(
    `SELECT count(*) AS records, sum(octet_length(line)) AS bytes FROM "${database.schema}".records WHERE run_id = $1`,
    [run],
  );
  return { records: Number(found.rows[0]?.records), bytes: Number(found.rows[0]?.bytes ?? 0) };
}

test('a 42 MB transcript imports under a 64 MB heap, byte for byte', async () => {
  const built = buildTranscript(sampleBodies(100_000, 400));
  assert.ok(built.bytes.length > 40e6, `${built.bytes.length} bytes`);
  await writeFile(join(folder, 'big.jsonl'), built.bytes);
  const outcome = await importCli(['import', 'big.jsonl', '--schema', database.schema], {
    heapMb: 64,
  });
  console.log(
    `# import of ${(built.bytes.length / 1e6).toFixed(1)} MB: ${ending(outcome)} (64 MB heap)`,
  );
  assert.equal(outcome.code, 0, outcome.stderr.slice(0, 400));
  assert.deepEqual(await stored('big'), {
    records: built.lines.length,
    bytes: built.bytes.length,
  });
});

test('a file over the size bound is refused before it is read, naming the bound', async () => {
  const path = join(folder, 'huge.jsonl');
  const handle = await open(path, 'w');
  await handle.truncate(1024 ** 3 + 1); // sparse: nothing is written
  await handle.close();
  const outcome = await importCli(['import', 'huge.jsonl', '--schema', database.schema], {
    timeoutMs: 30_000,
    rssLimitMb: 400,
  });
  assert.equal(outcome.code, 4, ending(outcome));
  assert.match(outcome.stderr, /huge\.jsonl: 1073741825 bytes, more than import's bound of 1 GiB/);
  assert.equal((await stored('huge')).records, 0);
  const help = await importCli(['import', '--help']);
  assert.match(help.stdout, /larger than 1 GiB is refused/);
});

test('a FIFO, a device behind a link, a link in the tree: refused at once; a link given as FILE is resolved', async () => {
  execFileSync('mkfifo', [join(folder, 'pipe.jsonl')]);
  symlinkSync('/dev/zero', join(folder, 'zero.jsonl'));
  await writeFile(join(folder, 'real.jsonl'), buildTranscript(sampleBodies(10)).bytes);
  symlinkSync(join(folder, 'real.jsonl'), join(folder, 'alias.jsonl'));
  for (const [name, reason] of [
    ['pipe.jsonl', /not a regular file \(a FIFO\)/],
    ['zero.jsonl', /not a regular file \(a character device\)/],
  ] as const) {
    const outcome = await importCli(['import', name, '--schema', database.schema], {
      timeoutMs: 20_000,
      rssLimitMb: 400,
    });
    assert.equal(outcome.code, 4, `${name}: ${ending(outcome)} ${outcome.stderr}`);
    assert.match(outcome.stderr, reason);
  }
  const alias = await importCli(['import', 'alias.jsonl', '--schema', database.schema]);
  assert.equal(alias.code, 0, alias.stderr);
  assert.equal((await stored('alias')).records, 10);
});

for (const to of ['/dev/zero behind a link', 'a FIFO'] as const) {
  test(`the path swapped for ${to} while import runs: refused or read as checked, never a hang or an endless read`, async () => {
    const sub = await temporaryFolder();
    try {
      const good = buildTranscript(sampleBodies(8000, 200));
      const keep = join(sub, 'good.keep');
      await writeFile(keep, good.bytes);
      const path = join(sub, 'swapped.jsonl');
      linkSync(keep, path);
      let flipTo: Parameters<typeof startPathFlipper>[2];
      if (to === 'a FIFO') {
        execFileSync('mkfifo', [join(sub, 'fifo.keep')]);
        flipTo = { kind: 'hardlink', source: join(sub, 'fifo.keep') };
      } else flipTo = { kind: 'symlink', target: '/dev/zero' };
      const flipper = await startPathFlipper(path, keep, flipTo);
      const tally = { imported: 0, refused: 0 };
      try {
        for (let attempt = 0; attempt < 6; attempt++) {
          const run = `swap${to === 'a FIFO' ? 'f' : 'z'}${attempt}`;
          const flipsBefore = flipper.flips();
          const outcome = await importCli(
            ['import', path, '--id', run, '--schema', database.schema],
            { timeoutMs: 15_000, rssLimitMb: 500 },
          );
          // The fault: the path changed while this import ran.
          assert.ok(flipper.flips() - flipsBefore >= 256, 'the path was swapped meanwhile');
          assert.ok(!outcome.timedOut && !outcome.overMemory, `${run}: ${ending(outcome)}`);
          if (outcome.code === 0) {
            tally.imported += 1;
            assert.deepEqual(await stored(run), {
              records: good.lines.length,
              bytes: good.bytes.length,
            });
          } else {
            tally.refused += 1;
            assert.equal(outcome.code, 4, `${run}: ${ending(outcome)} ${outcome.stderr}`);
            assert.match(
              outcome.stderr,
              /not a regular file|is a symbolic link|replaced while it was read/,
            );
            assert.equal((await stored(run)).records, 0);
          }
        }
      } finally {
        await flipper.stop();
      }
      console.log(
        `# swapped for ${to}: ${tally.imported} imported whole, ${tally.refused} refused`,
      );
    } finally {
      await rm(sub, { recursive: true, force: true });
    }
  });
}
