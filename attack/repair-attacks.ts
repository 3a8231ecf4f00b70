import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Attack,
  bytesOrNull,
  type ChildOutcome,
  CLI,
  ending,
  faultNotProven,
  lstatOrNull,
  REPO,
  runBounded,
  sleep,
  verdict,
} from './support.ts';

/*
 * `llm-agent repair`, attacked with the sessions of other agents' clients (Claude Code, Codex,
 * pi) made hostile: megabytes of tiny lines, a line of one client's envelope in another's
 * session, folders whose links loop back on themselves or lead out, a client writing while
 * repair appends, FIFOs and devices where a session should be. Repair must stay bounded, never
 * answer a session in the wrong format, never leave the folders it was given, and never put
 * its answer after a line it did not check.
 */

const FIXTURES = join(REPO, 'test/fixtures/foreign');
const CLAUDE = readFileSync(join(FIXTURES, 'claude-code/killed-one-call.jsonl'));
const PI = readFileSync(join(FIXTURES, 'pi/crash-one-call.v3.jsonl'));

/** Make a file look an hour old: not live, by its change time. */
function aged(path: string): void {
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(path, hourAgo, hourAgo);
}

function lines(bytes: Buffer): Buffer[] {
  const found: Buffer[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    found.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  return found;
}

const tinyLines: Attack = {
  name: 'repair-tiny-lines-memory',
  family: 'repair',
  awaits: 'repair',
  what: 'a Claude Code session padded with 18 MB of tiny lines: repair --dry-run and --scan stay bounded by a few times the longest line, streaming the file pass after pass (it held every line: 1.4 GB; then the file and 8 bytes a line)',
  alone: true,
  timeoutMs: 300_000,
  async run(context) {
    const megabytes = context.quick ? 9 : 18;
    const session = lines(CLAUDE);
    const tiny = Buffer.from('{"type":"x"}\n');
    const padding = Buffer.alloc(Math.floor((megabytes * 1_000_000) / tiny.length) * tiny.length);
    for (let at = 0; at < padding.length; at += tiny.length) tiny.copy(padding, at);
    const folder = join(context.folder, 'projects');
    mkdirSync(folder);
    const path = join(folder, 'padded.jsonl');
    await writeFile(path, Buffer.concat([...session.slice(0, 2), padding, ...session.slice(2)]));
    aged(path);
    if ((lstatOrNull(path)?.size ?? 0) < megabytes * 1_000_000)
      return faultNotProven('the session is small');
    const dry = await runBounded([CLI, 'repair', '--dry-run', path], {
      cwd: context.folder,
      timeoutMs: 120_000,
      rssLimitMb: 1500,
    });
    const scan = await runBounded([CLI, 'repair', '--scan', folder], {
      cwd: context.folder,
      timeoutMs: 120_000,
      rssLimitMb: 1500,
    });
    // The process itself (the TypeScript sources loaded) is about 100 MB; a repair streams the
    // file and holds a few times its longest line (2 KB here), so it stays near that. The code
    // that held the file once and 8 bytes a line peaked near 200 MB for 18 MB.
    const bound = 140;
    return verdict(
      !dry.overMemory && !scan.overMemory && dry.peakRssMb <= bound && scan.peakRssMb <= bound,
      `${megabytes} MB of ${padding.length / tiny.length} tiny lines: --dry-run ${ending(dry)}; --scan ${ending(scan)} (bound ${bound} MB)`,
    );
  },
};

const formatFooled: Attack = {
  name: 'repair-format-fooled',
  family: 'repair',
  awaits: 'repair',
  what: "a pi session with one line of Claude Code's envelope in it: refused as mixed, never answered in Claude Code's format",
  async run(context) {
    const stray = lines(CLAUDE)[2] as Buffer;
    const session = lines(PI);
    const path = join(context.folder, 'mixed.jsonl');
    const bytes = Buffer.concat([...session.slice(0, 2), stray, ...session.slice(2)]);
    await writeFile(path, bytes);
    aged(path);
    if (!bytes.includes(Buffer.from('"isSidechain"'))) return faultNotProven('no Claude Code line');
    const outcome = await runBounded([CLI, 'repair', path], {
      cwd: context.folder,
      timeoutMs: 30_000,
    });
    const after = bytesOrNull(path);
    const unchanged = after?.equals(bytes) === true;
    return verdict(
      outcome.code === 4 && unchanged,
      `${ending(outcome)}: ${outcome.stdout.trim().split('\n')[0]?.slice(0, 120) ?? ''}${outcome.stderr.trim().slice(0, 120)}; the file ${unchanged ? 'unchanged' : `grew ${(after?.length ?? 0) - bytes.length} bytes`}`,
    );
  },
};

const scanLinks: Attack = {
  name: 'repair-scan-symlinked-folders',
  family: 'repair',
  awaits: 'repair',
  what: 'repair --scan over a home with three links back to their parent and one out to another folder holding a broken session: it ends, and lists nothing outside its root',
  timeoutMs: 120_000,
  async run(context) {
    const home = join(context.folder, 'home');
    const outside = join(context.folder, 'outside');
    mkdirSync(join(home, 'project'), { recursive: true });
    mkdirSync(outside);
    await writeFile(join(home, 'project', 'inside.jsonl'), CLAUDE);
    await writeFile(join(outside, 'elsewhere.jsonl'), CLAUDE);
    aged(join(home, 'project', 'inside.jsonl'));
    aged(join(outside, 'elsewhere.jsonl'));
    symlinkSync('..', join(home, 'project', 'up'));
    symlinkSync('.', join(home, 'here'));
    symlinkSync(home, join(home, 'project', 'home'));
    symlinkSync(outside, join(home, 'out'));
    if (!lstatOrNull(join(home, 'here'))?.isSymbolicLink()) return faultNotProven('no links');
    const outcome = await runBounded([CLI, 'repair', '--scan', home], {
      cwd: context.folder,
      timeoutMs: 30_000,
      rssLimitMb: 800,
    });
    const listedOutside = outcome.stdout.includes('elsewhere');
    const listedInside = outcome.stdout.includes('inside.jsonl');
    return verdict(
      !outcome.timedOut && !outcome.overMemory && !listedOutside && listedInside,
      `${ending(outcome)}; the session inside ${listedInside ? 'listed' : 'NOT listed'}; the one behind the link out ${listedOutside ? 'LISTED' : 'not listed'}`,
    );
  },
};

const APPENDER = `
const fs = require('node:fs');
const [path, line] = process.argv.slice(1);
const pause = new Int32Array(new SharedArrayBuffer(4));
let count = 0;
for (;;) {
  fs.appendFileSync(path, line + '\\n');
  count += 1;
  process.stdout.write(count + '\\n');
  // Now and then, at random: most repairs see a quiet file, some are overtaken mid-way.
  Atomics.wait(pause, 0, 0, 20 + Math.floor(Math.random() * 400));
}
`;

const appendWindow: Attack = {
  name: 'repair-append-window',
  family: 'repair',
  awaits: 'repair',
  what: "the client appends lines while repair --force runs: repair's answer never lands after a line it did not check unless it says so, and the backup holds everything before its answer",
  timeoutMs: 240_000,
  async run(context) {
    const rounds = context.quick ? 4 : 12;
    // A line of the client's own that is not a turn (a queue operation): the session stays one
    // with a call to answer, whatever repair reads.
    const clientLine = (lines(CLAUDE)[1] as Buffer).toString('utf8').trimEnd();
    const found: string[] = [];
    let wrong = 0;
    let appendedDuring = 0;
    for (let round = 0; round < rounds; round++) {
      const folder = join(context.folder, `round${round}`);
      mkdirSync(folder);
      const path = join(folder, 'live.jsonl');
      await writeFile(path, CLAUDE);
      const appender = spawn(process.execPath, ['-e', APPENDER, path, clientLine], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let appended = 0;
      appender.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        appended = Number(chunk.trim().split('\n').at(-1));
      });
      await sleep(100);
      const before = appended;
      const outcome = await runBounded([CLI, 'repair', '--force', path], {
        cwd: folder,
        timeoutMs: 60_000,
      });
      appendedDuring += appended - before;
      appender.kill('SIGKILL');
      const backupName = readdirSync(folder).find((name) => name.startsWith('live.jsonl.bak-'));
      const after = bytesOrNull(path) ?? Buffer.alloc(0);
      if (backupName === undefined) {
        found.push(`round ${round}: ${ending(outcome)}, no repair`);
        continue;
      }
      const backup = bytesOrNull(join(folder, backupName)) ?? Buffer.alloc(0);
      // The line right after what repair checked (the backup) must be its answer.
      const next = after.subarray(backup.length, after.indexOf(0x0a, backup.length) + 1);
      const answerFirst = next.includes('"tool_result"') && next.includes('retried');
      const lineStart = answerFirst ? backup.length : after.indexOf('"tool_result"', backup.length);
      const said = /in between|between the repair|meanwhile/i.test(outcome.stdout + outcome.stderr);
      const exact = answerFirst && after.subarray(0, backup.length).equals(backup);
      if (!exact && !said) wrong += 1;
      found.push(
        `round ${round}: answer at byte ${lineStart}, backup ${backup.length} bytes${exact ? '' : said ? ' (repair said so)' : ' — a line it never checked precedes its answer, unsaid'}`,
      );
    }
    if (appendedDuring === 0) return faultNotProven('the client appended nothing during repair');
    return verdict(
      wrong === 0,
      `${appendedDuring} client lines appended during repair; ${found.join('; ')}`,
    );
  },
};

