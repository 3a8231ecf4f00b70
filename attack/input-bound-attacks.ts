import { spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { Revival } from '../src/revival/index.ts';
import { encodeLine } from '../src/transcript/line-codec.ts';
import { peek } from '../src/transcript/peek.ts';
import { buildTranscript, sampleBodies, snapshotFolder } from '../test/support/transcripts.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  type ChildOutcome,
  crashed,
  ending,
  faultNotProven,
  firstLine,
  interruptedRun,
  lstatOrNull,
  REPO,
  revivedCount,
  runBounded,
  runCli,
  sleep,
  verdict,
  writeTranscript,
} from './support.ts';

/*
 * Inputs that must be read in bounded memory and time: tens of MB of junk lines, a torn last
 * line of 200 MB, FIFOs, devices and folders where a transcript should be, parent links to
 * them, files changing under the reader, huge ids, a message nested 100,000 levels deep. Every
 * read runs in a child process that is killed past its time or memory bound.
 */

const PROBE = join(REPO, 'attack/probe-child.ts');
/** RSS growth allowed over the same command on a tiny transcript (the issue's goal). */
const GROWTH_MB = 150;

interface Probe extends ChildOutcome {
  outcome: string;
  detail: string;
}

async function probe(
  op: string,
  path: string,
  options: { timeoutMs: number; rssLimitMb?: number; cwd: string },
): Promise<Probe> {
  const result = await runBounded([PROBE, op, path], options);
  try {
    const parsed = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as {
      outcome: string;
      detail: string;
    };
    return { ...result, ...parsed };
  } catch {
    return {
      ...result,
      outcome: result.timedOut ? 'hung' : result.overMemory ? 'over-memory' : 'no-answer',
      detail: result.stderr.slice(0, 200),
    };
  }
}

/** Write `total` bytes made by `chunk(i)` (each about 1 MB) without holding them in memory. */
function writeStreamed(
  path: string,
  prefix: Buffer,
  total: number,
  chunk: (index: number) => Buffer,
): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  const fd = openSync(path, 'w', 0o600);
  try {
    writeSync(fd, prefix);
    let written = 0;
    for (let index = 0; written < total; index++) {
      const bytes = chunk(index);
      writeSync(fd, bytes);
      written += bytes.length;
    }
  } finally {
    closeSync(fd);
  }
}

type Step = { label: string; run: (path: string) => Promise<ChildOutcome & { outcome?: string }> };

function cliStep(
  context: AttackContext,
  label: string,
  args: (path: string) => string[],
  limitMb: number,
  timeoutMs: number,
): Step {
  return {
    label,
    run: (path) =>
      runCli(args(path), {
        cwd: context.folder,
        timeoutMs,
        rssLimitMb: limitMb,
        env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
      }),
  };
}

/** Each step on the big file and on a tiny one; growth over the tiny one's peak must stay under the goal. */
async function boundedSteps(
  context: AttackContext,
  big: string,
  tiny: string,
  steps: Step[],
  timeoutMs: number,
): Promise<{ held: boolean; lines: string[] }> {
  const lines: string[] = [];
  let held = true;
  for (const step of steps) {
    const base = await step.run(tiny);
    const result = await step.run(big);
    const growth = result.peakRssMb - base.peakRssMb;
    const ok =
      !result.timedOut &&
      !result.overMemory &&
      growth <= GROWTH_MB &&
      !crashed(result) &&
      result.ms <= timeoutMs;
    if (!ok) held = false;
    lines.push(
      `${step.label} ${ok ? 'ok' : 'BROKEN'} (+${growth} MB over ${base.peakRssMb} MB, ${ending(result)})`,
    );
    context.progress(lines.at(-1) ?? '');
  }
  return { held, lines };
}

