import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crashRegistry, newWorld, type World } from '../crashtest/agents.ts';
import { Revival } from '../src/revival/index.ts';
import { Composer } from '../src/subagents/composer.ts';
import { encodeLine } from '../src/transcript/line-codec.ts';
import { peek } from '../src/transcript/peek.ts';
import type { RecordBody } from '../src/transcript/records.ts';
import { emptyTailState, foldTailState, tailStateToJson } from '../src/transcript/tail-state.ts';
import { buildTranscript } from '../test/support/transcripts.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  bytesOrNull,
  ending,
  faultNotProven,
  interruptedRun,
  revivedCount,
  runCli,
  verdict,
  writeTranscript,
} from './support.ts';

/*
 * Damage that must never replay a side effect: bit flips and other mutations of the last,
 * newline-terminated line when it is the durable dispatch of a side-effect tool; a second,
 * rogue writer's records; transcripts of nothing but zeros; checkpoints that lie. Tool
 * executions are counted by the tool itself (the crash tests' `effect`, logged to a world
 * outside the file), after a revive and a run of the revived run to its end.
 */

/** Revive a transcript (library) and run it to its end; the executions of its `effect`. */
async function reviveAndRun(
  path: string,
  salvage: boolean,
): Promise<{ outcome: string; world: World }> {
  const world = newWorld();
  const options = {
    path,
    agentId: 'main',
    maxRevivals: 3,
    // The salvage option is named on revive and on the session it opens: whichever one the
    // library reads, the attack asks for it.
    sessionOptions: {
      durability: 'none' as const,
      ...(salvage ? { salvageDamagedTail: true } : {}),
    },
    ...(salvage ? { salvageDamagedTail: true } : {}),
  };
  let revived: Awaited<ReturnType<typeof Revival.revive>>;
  try {
    revived = await Revival.revive(options as Parameters<typeof Revival.revive>[0]);
  } catch (error) {
    return { outcome: `threw ${String(error).split('\n')[0]}`, world };
  }
  if (!revived.ok) return { outcome: `refused (${revived.reason})`, world };
  const composer = new Composer({
    registry: crashRegistry(world),
    durability: 'none',
    loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
    sleep: async () => undefined,
  });
  const started = await composer.resume({ session: revived.session, messages: revived.messages });
  const result = await started.run.result;
  await composer.idle();
  return { outcome: `revived, ran to ${result.status}`, world };
}

function effectRuns(world: World, callId = 'call_e1'): number {
  return world.executions.filter((execution) => execution.callId === callId).length;
}

/** The attack's proof that its counter counts: a call truly never dispatched is executed once. */
async function counterWorks(context: AttackContext): Promise<boolean> {
  const path = join(context.folder, 'control.jsonl');
  await writeTranscript(path, interruptedRun().slice(0, 3));
  const { world } = await reviveAndRun(path, false);
  return effectRuns(world) === 1;
}

function lastLineRange(bytes: Buffer): { start: number; end: number } {
  const end = bytes.length - 1; // the final newline
  const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
  return { start, end };
}

