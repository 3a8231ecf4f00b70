import { mkdir, open, stat, truncate, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { COMPACTION_PREFIX } from '../src/loop/compaction.ts';
import { Session } from '../src/transcript/index.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { generatedData } from './generated-data.ts';

/** Bump when the corpus changes shape, so that a reused folder is regenerated. */
const CORPUS_VERSION = 5;

/** The states a transcript of the corpus is written to be in. */
export type CorpusState =
  | 'finished'
  | 'revivable'
  | 'capped'
  | 'unreadable'
  | 'empty'
  | 'torn-revivable';

/** What a generated folder holds. */
export interface CorpusManifest {
  version: number;
  count: number;
  roots: number;
  children: number;
  bytes: number;
  largestBytes: number;
  states: Record<string, number>;
  sizes: Record<string, number>;
}

/**
 * A deterministic generator (mulberry32, shared with the tests), so that every run measures the
 * same files.
 *
 * @example
 * const next = random(42); next(); // 0 <= x < 1
 */
export const random: (seed: number) => () => number = seededRandom;

function pick<T extends string>(next: () => number, weights: Record<T, number>): T {
  const entries = Object.entries(weights) as [T, number][];
  let roll = next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [value, weight] of entries) {
    roll -= weight;
    if (roll < 0) return value;
  }
  return (entries.at(-1) as [T, number])[0];
}

const SIZE_CLASSES = {
  small: 70,
  medium: 25,
  large: 4.7,
  huge: 0.3,
};

function targetBytes(next: () => number, sizeClass: keyof typeof SIZE_CLASSES): number {
  const between = (low: number, high: number) => Math.round(low + next() * (high - low));
  switch (sizeClass) {
    case 'small':
      return between(1_000, 20_000);
    case 'medium':
      return between(20_000, 150_000);
    case 'large':
      return between(150_000, 1_500_000);
    case 'huge':
      return between(4_000_000, 8_000_000);
  }
}

const STATE_WEIGHTS: Record<CorpusState, number> = {
  finished: 55,
  revivable: 22,
  'torn-revivable': 3,
  capped: 5,
  unreadable: 7,
  empty: 8,
};

const WORDS =
  'the run read a file and found that the tests in the parser module fail on empty input so it ' +
  'patched the tokenizer and ran them again before writing a summary for the user who asked';

function prose(next: () => number, bytes: number): string {
  const start = Math.floor(next() * WORDS.length);
  let text = '';
  while (text.length < bytes) text += `${WORDS.slice(start)} ${WORDS.slice(0, start)}`;
  return text.slice(0, bytes);
}

/** Options of {@link writeTranscript}. */
export interface WriteTranscriptOptions {
  /**
   * Compact as the Loop does when its context outgrows its budget: whenever the conversation
   * since the last compaction (its turns' bytes, about) exceeds this, append a `compaction`
   * replacing everything from the first user turn up to the last turn, with a short summary.
   * Without it (the status corpus) nothing is compacted.
   */
  compactAboveBytes?: number;
}

/**
 * Write one transcript through a real Session (so it has the writer's checkpoints), grown to
 * about `bytes` with realistic turns, and left in `state`.
 *
 * @example
 * await writeTranscript('bench/data/a.jsonl', 'revivable', 100e6, random(1), { agentId: 'main' });
 */