const junkLines: Attack = {
  name: 'junk-lines-60mb',
  family: 'input',
  what: '60 MB of short junk lines after a session-meta: status, inspect, peek and revive stay within +150 MB RSS',
  timeoutMs: 400_000,
  alone: true,
  run: async (context) => {
    const path = join(context.folder, 'runs', 'junk.jsonl');
    const tiny = join(context.folder, 'runs', 'tiny.jsonl');
    const total = 60 * 1024 * 1024;
    const line = (index: number) => `junk ${index % 997}\n`;
    const chunk = Buffer.from(Array.from({ length: 100_000 }, (_, index) => line(index)).join(''));
    writeStreamed(path, buildTranscript(interruptedRun().slice(0, 2)).bytes, total, () => chunk);
    await writeTranscript(tiny, interruptedRun());
    const size = statSync(path).size;
    if (size < total) return faultNotProven(`the junk file has only ${size} bytes`);
    const limit = 400;
    const all: Step[] = [
      cliStep(context, 'status', (target) => ['status', target, '--json'], limit, 60_000),
      {
        label: 'inspect',
        run: (target) =>
          probe('inspect', target, { timeoutMs: 60_000, rssLimitMb: limit, cwd: context.folder }),
      },
      {
        label: 'peek',
        run: (target) =>
          probe('peek', target, { timeoutMs: 60_000, rssLimitMb: limit, cwd: context.folder }),
      },
      cliStep(
        context,
        'revive',
        (target) => ['revive', target, '--yes', '--agents', AGENTS_MODULE],
        limit,
        60_000,
      ),
    ];
    // The quick form: the command that reads most (status) and the one that writes (revive).
    const steps = context.quick
      ? all.filter((step) => step.label === 'status' || step.label === 'revive')
      : all;
    const { held, lines } = await boundedSteps(context, path, tiny, steps, 60_000);
    return verdict(
      held,
      `${(size / 1024 / 1024).toFixed(0)} MB, ~${Math.round(size / 9 / 1e6)}M junk lines: ${lines.join('; ')}`,
    );
  },
};

const tornLine: Attack = {
  name: 'torn-line-200mb',
  family: 'input',
  what: 'a torn last line of 200 MB after an interrupted run: status and revive stay within +150 MB RSS',
  timeoutMs: 400_000,
  alone: true,
  run: async (context) => {
    const path = join(context.folder, 'runs', 'torn.jsonl');
    const tiny = join(context.folder, 'runs', 'tiny.jsonl');
    const total = 200 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    writeStreamed(
      path,
      Buffer.concat([
        buildTranscript(interruptedRun()).bytes,
        Buffer.from('{"v":1,"seq":4,"type":"message","text":"'),
      ]),
      total,
      () => chunk,
    );
    await writeTranscript(tiny, interruptedRun());
    const size = statSync(path).size;
    if (size < total) return faultNotProven(`the torn file has only ${size} bytes`);
    const limit = 400;
    const all: Step[] = [
      cliStep(context, 'status', (target) => ['status', target, '--json'], limit, 60_000),
      cliStep(
        context,
        'revive',
        (target) => ['revive', target, '--yes', '--agents', AGENTS_MODULE],
        limit,
        120_000,
      ),
    ];
    const steps = context.quick ? all.filter((step) => step.label === 'revive') : all;
    const { held, lines } = await boundedSteps(context, path, tiny, steps, 120_000);
    return verdict(
      held,
      `${(size / 1024 / 1024).toFixed(0)} MB with no final newline: ${lines.join('; ')}`,
    );
  },
};

/** How long `llm-agent status` takes on a small regular transcript here and now, in ms. */
async function startCost(context: AttackContext): Promise<number> {
  const tiny = join(context.folder, 'start-cost', 'tiny.jsonl');
  await writeTranscript(tiny, interruptedRun());
  const result = await runCli(['status', tiny], { cwd: context.folder, timeoutMs: 60_000 });
  return result.ms;
}

/**
 * The read-only library calls and the commands on a path that is not a regular file: each
 * must answer within 5 s without an internal error; the library calls and `show` must call it
 * unreadable. `status` and `revive` of a folder path scan it (a folder is a valid argument),
 * so for a directory they need only end cleanly.
 */
