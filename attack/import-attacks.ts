import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeLine } from '../src/transcript/line-codec.ts';
import { startPathFlipper } from '../test/support/path-flipper.ts';
import { buildTranscript, sampleBodies } from '../test/support/transcripts.ts';
import {
  type Attack,
  type AttackContext,
  attackSchema,
  type ChildOutcome,
  CLI,
  ending,
  faultNotProven,
  lstatOrNull,
  runBounded,
  sqlQuery,
  verdict,
} from './support.ts';

/*
 * `llm-agent import FILE --database URL`: the file is the attacker's. It is swapped after the
 * check for /dev/zero or a FIFO, it is a gigabyte of nothing, a FIFO or a device from the
 * start, 40 MB of records for a small heap, lines that lie, names and bytes full of SQL. The
 * import must read only what it checked, stay bounded, and store a run whole or nothing.
 */

function importCli(
  context: AttackContext,
  database: { url: string; schema: string },
  args: string[],
  options: { heapMb?: number; timeoutMs?: number; rssLimitMb?: number } = {},
): Promise<ChildOutcome> {
  return runBounded(
    [
      ...(options.heapMb === undefined ? [] : [`--max-old-space-size=${options.heapMb}`]),
      CLI,
      'import',
      ...args,
      '--schema',
      database.schema,
    ],
    {
      cwd: context.folder,
      timeoutMs: options.timeoutMs ?? 30_000,
      rssLimitMb: options.rssLimitMb ?? 600,
      env: { LLM_AGENT_DATABASE_URL: database.url },
    },
  );
}

async function stored(
  database: { url: string; schema: string },
  run: string,
): Promise<{ records: number; bytes: number }> {
  const [row] = await sqlQuery<{ records: string; bytes: string | null }>(
    database.url,
    `SELECT count(*) AS records, sum(octet_length(line)) AS bytes FROM "${database.schema}".records WHERE run_id = $1`,
    [run],
  );
  return { records: Number(row?.records ?? 0), bytes: Number(row?.bytes ?? 0) };
}

function swapped(to: 'dev-zero' | 'fifo'): Attack {
  return {
    name: `import-swapped-for-${to}`,
    family: 'import',
    full: true,
    what: `the path import checked is swapped, again and again, for ${to === 'fifo' ? 'a FIFO' : 'a link to /dev/zero'}: import refuses or stores exactly the file it checked — no hang, no endless read`,
    async run(context) {
      const database = await attackSchema();
      const good = buildTranscript(sampleBodies(8000, 200));
      const keep = join(context.folder, 'good.keep');
      await writeFile(keep, good.bytes);
      const path = join(context.folder, 'swapped.jsonl');
      linkSync(keep, path);
      if (to === 'fifo') execFileSync('mkfifo', [join(context.folder, 'fifo.keep')]);
      const flipper = await startPathFlipper(
        path,
        keep,
        to === 'fifo'
          ? { kind: 'hardlink', source: join(context.folder, 'fifo.keep') }
          : { kind: 'symlink', target: '/dev/zero' },
      );
      const tally = { whole: 0, refused: 0, flips: 0 };
      const bad: string[] = [];
      try {
        for (let attempt = 0; attempt < (context.quick ? 3 : 8); attempt++) {
          const run = `swap${attempt}`;
          const before = flipper.flips();
          const outcome = await importCli(context, database, [path, '--id', run], {
            timeoutMs: 60_000,
            rssLimitMb: 500,
          });
          const flips = flipper.flips() - before;
          if (flips < 256) return faultNotProven(`the path changed only ${flips} times`);
          tally.flips += flips;
          const kept = await stored(database, run);
          if (outcome.code === 0 && kept.bytes === good.bytes.length) tally.whole += 1;
          else if (outcome.code === 4 && kept.records === 0) tally.refused += 1;
          else bad.push(`${run}: ${ending(outcome)}, ${kept.bytes} bytes stored`);
        }
      } finally {
        await flipper.stop();
      }
      return verdict(
        bad.length === 0,
        `${tally.flips} swaps during the imports; ${tally.whole} stored whole, ${tally.refused} refused${bad.length === 0 ? '' : `; ${bad.join('; ')}`}`,
      );
    },
  };
}

const sizeBound: Attack = {
  name: 'import-size-bound',
  family: 'import',
  what: 'a sparse file of 1 GiB + 1 byte: refused before it is read, naming the bound, in bounded memory',
  async run(context) {
    const database = await attackSchema();
    const path = join(context.folder, 'huge.jsonl');
    const handle = await open(path, 'w');
    await handle.truncate(1024 ** 3 + 1);
    await handle.close();
    if ((lstatOrNull(path)?.size ?? 0) <= 1024 ** 3) return faultNotProven('the file is not large');
    const outcome = await importCli(context, database, ['huge.jsonl'], {
      timeoutMs: 20_000,
      rssLimitMb: 300,
    });
    const kept = await stored(database, 'huge');
    return verdict(
      outcome.code === 4 && /bound/.test(outcome.stderr) && kept.records === 0,
      `${ending(outcome)}: ${outcome.stderr.trim().slice(0, 120)}`,
    );
  },
};

const memory: Attack = {
  name: 'import-memory-40mb',
  family: 'import',
  full: true,
  what: 'a 40 MB transcript imported under a 64 MB heap (import held 11–13× the file)',
  alone: true,
  async run(context) {
    const database = await attackSchema();
    const built = buildTranscript(sampleBodies(context.quick ? 60_000 : 100_000, 400));
    await writeFile(join(context.folder, 'big.jsonl'), built.bytes);
    if (built.bytes.length < 25e6) return faultNotProven('the transcript is small');
    const outcome = await importCli(context, database, ['big.jsonl'], {
      heapMb: 64,
      timeoutMs: 120_000,
      rssLimitMb: 400,
    });
    const kept = await stored(database, 'big');
    return verdict(
      outcome.code === 0 && kept.bytes === built.bytes.length,
      `${(built.bytes.length / 1e6).toFixed(1)} MB under a 64 MB heap: ${ending(outcome)}; ${kept.records} of ${built.lines.length} records stored`,
    );
  },
};

