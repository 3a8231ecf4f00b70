import { copyFile, mkdir, open, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { inputDigest } from '../src/loop/input-digest.ts';
import { agentIdForSpawn } from '../src/subagents/agent-id.ts';
import { joinOutput } from '../src/subagents/join-output.ts';
import type { JsonValue, RecordBody } from '../src/transcript/records.ts';
import { Session, type SessionMeta } from '../src/transcript/session.ts';
import { abandonSession } from '../test/support/abandon-session.ts';
import { generatedData } from './generated-data.ts';
import { random } from './status-corpus.ts';

/** Bump when the tree changes shape, so that a reused folder is regenerated. */
const TREE_VERSION = 1;

/** The states a run of the tree is written to be in. */
export type UiTreeState = 'finished' | 'revivable' | 'unreadable';

/** What a generated tree holds (bench/data/ui-N.manifest.json). */
export interface UiTreeManifest {
  version: number;
  /** Runs in all, the root included. */
  count: number;
  /** The root's children, and their children (the tree is three runs deep). */
  children: number;
  grandchildren: number;
  bytes: number;
  states: Record<string, number>;
  sizes: Record<string, number>;
  /** Paths relative to the tree's folder. */
  root: string;
  largest: { path: string; bytes: number };
  /** A readable run of the median size (the 500th of 1,000 by size, or the next readable one). */
  median: { path: string; bytes: number };
  /** A small finished run of its own, outside the tree, copied in to make the page redraw. */
  extra: string;
}

/** Size classes of the status corpus (bench/status-corpus.ts), weighted a little heavier. */
const SIZE_CLASSES = { small: 62, medium: 30, large: 7, huge: 1 };

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

function pick<T extends string>(next: () => number, weights: Record<T, number>): T {
  const entries = Object.entries(weights) as [T, number][];
  let roll = next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [value, weight] of entries) {
    roll -= weight;
    if (roll < 0) return value;
  }
  return (entries.at(-1) as [T, number])[0];
}

const WORDS =
  'the run read a file and found that the tests in the parser module fail on empty input so it ' +
  'patched the tokenizer and ran them again before writing a summary for the user who asked';

function prose(next: () => number, bytes: number): string {
  const start = Math.floor(next() * WORDS.length);
  let text = '';
  while (text.length < bytes) text += `${WORDS.slice(start)} ${WORDS.slice(0, start)}`;
  return text.slice(0, bytes);
}

function callId(next: () => number): string {
  let id = 'call_';
  for (let index = 0; index < 12; index += 1) id += Math.floor(next() * 36).toString(36);
  return id;
}

/** One run of the tree as planned, before it is written. */
interface PlannedRun {
  path: string;
  agentId: string;
  agentType: string;
  label: string;
  task: string;
  answer: string;
  parent?: { path: string; callId: string };
  state: UiTreeState;
  sizeClass: keyof typeof SIZE_CLASSES;
  bytes: number;
  /** Its children, in the batches it spawned them in; the last batch `open` when it died waiting. */
  batches: { children: PlannedRun[]; open: boolean }[];
  seed: number;
}

const AGENT_TYPES = ['researcher', 'coder', 'reviewer', 'tester'];
/** The root's children: the last of them still running when the process died. */
const ROOT_CHILDREN = 300;
const ROOT_BATCH = 10;
const IN_FLIGHT = 60;
const CHILD_BATCH = 4;

/**
 * The tree's shape, states and sizes, drawn from one seed: a root (`main.jsonl`) that spawned
 * {@link ROOT_CHILDREN} workers ten at a time and joined each batch, and died waiting on its
 * last {@link IN_FLIGHT} (one open `task_wait` naming them); about a third of its workers
 * spawned workers of their own (`main.agents/X.agents/`). A run still running when the process
 * died is revivable (a `read_file` in flight, or a `task_wait` on its own last batch); one that
 * had ended is finished, or, for a few, damaged since (unreadable).
 */