async function notRegular(
  context: AttackContext,
  path: string,
  proof: string,
  isFolder = false,
): Promise<{ held: boolean; evidence: string }> {
  // "Within 5 s" of what the same process takes on a small regular transcript: on a loaded
  // machine a Node start alone can take seconds, and a hang is what is looked for.
  const start = await startCost(context);
  const bound = 5_000 + start;
  const limits = { timeoutMs: bound + 3_000, rssLimitMb: 400, cwd: context.folder };
  const results: string[] = [`(bound 5 s + ${start} ms start)`];
  let held = true;
  for (const op of ['inspect', 'peek']) {
    const result = await probe(op, path, limits);
    const ok =
      result.ms <= bound &&
      !result.timedOut &&
      !result.overMemory &&
      result.outcome !== 'threw' &&
      /unreadable|io-error|not-a-transcript|damaged|not a regular/.test(
        `${result.outcome} ${result.detail}`,
      );
    if (!ok) held = false;
    results.push(`${op} ${result.outcome}${ok ? '' : ` BROKEN (${ending(result)})`}`);
  }
  const commands = [['status'], ['show']];
  // The quick form leaves out revive, which reads through the same open as status and show.
  if (!context.quick) commands.push(['revive', '--yes', '--agents', AGENTS_MODULE]);
  for (const command of commands) {
    const result = await runCli([...command, path] as string[], {
      ...limits,
      env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
    });
    const refusedIt = result.code !== 0 && result.code !== 3;
    const ok =
      result.ms <= bound &&
      !result.timedOut &&
      !result.overMemory &&
      !crashed(result) &&
      result.code !== 1 &&
      (refusedIt || (isFolder && command[0] !== 'show'));
    if (!ok) held = false;
    results.push(
      `${command[0]} ${ok ? `exit ${result.code}` : `BROKEN (${ending(result)}: ${firstLine(result)})`}`,
    );
  }
  return { held, evidence: `${proof}: ${results.join(', ')}` };
}

const fifo: Attack = {
  name: 'fifo-as-transcript',
  family: 'input',
  what: 'a FIFO named X.jsonl: inspect, peek, status, show and revive answer "not a regular file" within 5 s, never hang',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    mkdirSync(join(context.folder, 'runs'), { mode: 0o700 });
    spawnSync('mkfifo', ['-m', '600', path]);
    if (lstatOrNull(path)?.isFIFO() !== true) return faultNotProven('mkfifo made no FIFO');
    const { held, evidence } = await notRegular(context, path, 'main.jsonl is a FIFO (lstat)');
    return verdict(held, evidence);
  },
};

function device(name: string, target: string): Attack {
  return {
    name: `${name}-behind-symlink`,
    family: 'input',
    what: `X.jsonl is a symlink to ${target}: every reader answers "not a regular file" within 5 s, bounded in memory`,
    run: async (context) => {
      const path = join(context.folder, 'runs', 'main.jsonl');
      mkdirSync(join(context.folder, 'runs'), { mode: 0o700 });
      symlinkSync(target, path);
      if (lstatOrNull(path)?.isSymbolicLink() !== true || !statSync(path).isCharacterDevice())
        return faultNotProven(`no symlink to ${target}`);
      const { held, evidence } = await notRegular(context, path, `main.jsonl → ${target}`);
      return verdict(held, evidence);
    },
  };
}

const folderNamed: Attack = {
  name: 'directory-named-jsonl',
  family: 'input',
  what: 'a directory named X.jsonl: readers answer unreadable within 5 s, no internal error',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    mkdirSync(path, { recursive: true, mode: 0o700 });
    if (lstatOrNull(path)?.isDirectory() !== true) return faultNotProven('no directory');
    const { held, evidence } = await notRegular(context, path, 'main.jsonl is a directory', true);
    return verdict(held, evidence);
  },
};