const specialFiles: Attack = {
  name: 'import-special-files',
  family: 'import',
  full: true,
  what: 'a FIFO, a link to /dev/zero, a folder and a link to /dev/urandom given as FILE: each refused at once, nothing stored',
  async run(context) {
    const database = await attackSchema();
    execFileSync('mkfifo', [join(context.folder, 'pipe.jsonl')]);
    symlinkSync('/dev/zero', join(context.folder, 'zero.jsonl'));
    symlinkSync('/dev/urandom', join(context.folder, 'random.jsonl'));
    mkdirSync(join(context.folder, 'folder.jsonl'));
    const names = ['pipe.jsonl', 'zero.jsonl', 'random.jsonl', 'folder.jsonl'];
    if (!lstatOrNull(join(context.folder, 'pipe.jsonl'))?.isFIFO())
      return faultNotProven('no FIFO');
    const seen: string[] = [];
    let held = true;
    for (const name of names) {
      const outcome = await importCli(context, database, [name], {
        timeoutMs: 15_000,
        rssLimitMb: 300,
      });
      const run = name.replace('.jsonl', '');
      const ok = outcome.code === 4 && (await stored(database, run)).records === 0;
      held &&= ok;
      seen.push(`${name}: ${ok ? 'refused' : ending(outcome)}`);
    }
    return verdict(held, seen.join('; '));
  },
};

const hostileLines: Attack = {
  name: 'import-hostile-lines',
  family: 'import',
  full: true,
  what: 'transcripts whose lines lie (a rotted checksum mid-file, a seq gap, a torn tail, junk after the records): each refused naming the line, nothing stored',
  async run(context) {
    const database = await attackSchema();
    const built = buildTranscript(sampleBodies(40, 60));
    const lines = built.lines.map((line) => Buffer.from(line));
    const rotted = lines.map((line) => Buffer.from(line));
    const victim = rotted[20] as Buffer;
    victim[15] = (victim[15] as number) ^ 0x01;
    const gap = [...lines.slice(0, 10), ...lines.slice(11)];
    const torn = [...lines, Buffer.from('{"v":1,"seq":40,"at":"2026')];
    const junk = [...lines, Buffer.from('not json at all\n')];
    if (decodeLine(victim.subarray(0, victim.length - 1)).ok)
      return faultNotProven('the rotted line still decodes');
    const cases: [string, Buffer[]][] = [
      ['rotted', rotted],
      ['gap', gap],
      ['torn', torn],
      ['junk', junk],
    ];
    const seen: string[] = [];
    let held = true;
    for (const [name, body] of cases) {
      await writeFile(join(context.folder, `${name}.jsonl`), Buffer.concat(body));
      const outcome = await importCli(context, database, [`${name}.jsonl`]);
      const ok = outcome.code === 4 && (await stored(database, name)).records === 0;
      held &&= ok;
      seen.push(
        `${name}: ${ok ? `refused (${outcome.stderr.trim().slice(0, 60)}…)` : ending(outcome)}`,
      );
    }
    return verdict(held, seen.join('; '));
  },
};

const sqlMetacharacters: Attack = {
  name: 'import-sql-metacharacters',
  family: 'import',
  full: true,
  what: "SQL in a run name, a schema name and the records' text: names refused, text stored byte for byte, the tables intact",
  async run(context) {
    const database = await attackSchema();
    const payload = `'); DROP TABLE runs; -- \\x00 $$ ; SELECT pg_sleep(30); "`;
    const built = buildTranscript(sampleBodies(12, 40, payload));
    if (!built.bytes.includes(Buffer.from('DROP TABLE'))) return faultNotProven('no SQL in it');
    await writeFile(join(context.folder, 'sql.jsonl'), built.bytes);
    const byName = await importCli(context, database, [
      'sql.jsonl',
      '--id',
      "x'); DROP TABLE runs; --",
    ]);
    const bySchema = await runBounded(
      [CLI, 'import', 'sql.jsonl', '--schema', 'x"; DROP SCHEMA public; --'],
      {
        cwd: context.folder,
        timeoutMs: 30_000,
        env: { LLM_AGENT_DATABASE_URL: database.url },
      },
    );
    const byText = await importCli(context, database, ['sql.jsonl'], { timeoutMs: 30_000 });
    const kept = await stored(database, 'sql');
    const tables = await sqlQuery<{ n: string }>(
      database.url,
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('runs', 'records')`,
      [database.schema],
    );
    const held =
      byName.code === 2 &&
      bySchema.code !== 0 &&
      !/DROP/.test(bySchema.stdout) &&
      byText.code === 0 &&
      kept.bytes === built.bytes.length &&
      Number(tables[0]?.n) === 2 &&
      byText.ms < 25_000;
    return verdict(
      held,
      `SQL as --id: ${ending(byName)}; as --schema: ${ending(bySchema)}; in the text: ${ending(byText)}, ${kept.bytes} of ${built.bytes.length} bytes stored; tables ${tables[0]?.n}/2`,
    );
  },
};

/** The attacks on `llm-agent import`. */
export const IMPORT_ATTACKS: Attack[] = [
  swapped('dev-zero'),
  swapped('fifo'),
  sizeBound,
  memory,
  specialFiles,
  hostileLines,
  sqlMetacharacters,
];