function planTree(folder: string, count: number, next: () => number): PlannedRun[] {
  const all: PlannedRun[] = [];
  const make = (
    path: string,
    agentType: string,
    agentId: string,
    label: string,
    state: UiTreeState,
    parent?: { path: string; callId: string },
  ): PlannedRun => {
    const sizeClass = parent === undefined ? 'huge' : pick(next, SIZE_CLASSES);
    const run: PlannedRun = {
      path,
      agentId,
      agentType,
      label,
      task: prose(next, 80 + Math.floor(next() * 300)),
      answer: prose(next, 60 + Math.floor(next() * 240)),
      state,
      sizeClass,
      bytes: targetBytes(next, sizeClass),
      batches: [],
      seed: Math.floor(next() * 2 ** 31),
    };
    if (parent !== undefined) run.parent = parent;
    all.push(run);
    return run;
  };
  const spawn = (parent: PlannedRun, state: UiTreeState, index: number): PlannedRun => {
    const agentType = AGENT_TYPES[Math.floor(next() * AGENT_TYPES.length)] as string;
    const id = callId(next);
    const agentId = agentIdForSpawn({ agentType, callId: id, parentAgentId: parent.agentId });
    return make(
      join(parent.path.replace(/\.jsonl$/, '.agents'), `${agentId}.jsonl`),
      agentType,
      agentId,
      `${agentType} ${index}`,
      state,
      { path: parent.path, callId: id },
    );
  };
  const ended = (): UiTreeState => (next() < 0.95 ? 'finished' : 'unreadable');
  const root = make(
    join(folder, 'main.jsonl'),
    'main',
    'main',
    'Audit the repository',
    'revivable',
  );
  const children: PlannedRun[] = [];
  for (let index = 1; index <= ROOT_CHILDREN; index += 1) {
    const inFlight = index > ROOT_CHILDREN - IN_FLIGHT;
    children.push(
      spawn(root, inFlight ? (next() < 0.8 ? 'revivable' : 'finished') : ended(), index),
    );
  }
  for (let start = 0; start < children.length; start += ROOT_BATCH) {
    root.batches.push({
      children: children.slice(start, start + ROOT_BATCH),
      open: start >= ROOT_CHILDREN - IN_FLIGHT,
    });
  }
  // Which workers spawned workers, and how many each: the rest of `count`, spread at random.
  const parents = children.filter((child) => child.state !== 'unreadable' && next() < 0.3);
  const counts = new Map<PlannedRun, number>();
  for (let left = count - 1 - ROOT_CHILDREN; left > 0; left -= 1) {
    const parent = parents[Math.floor(next() * parents.length)] as PlannedRun;
    counts.set(parent, (counts.get(parent) ?? 0) + 1);
  }
  for (const parent of parents) {
    const total = counts.get(parent) ?? 0;
    const grandchildren: PlannedRun[] = [];
    for (let index = 1; index <= total; index += 1) {
      // A revivable worker died waiting on its last batch: those were still running.
      const inLastBatch = index > Math.floor((total - 1) / CHILD_BATCH) * CHILD_BATCH;
      const state =
        parent.state === 'revivable' && inLastBatch
          ? next() < 0.75
            ? 'revivable'
            : 'finished'
          : next() < 0.96
            ? 'finished'
            : 'unreadable';
      grandchildren.push(spawn(parent, state, index));
    }
    for (let start = 0; start < grandchildren.length; start += CHILD_BATCH) {
      parent.batches.push({
        children: grandchildren.slice(start, start + CHILD_BATCH),
        open: parent.state === 'revivable' && start + CHILD_BATCH >= grandchildren.length,
      });
    }
  }
  return all;
}

function text(value: string): { type: 'text'; text: string } {
  return { type: 'text', text: value };
}

/**
 * Write one planned run through a real Session: its task, `read_file` turns up to its size,
 * its spawns and joins, and its ending — closed when finished, abandoned (as a killed process
 * leaves it) when revivable, damaged near the end when unreadable.
 */