function parentLink(kind: 'fifo' | 'dev-zero'): Attack {
  return {
    name: `parent-link-${kind}`,
    family: 'input',
    what:
      kind === 'fifo'
        ? "a child's parent transcript (by layout) is a FIFO: revive of the child refuses quickly (5 s more than a CLI start), counts no revival, changes no file"
        : "a child's session-meta names /dev/zero as its parent: revive never follows the link — it says so and revives the child as the root of its own tree and runs it, quickly (5 s more than two CLI starts) and within memory",
    run: async (context) => {
      const tree = join(context.folder, 'runs');
      const child = join(tree, 'main.agents', 'worker-call_s1.jsonl');
      mkdirSync(join(tree, 'main.agents'), { recursive: true, mode: 0o700 });
      let parent: string;
      if (kind === 'fifo') {
        spawnSync('mkfifo', ['-m', '600', join(tree, 'main.jsonl')]);
        parent = '../main.jsonl';
        if (lstatOrNull(join(tree, 'main.jsonl'))?.isFIFO() !== true)
          return faultNotProven('no FIFO parent');
      } else parent = '/dev/zero';
      await writeTranscript(
        child,
        interruptedRun({
          agentId: 'worker-call_s1',
          agentType: 'worker',
          task: 'alpha',
          what: 'alpha',
          parent: { transcript: parent, callId: 'call_s1' },
        }),
      );
      const before = await snapshotFolder(join(tree, 'main.agents'));
      const start = await startCost(context);
      // The revived child (dev-zero) then runs to its end: a second CLI start's worth more.
      const bound = 5_000 + (kind === 'fifo' ? start : 2 * start);
      const result = await runCli(['revive', child, '--yes', '--agents', AGENTS_MODULE], {
        cwd: context.folder,
        timeoutMs: bound + 3_000,
        rssLimitMb: 600,
        env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
      });
      const after = await snapshotFolder(join(tree, 'main.agents'));
      const unchanged = JSON.stringify([...before]) === JSON.stringify([...after]);
      const revivals = revivedCount(child);
      const bounded = !result.timedOut && !result.overMemory && result.ms <= bound;
      // A FIFO where the layout puts the parent is refused; a link elsewhere is only reported.
      const held =
        kind === 'fifo'
          ? revivals === 0 && unchanged
          : revivals === 1 && /the link is not followed/.test(result.stderr);
      return verdict(
        bounded && held,
        `child's parent.transcript = ${parent}${kind === 'fifo' ? ' (a FIFO)' : ''}; revive of the child ${ending(result)}; run-revived ${revivals}; child folder ${unchanged ? 'unchanged' : 'CHANGED'}`,
      );
    },
  };
}

const changingUnderReader: Attack = {
  name: 'file-changed-while-read',
  family: 'input',
  what: 'a transcript truncated, replaced and appended to while inspect and peek read it: they never throw and never hang',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const original = buildTranscript(sampleBodies(8000, 200)).bytes;
    await writeTranscript(path, []);
    writeFileSync(path, original, { mode: 0o600 });
    const other = buildTranscript(sampleBodies(300, 50, 'y')).bytes;
    let mutations = 0;
    let running = true;
    const mutator = (async () => {
      while (running) {
        const choice = Math.floor(context.random() * 4);
        if (choice === 0) truncateSync(path, Math.floor(context.random() * original.length));
        else if (choice === 1) {
          writeFileSync(`${path}.new`, other, { mode: 0o600 });
          renameSync(`${path}.new`, path);
        } else if (choice === 2) writeFileSync(path, Buffer.from('\u0000garbage\n'), { flag: 'a' });
        else writeFileSync(path, original, { mode: 0o600 });
        mutations += 1;
        await sleep(Math.floor(context.random() * 3));
      }
    })();
    const until = Date.now() + (context.quick ? 3_000 : 15_000);
    let reads = 0;
    let overlapped = 0;
    const problems: string[] = [];
    while (Date.now() < until && !context.signal.aborted) {
      const seen = mutations;
      const op = reads % 2 === 0 ? 'inspect' : 'peek';
      const call = op === 'inspect' ? Revival.inspect({ path, maxRevivals: 3 }) : peek(path);
      const outcome = await Promise.race([
        call.then(
          () => 'ok',
          (error: unknown) => `threw ${String(error).split('\n')[0]}`,
        ),
        sleep(5_000).then(() => 'hung'),
      ]);
      reads += 1;
      if (mutations !== seen) overlapped += 1;
      if (outcome !== 'ok' && problems.length < 3) problems.push(`${op} ${outcome}`);
    }
    running = false;
    await mutator;
    if (overlapped === 0) return faultNotProven('no read overlapped a change of the file');
    return verdict(
      problems.length === 0,
      `${reads} reads, ${overlapped} overlapping ${mutations} truncations/replacements/appends: ${problems.length === 0 ? 'none threw or hung' : problems.join('; ')}`,
    );
  },
};