async function mutateAndRevive(
  context: AttackContext,
  name: string,
  cases: { label: string; mutate: (bytes: Buffer) => Buffer }[],
): Promise<Verdict> {
  if (!(await counterWorks(context)))
    return faultNotProven('the execution counter did not count a never-dispatched call');
  const original = buildTranscript(interruptedRun()).bytes;
  const replays: string[] = [];
  const outcomes = new Map<string, number>();
  let index = 0;
  for (const entry of cases) {
    if (context.signal.aborted) break;
    const mutated = entry.mutate(original);
    if (mutated.equals(original)) return faultNotProven(`${entry.label} changed nothing`);
    for (const salvage of [false, true]) {
      const path = join(context.folder, `${name}-${index++}.jsonl`);
      writeFileSync(path, mutated, { mode: 0o600 });
      const { outcome, world } = await reviveAndRun(path, salvage);
      const key = `${salvage ? 'salvage ' : ''}${outcome}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (effectRuns(world) > 0) replays.push(`${entry.label}${salvage ? ' (salvage)' : ''}`);
    }
    if (index % 200 === 0) context.progress(`${index / 2} of ${cases.length} mutations`);
  }
  return verdict(
    replays.length === 0,
    `${cases.length} mutations of the durable dispatch line × (default, salvage); the side effect ran again after ${replays.length}${replays.length > 0 ? ` (first: ${replays.slice(0, 3).join('; ')})` : ''}; outcomes ${[...outcomes].map(([key, count]) => `${key} ×${count}`).join(', ')}`,
  );
}

type Verdict = import('./support.ts').Verdict;

const bitFlip: Attack = {
  name: 'bitflip-last-dispatch',
  family: 'damage',
  what: 'one bit flipped in the last line, the durable dispatch of a side-effect tool (every bit, or a seeded sample in --quick): the tool never runs again after revive',
  run: async (context) => {
    const { start, end } = lastLineRange(buildTranscript(interruptedRun()).bytes);
    let bits = Array.from({ length: (end - start) * 8 }, (_, bit) => start * 8 + bit);
    if (context.quick) bits = bits.filter(() => context.random() < 40 / ((end - start) * 8));
    return mutateAndRevive(
      context,
      'bit',
      bits.map((bit) => ({
        label: `bit ${bit % 8} of byte ${Math.floor(bit / 8)}`,
        mutate: (bytes) => {
          const copy = Buffer.from(bytes);
          copy[Math.floor(bit / 8)] = (copy[Math.floor(bit / 8)] ?? 0) ^ (1 << (bit % 8));
          return copy;
        },
      })),
    );
  },
};

const newlineFlip: Attack = {
  name: 'bitflip-dispatch-newline',
  family: 'damage',
  what: "each bit of the durable dispatch line's newline flipped: the complete record now looks like a torn tail; the tool never runs again",
  run: async (context) => {
    const { end } = lastLineRange(buildTranscript(interruptedRun()).bytes);
    return mutateAndRevive(
      context,
      'newline',
      Array.from({ length: 8 }, (_, bit) => ({
        label: `bit ${bit} of the newline`,
        mutate: (bytes) => {
          const copy = Buffer.from(bytes);
          copy[end] = (copy[end] ?? 0) ^ (1 << bit);
          return copy;
        },
      })),
    );
  },
};

const randomDamage: Attack = {
  name: 'damaged-last-line-random',
  family: 'damage',
  what: 'seeded random overwrites (1–8 bytes) inside the durable dispatch line, its newline kept: the tool never runs again',
  run: async (context) => {
    const { start, end } = lastLineRange(buildTranscript(interruptedRun()).bytes);
    const count = context.quick ? 16 : 200;
    const cases = Array.from({ length: count }, (_, index) => {
      const edits = Array.from({ length: 1 + Math.floor(context.random() * 8) }, () => ({
        at: start + Math.floor(context.random() * (end - start)),
        value: Math.floor(context.random() * 256),
      }));
      return {
        label: `case ${index} (${edits.map((edit) => `${edit.at}=${edit.value}`).join(',')})`,
        mutate: (bytes: Buffer) => {
          const copy = Buffer.from(bytes);
          for (const edit of edits) copy[edit.at] = edit.value === 0x0a ? 0x0b : edit.value;
          if (copy.equals(bytes)) copy[start] = (copy[start] ?? 0) ^ 1;
          return copy;
        },
      };
    });
    return mutateAndRevive(context, 'random', cases);
  },
};

const rogueWriter: Attack = {
  name: 'rogue-writer-seq-collision',
  family: 'damage',
  what: 'a second, rogue writer appended well-formed records whose seqs collide with the run’s own: damaged, nothing revived, no file changed',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const bodies = interruptedRun();
    await writeTranscript(path, bodies);
    // The rogue read the file when it held two records, and appends as if it were the writer.
    const rogue: RecordBody = {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'tool-call', callId: 'call_rogue', toolName: 'effect', input: { what: 'rogue' } },
      ],
    };
    const line = encodeLine({ v: 1, seq: 2, at: '2026-01-01T00:00:09.000Z' }, rogue).bytes;
    appendFileSync(path, line);
    const read = await peek(path);
    const seqs = read.ok ? read.records.map((record) => record.seq) : [];
    const collided = !read.ok || new Set(seqs).size < seqs.length;
    if (!collided) return faultNotProven('no seq collision in the file');
    const before = readFileSync(path);
    const { outcome, world } = await reviveAndRun(path, false);
    const after = bytesOrNull(path);
    const unchanged = after !== null && before.equals(after);
    return verdict(
      !outcome.startsWith('revived') && world.executions.length === 0 && unchanged,
      `rogue line with seq 2 appended after seq ${bodies.length - 1} (peek: ${read.ok ? `seqs ${seqs.join(',')}` : read.reason}); revive ${outcome}; tools run ${world.executions.length}; file ${unchanged ? 'unchanged' : 'CHANGED'}`,
    );
  },
};

const zeros: Attack = {
  name: 'empty-and-nul-transcripts',
  family: 'damage',
  what: 'transcripts of 0 bytes, of only NULs, of NULs ending in a newline: inspect/peek never throw, revive refuses and changes no byte',
  run: async (context) => {
    const shapes: [string, Buffer][] = [
      ['empty', Buffer.alloc(0)],
      ['nul-4k', Buffer.alloc(4096)],
      ['nul-1m', Buffer.alloc(1024 * 1024)],
      ['nul-newline', Buffer.concat([Buffer.alloc(4096), Buffer.from('\n')])],
    ];
    const problems: string[] = [];
    const seen: string[] = [];
    for (const [name, bytes] of shapes) {
      const path = join(context.folder, `${name}.jsonl`);
      writeFileSync(path, bytes, { mode: 0o600 });
      try {
        const found = await Revival.inspect({ path, maxRevivals: 3 });
        const read = await peek(path);
        seen.push(`${name}: ${found.reason ?? 'revivable'}/${read.ok ? read.state : read.reason}`);
      } catch (error) {
        problems.push(`${name}: inspect/peek threw ${String(error).split('\n')[0]}`);
      }
      const { outcome, world } = await reviveAndRun(path, false);
      const after = bytesOrNull(path);
      if (outcome.startsWith('revived') || outcome.startsWith('threw'))
        problems.push(`${name}: revive ${outcome}`);
      if (after === null || !after.equals(bytes))
        problems.push(`${name}: file changed ${bytes.length}→${after?.length}`);
      if (world.executions.length > 0) problems.push(`${name}: a tool ran`);
    }
    return verdict(
      problems.length === 0,
      problems.length > 0 ? problems.slice(0, 4).join('; ') : seen.join(', '),
    );
  },
};

/** Status's state of a transcript (CLI, --json), and whether `revive --yes` revived it. */
async function bothVerdicts(
  context: AttackContext,
  path: string,
): Promise<{ state: string; revived: boolean; line: string }> {
  const status = await runCli(['status', path, '--json'], {
    cwd: context.folder,
    timeoutMs: 20_000,
  });
  let state = `no JSON (${ending(status)})`;
  let reason = '';
  try {
    const json = JSON.parse(status.stdout) as { runs: { state: string; reason?: string }[] };
    state = json.runs[0]?.state ?? 'none';
    reason = json.runs[0]?.reason ?? '';
  } catch {}
  const before = revivedCount(path);
  const revive = await runCli(['revive', path, '--yes', '--agents', AGENTS_MODULE], {
    cwd: context.folder,
    timeoutMs: 30_000,
    env: { ATTACK_LEDGER: join(context.folder, 'ledger.jsonl') },
  });
  const revived = revivedCount(path) > before;
  const said = (
    revive.stdout
      .trim()
      .split('\n')
      .find((line) => /refus|unreadable|cap|Nothing/i.test(line)) ??
    revive.stderr.trim().split('\n')[0] ??
    ''
  ).slice(0, 100);
  return {
    state,
    revived,
    line: `status ${state} (${reason}); revive ${revived ? 'revived it' : `did not (${said})`}`,
  };
}

const lyingCheckpoint: Attack = {
  name: 'lying-checkpoint',
  family: 'damage',
  what: 'a last checkpoint that lies (revivals 3 → 0), and one that hides mid-file damage before it: status and revive give the same verdict',
  run: async (context) => {
    // A run revived three times (its cap), then a checkpoint claiming no revival.
    const path = join(context.folder, 'runs', 'main.jsonl');
    const bodies: RecordBody[] = [...interruptedRun()];
    for (let ordinal = 1; ordinal <= 3; ordinal++) {
      bodies.push({
        type: 'run-revived',
        ordinal,
        maxRevivals: 3,
        afterSeq: bodies.length - 1,
        interrupted: [],
        completedUnpersisted: [],
        orphaned: [],
      });
    }
    const built = buildTranscript(bodies);
    let state = emptyTailState();
    for (const record of built.records) state = foldTailState(state, record, 0);
    const truth = state.revivals;
    const lie = tailStateToJson({ ...state, revivals: 0, revivedAfter: [] });
    const checkpoint = encodeLine(
      { v: 1, seq: bodies.length, at: '2026-01-01T00:10:00.000Z' },
      { type: 'checkpoint', state: lie },
    ).bytes;
    await writeTranscript(path, []);
    writeFileSync(path, Buffer.concat([built.bytes, checkpoint]), { mode: 0o600 });
    if (truth !== 3) return faultNotProven(`the run's true revivals are ${truth}, not 3`);
    const first = await bothVerdicts(context, path);

    // Mid-file damage (a bit flipped in the user turn) before a truthful last checkpoint.
    const hidden = join(context.folder, 'runs2', 'main.jsonl');
    const run = buildTranscript(interruptedRun());
    let honest = emptyTailState();
    for (const record of run.records) honest = foldTailState(honest, record, 0);
    const tail = encodeLine(
      { v: 1, seq: run.records.length, at: '2026-01-01T00:10:00.000Z' },
      { type: 'checkpoint', state: tailStateToJson(honest) },
    ).bytes;
    const damaged = Buffer.concat([run.bytes, tail]);
    const at = (run.offsets[1] ?? 0) + 20;
    damaged[at] = (damaged[at] ?? 0) ^ 0x04;
    await writeTranscript(hidden, []);
    writeFileSync(hidden, damaged, { mode: 0o600 });
    const second = await bothVerdicts(context, hidden);
    const agree = (entry: { state: string; revived: boolean }) =>
      (entry.state === 'revivable') === entry.revived;
    return verdict(
      agree(first) && agree(second),
      `revivals lie (true 3, checkpoint 0): ${first.line}; hidden damage: ${second.line}`,
    );
  },
};

/** The damage attacks. */
export const DAMAGE_ATTACKS: Attack[] = [
  bitFlip,
  newlineFlip,
  randomDamage,
  rogueWriter,
  zeros,
  lyingCheckpoint,
];