async function writeRun(run: PlannedRun): Promise<void> {
  const next = random(run.seed);
  if (run.state === 'unreadable' && next() < 0.3) {
    await mkdir(dirname(run.path), { recursive: true });
    await writeFile(run.path, `{"not":"a transcript"}\n${prose(next, 300)}\n`);
    return;
  }
  let tick = Date.UTC(2026, 0, 1) + Math.floor(next() * 86_400_000);
  const clock = () => {
    tick += 1000;
    return new Date(tick);
  };
  const meta: SessionMeta = {
    agentId: run.agentId,
    agentType: run.agentType,
    label: run.label,
    model: 'openai:gpt-5',
  };
  if (run.parent !== undefined) {
    meta.parent = {
      transcript: relative(dirname(run.path), run.parent.path),
      callId: run.parent.callId,
    };
  }
  const session = await Session.create(run.path, meta, { durability: 'none', clock });
  const append = (body: RecordBody) => session.append(body);
  const call = async (toolName: string, input: JsonValue, joins?: string[]): Promise<string> => {
    const id = callId(next);
    await append({
      type: 'message',
      role: 'assistant',
      content: [
        text(prose(next, 60 + Math.floor(next() * 300))),
        { type: 'tool-call', callId: id, toolName, input },
      ],
    });
    await append({
      type: 'tool-dispatched',
      callId: id,
      toolName,
      inputDigest: inputDigest(input),
      idempotency: 'read-only',
      ...(joins === undefined ? {} : { joins }),
    });
    return id;
  };
  const settle = async (id: string, toolName: string, output: JsonValue) => {
    await append({
      type: 'message',
      role: 'tool',
      content: [{ type: 'tool-result', callId: id, toolName, output, isError: false }],
    });
    await append({ type: 'tool-settled', callId: id, status: 'completed' });
  };
  let written = 0;
  const readFiles = async (upTo: number) => {
    while (written < upTo) {
      const id = await call('read_file', { path: `src/module-${written % 97}.ts` });
      const output = prose(next, 200 + Math.floor(next() * 4000));
      await settle(id, 'read_file', output);
      written += 1000 + output.length;
    }
  };
  await append({ type: 'message', role: 'user', content: [text(run.task)] });
  const share = run.bytes / (run.batches.length + 1);
  let lastOpen: string[] | undefined;
  for (const [index, batch] of run.batches.entries()) {
    await readFiles(share * (index + 1));
    const spawns = batch.children.map((child) => ({
      child,
      input: { agentType: child.agentType, task: child.task, label: child.label },
    }));
    await append({
      type: 'message',
      role: 'assistant',
      content: [
        text(prose(next, 80)),
        ...spawns.map(({ child, input }) => ({
          type: 'tool-call' as const,
          callId: child.parent?.callId as string,
          toolName: 'spawn_agent',
          input,
        })),
      ],
    });
    for (const { child, input } of spawns) {
      await append({
        type: 'tool-dispatched',
        callId: child.parent?.callId as string,
        toolName: 'spawn_agent',
        inputDigest: inputDigest(input),
        idempotency: 'side-effect',
      });
    }
    for (const { child } of spawns) {
      await settle(child.parent?.callId as string, 'spawn_agent', {
        agentId: child.agentId,
        status: 'running',
      });
    }
    if (batch.open) {
      lastOpen = [...(lastOpen ?? []), ...batch.children.map((child) => child.agentId)];
      continue;
    }
    const agentIds = batch.children.map((child) => child.agentId);
    const id = await call('task_wait', { agentIds }, agentIds);
    const joined = joinOutput(
      batch.children.map((child) => ({
        agentId: child.agentId,
        outcome: { status: 'finished' as const, answer: child.answer },
      })),
      [],
    );
    await settle(id, 'task_wait', joined.output);
  }
  await readFiles(run.bytes);
  if (run.state === 'revivable') {
    if (lastOpen === undefined) await call('read_file', { path: 'src/last.ts' });
    else await call('task_wait', { agentIds: lastOpen }, lastOpen);
    await abandonSession(session);
    return;
  }
  await append({ type: 'message', role: 'assistant', content: [text(run.answer)] });
  if (run.state === 'finished') {
    await session.close();
    return;
  }
  // Unreadable: real damage near the end, where a tail reader looks first, good lines after it.
  await append({ type: 'message', role: 'user', content: [text('thanks')] });
  await session.close();
  const size = (await stat(run.path)).size;
  const handle = await open(run.path, 'r+');
  try {
    const tail = Buffer.alloc(Math.min(size, 600));
    await handle.read(tail, 0, tail.length, size - tail.length);
    const lastBreak = tail.lastIndexOf(0x0a, tail.length - 2);
    await handle.write(Buffer.from('#'), 0, 1, size - tail.length + Math.max(0, lastBreak - 20));
  } finally {
    await handle.close();
  }
}