const hugeIds: Attack = {
  name: 'huge-ids',
  family: 'input',
  what: 'an agent id, label, agent type, call id and tool name of 200,000 characters each: status, show and revive end without an internal error',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const huge = (letter: string) => letter.repeat(200_000);
    const bodies = interruptedRun({
      agentId: huge('i'),
      label: huge('l'),
      agentType: 'main',
      callId: huge('c'),
    });
    const assistant = bodies[2] as { content: { toolName: string }[] };
    const dispatch = bodies[3] as { toolName: string };
    if (assistant.content[0] !== undefined) assistant.content[0].toolName = huge('t');
    dispatch.toolName = huge('t');
    await writeTranscript(path, bodies);
    if (statSync(path).size < 1_000_000) return faultNotProven('the ids are not huge');
    const problems: string[] = [];
    const summary: string[] = [];
    for (const args of [
      ['status', path],
      ['status', path, '--json'],
      ['show', path, '--envelopes'],
      ['revive', path, '--yes', '--agents', AGENTS_MODULE],
    ]) {
      const result = await runCli(args, {
        cwd: context.folder,
        timeoutMs: 20_000,
        rssLimitMb: 800,
        env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
      });
      summary.push(
        `${args.slice(0, 1).join(' ')}${args.includes('--json') ? ' --json' : ''} exit ${result.code}`,
      );
      if (result.timedOut || result.overMemory || crashed(result))
        problems.push(
          `${args[0]}: ${ending(result)} ${result.stderr.split('\n')[0]?.slice(0, 100)}`,
        );
      if (args.includes('--json')) {
        try {
          JSON.parse(result.stdout);
        } catch {
          problems.push('status --json is not JSON');
        }
      }
    }
    return verdict(
      problems.length === 0,
      `1.2 MB of ids: ${problems.length === 0 ? summary.join(', ') : problems.join('; ')}`,
    );
  },
};

/** A line with `value` (JSON text) spliced in as a tool result's output, checksum made right. */
function lineWithRawOutput(seq: number, callId: string, rawJson: string): Buffer {
  const placeholder = '@@RAW@@';
  const encoded = encodeLine(
    { v: 1, seq, at: '2026-01-01T00:00:09.000Z' },
    {
      type: 'message',
      role: 'tool',
      content: [
        { type: 'tool-result', callId, toolName: 'effect', output: placeholder, isError: false },
      ],
    },
  ).bytes.toString('utf8');
  const withoutCrc = encoded
    .replace(/,"crc":"[0-9a-f]{8}"\}\n$/, '}')
    .replace(`"${placeholder}"`, rawJson);
  const crc = (crc32(Buffer.from(withoutCrc)) >>> 0).toString(16).padStart(8, '0');
  return Buffer.from(`${withoutCrc.slice(0, -1)},"crc":"${crc}"}\n`);
}