const specialSessions: Attack = {
  name: 'repair-special-files',
  family: 'repair',
  what: 'a FIFO and a link to /dev/zero given as sessions, and among the sessions --scan walks: refused or skipped at once, never read',
  async run(context) {
    const folder = join(context.folder, 'sessions');
    mkdirSync(folder);
    execFileSync('mkfifo', [join(folder, 'pipe.jsonl')]);
    symlinkSync('/dev/zero', join(folder, 'zero.jsonl'));
    if (!lstatOrNull(join(folder, 'pipe.jsonl'))?.isFIFO()) return faultNotProven('no FIFO');
    const bounded = { cwd: context.folder, timeoutMs: 20_000, rssLimitMb: 500 };
    const fifo = await runBounded([CLI, 'repair', join(folder, 'pipe.jsonl')], bounded);
    const zero = await runBounded([CLI, 'repair', join(folder, 'zero.jsonl')], bounded);
    const scan = await runBounded([CLI, 'repair', '--scan', folder], bounded);
    const contained = (outcome: ChildOutcome) => !outcome.timedOut && !outcome.overMemory;
    return verdict(
      contained(fifo) && fifo.code !== 0 && contained(zero) && zero.code !== 0 && contained(scan),
      `FIFO: ${ending(fifo)}; /dev/zero: ${ending(zero)}; --scan: ${ending(scan)}`,
    );
  },
};

/** The attacks on `llm-agent repair`. */
export const REPAIR_ATTACKS: Attack[] = [
  tinyLines,
  formatFooled,
  scanLinks,
  appendWindow,
  specialSessions,
];