/**
 * Make (or reuse) a run tree of `count` runs in `DATA/ui-COUNT/` (see {@link planTree}), and a
 * small finished run beside it (`ui-COUNT.extra.jsonl`) that the bench copies into the tree to
 * make the page redraw. Deterministic for a given count.
 *
 * @example
 * const { folder, manifest } = await uiTree('bench/data', 1000);
 */
export async function uiTree(
  dataFolder: string,
  count: number,
  log: (line: string) => void = () => undefined,
): Promise<{ folder: string; manifest: UiTreeManifest; generatedMs: number }> {
  return generatedData(
    dataFolder,
    'ui',
    TREE_VERSION,
    count,
    async (folder): Promise<UiTreeManifest> => {
      const runs = planTree(folder, count, random(20261210 + count));
      const sizes: { path: string; bytes: number; state: UiTreeState }[] = [];
      const manifest: UiTreeManifest = {
        version: TREE_VERSION,
        count: runs.length,
        children: 0,
        grandchildren: 0,
        bytes: 0,
        states: {},
        sizes: {},
        root: 'main.jsonl',
        largest: { path: '', bytes: 0 },
        median: { path: '', bytes: 0 },
        extra: `ui-${count}.extra.jsonl`,
      };
      for (const [index, run] of runs.entries()) {
        await writeRun(run);
        const bytes = (await stat(run.path)).size;
        const path = relative(folder, run.path);
        sizes.push({ path, bytes, state: run.state });
        manifest.bytes += bytes;
        manifest.states[run.state] = (manifest.states[run.state] ?? 0) + 1;
        manifest.sizes[run.sizeClass] = (manifest.sizes[run.sizeClass] ?? 0) + 1;
        const depth = path.split('.agents/').length - 1;
        if (depth === 1) manifest.children += 1;
        if (depth === 2) manifest.grandchildren += 1;
        if (bytes > manifest.largest.bytes) manifest.largest = { path, bytes };
        if ((index + 1) % 200 === 0) log(`  ui tree: ${index + 1}/${runs.length} runs`);
      }
      const bySize = [...sizes].sort((a, b) => a.bytes - b.bytes);
      const median =
        bySize.slice(Math.floor(bySize.length / 2)).find((run) => run.state !== 'unreadable') ??
        (bySize[0] as { path: string; bytes: number });
      manifest.median = { path: median.path, bytes: median.bytes };
      // The run copied in to make the page redraw: small, finished, a root of its own.
      const extra: PlannedRun = {
        path: join(dataFolder, manifest.extra),
        agentId: 'late',
        agentType: 'main',
        label: 'A late run',
        task: 'Say hello',
        answer: 'hello',
        state: 'finished',
        sizeClass: 'small',
        bytes: 4000,
        batches: [],
        seed: 7,
      };
      await rm(extra.path, { force: true });
      await writeRun(extra);
      return manifest;
    },
  );
}

/**
 * Copy the tree's extra run into it as `name` (a new root run), for a redraw.
 *
 * @example
 * await addExtraRun('bench/data', manifest, 'bench/data/ui-1000/late-1.jsonl');
 */
export function addExtraRun(
  dataFolder: string,
  manifest: UiTreeManifest,
  path: string,
): Promise<void> {
  return copyFile(join(dataFolder, manifest.extra), path);
}