const deepNesting: Attack = {
  name: 'show-deep-nesting',
  family: 'input',
  what: 'a tool result nested 100,000 levels deep: show (and --full, --envelopes) end without a stack overflow or internal error',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const depth = 100_000;
    const run = buildTranscript(interruptedRun());
    const deep = lineWithRawOutput(
      run.records.length,
      'call_e1',
      `${'['.repeat(depth)}${']'.repeat(depth)}`,
    );
    await writeTranscript(path, []);
    writeFileSync(path, Buffer.concat([run.bytes, deep]), { mode: 0o600 });
    const read = await peek(path);
    if (!read.ok || read.records.length !== run.records.length + 1)
      return faultNotProven(
        `the deep record is not read as a record (${read.ok ? read.state : read.reason})`,
      );
    const problems: string[] = [];
    const summary: string[] = [];
    for (const args of [
      ['show', path],
      ['show', path, '--full'],
      ['show', path, '--envelopes'],
      ['status', path],
    ]) {
      const result = await runCli(args, {
        cwd: context.folder,
        timeoutMs: 20_000,
        rssLimitMb: 800,
      });
      summary.push(`${args.filter((arg) => arg !== path).join(' ')} exit ${result.code}`);
      if (result.timedOut || result.overMemory || crashed(result) || result.code === 1)
        problems.push(
          `${args.filter((arg) => arg !== path).join(' ')}: ${ending(result)} ${result.stderr.split('\n')[0]?.slice(0, 100)}`,
        );
    }
    return verdict(
      problems.length === 0,
      `a checksummed record nested ${depth} deep: ${problems.length === 0 ? summary.join(', ') : problems.join('; ')}`,
    );
  },
};

const umask: Attack = {
  name: 'umask-000-permissions',
  family: 'input',
  what: 'under umask 000, a run with children, a torn-tail repair and a revive create files 0600 and folders 0700',
  run: async (context) => {
    const out = join(context.folder, 'runs', 'main.jsonl');
    const env = { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') };
    const run = await runBounded(
      [
        join(REPO, 'src/cli/main.ts'),
        'run',
        '--agents',
        AGENTS_MODULE,
        '--type',
        'main',
        '--out',
        out,
        'plan:tree',
      ],
      {
        cwd: context.folder,
        timeoutMs: 30_000,
        env,
        shellPrefix: 'umask 000;',
      },
    );
    const probeUmask = spawnSync('/bin/sh', ['-c', 'umask 000; umask']).stdout.toString().trim();
    if (probeUmask !== '0000') return faultNotProven(`umask is ${probeUmask}`);
    // An interrupted run with a torn tail, repaired (a sidecar) and revived under the same umask.
    const torn = join(context.folder, 'runs', 'torn', 'main.jsonl');
    await writeTranscript(torn, interruptedRun());
    writeFileSync(torn, '{"v":1,"seq":4,"type":"mess', { flag: 'a' });
    const revive = await runBounded(
      [join(REPO, 'src/cli/main.ts'), 'revive', torn, '--yes', '--agents', AGENTS_MODULE],
      {
        cwd: context.folder,
        timeoutMs: 30_000,
        env,
        shellPrefix: 'umask 000;',
      },
    );
    const entries = await snapshotFolder(join(context.folder, 'runs'));
    const wrong = [...entries].filter(([, value]) =>
      value.startsWith('folder') ? !value.startsWith('folder 700') : !value.startsWith('file 600'),
    );
    const files = [...entries.values()].filter((value) => value.startsWith('file')).length;
    const sidecars = [...entries.keys()].filter((name) => name.includes('.torn-')).length;
    return verdict(
      wrong.length === 0 && files >= 3 && sidecars >= 1,
      `umask 000; run ${ending(run)}, revive ${ending(revive)}; ${files} files (${sidecars} sidecars), ${entries.size - files} folders; wrong modes: ${wrong.map(([name, value]) => `${name} ${value.split(' ').slice(0, 2).join(' ')}`).join(', ') || 'none'}`,
    );
  },
};

/** The input-bound attacks. */
export const INPUT_ATTACKS: Attack[] = [
  junkLines,
  tornLine,
  fifo,
  device('dev-zero', '/dev/zero'),
  device('dev-urandom', '/dev/urandom'),
  folderNamed,
  parentLink('fifo'),
  parentLink('dev-zero'),
  changingUnderReader,
  hugeIds,
  deepNesting,
  umask,
];