export async function writeTranscript(
  path: string,
  state: CorpusState,
  bytes: number,
  next: () => number,
  meta: { agentId: string; parent?: { transcript: string; callId: string } },
  options: WriteTranscriptOptions = {},
): Promise<void> {
  if (state === 'unreadable' && next() < 0.4) {
    await mkdir(dirname(path), { recursive: true });
    const junk = next() < 0.5 ? '' : `{"not":"a transcript"}\n${prose(next, 300)}\n`;
    await writeFile(path, junk === '' ? 'hello\x00\x00 this is not json' : junk);
    return;
  }
  let tick = Date.UTC(2026, 0, 1);
  const clock = () => {
    tick += 1000;
    return new Date(tick);
  };
  const session = await Session.create(
    path,
    {
      agentId: meta.agentId,
      agentType: meta.parent === undefined ? 'main' : 'worker',
      label: meta.agentId,
      model: 'openai:gpt-5',
      ...(meta.parent === undefined ? {} : { parent: meta.parent }),
    },
    { durability: 'none', clock },
  );
  if (state === 'empty') {
    await session.close();
    return;
  }
  const firstUser = await session.append({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: prose(next, 200 + Math.floor(next() * 800)) }],
  });
  let written = 0;
  let step = 0;
  let uncompacted = 0;
  const callTurn = async (answer: boolean) => {
    step += 1;
    const callId = `call_${step}_${Math.floor(next() * 1e9).toString(36)}`;
    const input = { path: `src/module-${step}.ts`, note: prose(next, 40) };
    const turn = await session.append({
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'text', text: prose(next, 60 + Math.floor(next() * 300)) },
        { type: 'tool-call', callId, toolName: 'read_file', input },
      ],
    });
    await session.append({
      type: 'tool-dispatched',
      callId,
      toolName: 'read_file',
      inputDigest: `sha256:${'ab'.repeat(32)}`,
      idempotency: 'read-only',
    });
    if (!answer) return;
    const output = prose(next, 200 + Math.floor(next() * 4000));
    await session.append({
      type: 'message',
      role: 'tool',
      content: [{ type: 'tool-result', callId, toolName: 'read_file', output, isError: false }],
    });
    await session.append({ type: 'tool-settled', callId, status: 'completed' });
    written += 1280 + output.length;
    uncompacted += 1280 + output.length;
    if (options.compactAboveBytes !== undefined && uncompacted > options.compactAboveBytes) {
      // The Loop's shape: a prefix from the first user turn to a clean cut, the last turn kept.
      const summary = `${COMPACTION_PREFIX} ${prose(next, 300 + Math.floor(next() * 500))}`;
      await session.append({
        type: 'compaction',
        fromSeq: firstUser.seq,
        toSeq: turn.seq - 1,
        summary,
      });
      uncompacted = 1280 + output.length + summary.length;
    }
  };
  while (written < bytes) await callTurn(true);
  if (state === 'finished' || state === 'unreadable') {
    await session.append({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: prose(next, 400) }],
    });
  } else {
    await callTurn(false);
  }
  if (state === 'capped') {
    for (let ordinal = 1; ordinal <= 3; ordinal += 1) {
      await session.append({
        type: 'run-revived',
        ordinal,
        maxRevivals: 3,
        afterSeq: session.lastSeq,
        interrupted: [],
        completedUnpersisted: [],
        orphaned: [],
      });
    }
  }
  if (state === 'unreadable') {
    // Real damage, not a torn tail: a bad line with good ones after it, near the end where a
    // tail reader looks first.
    await session.append({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'thanks' }],
    });
  }
  if (state === 'finished') await session.close();
  else {
    // Every other state is a run whose process died: no close, so no closing checkpoint.
    await session.barrier();
    const crashedSize = (await stat(path)).size;
    await session.close();
    await truncate(path, crashedSize);
  }
  if (state === 'unreadable') {
    const size = (await stat(path)).size;
    const handle = await open(path, 'r+');
    try {
      const tail = Buffer.alloc(Math.min(size, 600));
      await handle.read(tail, 0, tail.length, size - tail.length);
      const lastBreak = tail.lastIndexOf(0x0a, tail.length - 2);
      const position = size - tail.length + Math.max(0, lastBreak - 20);
      await handle.write(Buffer.from('#'), 0, 1, position);
    } finally {
      await handle.close();
    }
  }
  if (state === 'torn-revivable') {
    const handle = await open(path, 'a');
    await handle.write('{"v":1,"seq":');
    await handle.close();
  }
}

/**
 * Make (or reuse) a folder of `count` transcripts shaped like a busy user's: 70% small, a
 * quarter medium, some of 0.15–1.5 MB and a few of 4–8 MB; children in `X.agents/` (and
 * grandchildren); finished, revivable (some with torn tails), capped, unreadable (damaged near
 * the end, or not transcripts at all) and empty runs. Deterministic for a given count.
 *
 * @example
 * const { folder, manifest } = await statusCorpus('bench/data', 10_000);
 */
export async function statusCorpus(
  dataFolder: string,
  count: number,
  log: (line: string) => void = () => undefined,
): Promise<{ folder: string; manifest: CorpusManifest; generatedMs: number }> {
  return generatedData(
    dataFolder,
    'status',
    CORPUS_VERSION,
    count,
    async (folder): Promise<CorpusManifest> => {
      const next = random(20261202 + count);
      const manifest: CorpusManifest = {
        version: CORPUS_VERSION,
        count,
        roots: 0,
        children: 0,
        bytes: 0,
        largestBytes: 0,
        states: {},
        sizes: {},
      };
      let made = 0;
      const make = async (
        path: string,
        agentId: string,
        depth: number,
        parent?: { transcript: string; callId: string },
      ) => {
        const state = pick(next, STATE_WEIGHTS);
        const sizeClass = pick(next, SIZE_CLASSES);
        const bytes = targetBytes(next, depth > 0 && sizeClass === 'huge' ? 'large' : sizeClass);
        await writeTranscript(
          path,
          state,
          bytes,
          next,
          parent === undefined ? { agentId } : { agentId, parent },
        );
        made += 1;
        const size = (await stat(path)).size;
        manifest.bytes += size;
        manifest.largestBytes = Math.max(manifest.largestBytes, size);
        manifest.states[state] = (manifest.states[state] ?? 0) + 1;
        manifest.sizes[sizeClass] = (manifest.sizes[sizeClass] ?? 0) + 1;
        if (depth === 0) manifest.roots += 1;
        else manifest.children += 1;
        if (made % 1000 === 0) log(`  status corpus: ${made}/${count} transcripts`);
        if (state === 'unreadable' || state === 'empty' || depth >= 2) return;
        const roll = next();
        const children =
          depth === 0
            ? roll < 0.6
              ? 0
              : roll < 0.85
                ? 1 + Math.floor(next() * 2)
                : 3 + Math.floor(next() * 4)
            : roll < 0.9
              ? 0
              : 1 + Math.floor(next() * 2);
        for (let index = 1; index <= children && made < count; index += 1) {
          const childId = `worker-${index}`;
          const childPath = join(path.replace(/\.jsonl$/, '.agents'), `${childId}.jsonl`);
          await make(childPath, childId, depth + 1, {
            transcript: relative(dirname(childPath), path),
            callId: `call_spawn_${index}`,
          });
        }
      };
      for (let root = 1; made < count; root += 1) {
        const project = `project-${String(root % 20).padStart(2, '0')}`;
        await make(join(folder, project, `run-${String(root).padStart(5, '0')}.jsonl`), 'main', 0);
      }
      return manifest;
    },
  );
}
