import { type ChildProcess, fork, spawn } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputDigest } from '../src/loop/input-digest.ts';
import type { JsonValue, RecordBody } from '../src/transcript/records.ts';
import { Session } from '../src/transcript/session.ts';
import { buildTranscript, metaBody } from '../test/support/transcripts.ts';

/*
 * What every attack shares: the shape of an attack and of its verdict, bounded child processes
 * (a wall-clock limit and an RSS limit, both enforced by killing the child), the CLI run as a
 * real process, crashed transcripts built byte for byte, and a live writer in another process.
 */

/** The repository root. */
export const REPO = fileURLToPath(new URL('../', import.meta.url));
/** The CLI entry point, run with the Node that runs this program. */
export const CLI = join(REPO, 'src/cli/main.ts');
/** The `--agents` module of the attacks (scripted models, a ledger-counted side effect). */
export const AGENTS_MODULE = join(REPO, 'attack/agents-module.ts');

/** An attack's verdict: the defence held or broke, with one line of evidence. */
export interface Verdict {
  held: boolean;
  evidence: string;
}

/** What an attack is given. */
export interface AttackContext {
  /** Seeded: the same seed replays the same choices. */
  random: () => number;
  quick: boolean;
  /** A fresh folder, removed after the attack. */
  folder: string;
  /** A progress line for anything longer than a few seconds. */
  progress: (line: string) => void;
  /** Aborted when the attack ran past its time limit: loops stop starting new rounds. */
  signal: AbortSignal;
}

/** One attack: a stable name (docs/security.md refers to it), its family, and its run. */
export interface Attack {
  name: string;
  family: string;
  /** What it does, one line. */
  what: string;
  /** Wall-clock limit of the whole attack; past it the attack is broken (it hung). */
  timeoutMs?: number;
  /** Measures memory or writes hundreds of MB: run when no other attack runs. */
  alone?: boolean;
  /**
   * Only in the full suite, not in `--quick` (the form `npm test` runs): too slow for it, or
   * its defence is still being built on another branch (`awaits` names it).
   */
  full?: boolean;
  /** The branch whose fix this attack checks, while that fix is not merged. */
  awaits?: string;
  run(context: AttackContext): Promise<Verdict>;
}

/** A verdict in one call. */
export function verdict(held: boolean, evidence: string): Verdict {
  return { held, evidence };
}

/** The attack could not make its fault happen: it proves nothing, so it counts as broken. */
export function faultNotProven(what: string): Verdict {
  return { held: false, evidence: `fault not proven: ${what}` };
}

/** A fresh temporary folder. */
export function temporaryFolder(prefix = 'llm-agent-attack-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Remove a folder and everything in it. */
export function removeFolder(path: string): Promise<void> {
  return rm(path, { recursive: true, force: true });
}

/** lstat, or null when nothing is at the path. */
export function lstatOrNull(path: string): import('node:fs').Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A file's bytes, or null when it cannot be read. */
export function bytesOrNull(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/** What a bounded child process left. */
export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Killed because it ran past its time limit. */
  timedOut: boolean;
  /** Killed because its RSS passed its limit. */
  overMemory: boolean;
  /** The highest RSS seen (VmHWM, sampled every 25 ms), in MB. */
  peakRssMb: number;
  ms: number;
}

function highWaterMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

/**
 * Run a Node process (`args` after the Node binary) bounded in time and memory: it is killed
 * (SIGKILL) past `timeoutMs` or when its RSS passes `rssLimitMb`.
 *
 * @example
 * const outcome = await runBounded([CLI, 'status', path], { cwd: folder, timeoutMs: 5000 });
 */
export function runBounded(
  args: string[],
  options: {
    cwd: string;
    timeoutMs: number;
    rssLimitMb?: number;
    env?: Record<string, string>;
    input?: string;
    /** A shell command prefix run before Node (e.g. `umask 000;`). */
    shellPrefix?: string;
  },
): Promise<ChildOutcome> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  delete env.LLM_AGENT_DEBUG;
  Object.assign(env, options.env ?? {});
  const began = performance.now();
  return new Promise((done, fail) => {
    const child =
      options.shellPrefix === undefined
        ? spawn(process.execPath, args, { cwd: options.cwd, env, stdio: 'pipe' })
        : spawn(
            '/bin/sh',
            [
              '-c',
              `${options.shellPrefix} exec "$0" "$@"`,
              process.execPath,
              ...args.map((arg) => arg),
            ],
            { cwd: options.cwd, env, stdio: 'pipe' },
          );
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let overMemory = false;
    let peak = 0;
    const cap = 4 * 1024 * 1024;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < cap) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < cap) stderr += chunk;
    });
    const sampler = setInterval(() => {
      if (child.pid === undefined) return;
      peak = Math.max(peak, highWaterMb(child.pid));
      if (options.rssLimitMb !== undefined && peak > options.rssLimitMb && !overMemory) {
        overMemory = true;
        child.kill('SIGKILL');
      }
    }, 25);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearInterval(sampler);
      clearTimeout(timer);
      fail(error);
    });
    child.on('close', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(timer);
      done({
        code,
        signal,
        stdout,
        stderr,
        timedOut,
        overMemory,
        peakRssMb: Math.round(peak),
        ms: Math.round(performance.now() - began),
      });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Run `llm-agent …args` as a real process, bounded (default 30 s, no memory limit).
 *
 * @example
 * const result = await runCli(['status', 'runs', '--json'], { cwd: folder });
 */
export function runCli(
  args: string[],
  options: { cwd: string; timeoutMs?: number; rssLimitMb?: number; env?: Record<string, string> },
): Promise<ChildOutcome> {
  return runBounded([CLI, ...args], { ...options, timeoutMs: options.timeoutMs ?? 30_000 });
}

/** One line of a child's output for evidence: the first line of stderr, or of stdout. */
export function firstLine(outcome: ChildOutcome): string {
  const text = outcome.stderr.trim() || outcome.stdout.trim();
  return (text.split('\n')[0] ?? '').slice(0, 160);
}

/** How a child ended, in a few words. */
export function ending(outcome: ChildOutcome): string {
  if (outcome.timedOut) return `killed after ${outcome.ms} ms (time limit)`;
  if (outcome.overMemory) return `killed at ${outcome.peakRssMb} MB RSS (memory limit)`;
  return `exit ${outcome.code ?? outcome.signal} in ${outcome.ms} ms, peak ${outcome.peakRssMb} MB`;
}

/** Whether a child's output shows an internal error or a stack trace. */
export function crashed(outcome: ChildOutcome): boolean {
  const text = `${outcome.stdout}\n${outcome.stderr}`;
  return (
    /internal error|Maximum call stack|heap out of memory|FATAL ERROR/i.test(text) ||
    /\n\s+at .+[:(]\d/.test(text) ||
    outcome.signal !== null
  );
}

// --- Transcripts ----------------------------------------------------------------------------

/** A tool call's parts: the assistant's call and its durable dispatch. */
export function callBodies(
  callId: string,
  toolName: string,
  input: JsonValue,
  idempotency: 'side-effect' | 'read-only' = 'side-effect',
  joins?: string[],
): { call: RecordBody; dispatch: RecordBody } {
  return {
    call: {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId, toolName, input }],
    },
    dispatch: {
      type: 'tool-dispatched',
      callId,
      toolName,
      inputDigest: inputDigest(input),
      idempotency,
      ...(joins === undefined ? {} : { joins }),
    },
  };
}

/**
 * The bodies of a `main` run (the attacks' agents module) killed while its side-effect call
 * `effect {what}` ran: the dispatch is the last, durable line.
 */
export function interruptedRun(
  options: {
    agentId?: string;
    agentType?: string;
    label?: string;
    callId?: string;
    what?: string;
    task?: string;
    parent?: { transcript: string; callId: string };
  } = {},
): RecordBody[] {
  const agentId = options.agentId ?? 'main';
  const meta = metaBody(agentId) as RecordBody & Record<string, unknown>;
  const { call, dispatch } = callBodies(options.callId ?? 'call_e1', 'effect', {
    what: options.what ?? 'p1',
  });
  return [
    {
      ...meta,
      agentType: options.agentType ?? 'main',
      label: options.label ?? agentId,
      model: 'attack:scripted',
      ...(options.parent === undefined ? {} : { parent: options.parent }),
    } as RecordBody,
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: options.task ?? 'plan:parallel' }],
    },
    call,
    dispatch,
  ];
}

/** Write records as a Session writes them (mode 0600, folders made). Returns the bytes. */
export async function writeTranscript(path: string, bodies: RecordBody[]): Promise<Buffer> {
  const built = buildTranscript(bodies);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, built.bytes, { mode: 0o600 });
  return built.bytes;
}

/** How many lines of a ledger file there are whose JSON has `what` (0 when absent). */
export function ledgerCount(path: string, what?: string): number {
  const text = bytesOrNull(path)?.toString('utf8') ?? '';
  return text
    .split('\n')
    .filter((line) => line !== '')
    .filter((line) => what === undefined || (JSON.parse(line) as { what?: string }).what === what)
    .length;
}

/** How many `run-revived` records a transcript's raw text holds (counted on the bytes). */
export function revivedCount(path: string): number {
  const text = bytesOrNull(path)?.toString('utf8') ?? '';
  return (text.match(/"type":"run-revived"/g) ?? []).length;
}

// --- A live writer in another process -------------------------------------------------------

/** A reply of the live writer (attack/live-writer.ts). */
export interface WriterReply {
  ok: boolean;
  code?: string;
  message?: string;
  lastSeq?: number;
}

/** Open a transcript for writing and close it: `ok` when that worked, else why it was refused. */
export async function openOutcome(path: string, ok: string): Promise<string> {
  try {
    const session = await Session.open(path);
    await session.close();
    return ok;
  } catch (error) {
    return `refused (${String(error).split('\n')[0]?.slice(0, 80)})`;
  }
}

/** A process holding a Session open, driven over IPC. */
export interface LiveWriter {
  readonly pid: number;
  /** `open` (an existing transcript), `append` (one record + barrier), `close`. */
  send(command: {
    op: 'open' | 'append' | 'close';
    path?: string;
    text?: string;
  }): Promise<WriterReply>;
  kill(): void;
}

/**
 * Start a live writer process.
 *
 * @example
 * const writer = await startLiveWriter();
 * await writer.send({ op: 'open', path });
 */
export async function startLiveWriter(): Promise<LiveWriter> {
  const child: ChildProcess = fork(join(REPO, 'attack/live-writer.ts'), [], {
    execPath: process.execPath,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let next = 1;
  const waiting = new Map<number, (reply: WriterReply) => void>();
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message: { id: number } & WriterReply) => {
      if (message.id === 0) resolve();
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    });
    child.once('exit', (code) => {
      for (const resolveReply of waiting.values())
        resolveReply({ ok: false, code: 'exited', message: `the writer exited (${code})` });
      waiting.clear();
      reject(new Error(`the live writer exited (${code})`));
    });
  });
  ready.catch(() => undefined);
  await ready;
  return {
    pid: child.pid ?? -1,
    send(command) {
      const id = next++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve({ ok: false, code: 'timeout', message: 'no reply within 10 s' });
        }, 10_000);
        waiting.set(id, (reply) => {
          clearTimeout(timer);
          resolve(reply);
        });
        child.send({ id, ...command });
      });
    },
    kill() {
      child.kill('SIGKILL');
    },
  };
}

/** Run `body` with a live writer, always killed at the end. */
export async function withLiveWriter<T>(body: (writer: LiveWriter) => Promise<T>): Promise<T> {
  const writer = await startLiveWriter();
  try {
    return await body(writer);
  } finally {
    writer.kill();
  }
}

/** Sleep. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Terminal-unsafe characters in text: C0 (but \n, \t), DEL, C1, and bidi controls. */
export function unsafeCharacters(text: string): string[] {
  const found: string[] = [];
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    const unsafe =
      (code < 0x20 && code !== 0x0a && code !== 0x09) ||
      (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069) ||
      code === 0x200e ||
      code === 0x200f ||
      code === 0x061c;
    if (unsafe) found.push(`U+${code.toString(16).padStart(4, '0')}`);
  }
  return found;
}

/**
 * The bodies of a parent (agent type `main`, task `plan:tree`) that spawned `children` and was
 * killed while its `task_wait` on all of them was pending.
 */
export function waitingParent(
  children: { callId: string; agentId: string; task: string }[],
  options: {
    agentId?: string;
    agentType?: string;
    joinCallId?: string;
    task?: string;
    parent?: { transcript: string; callId: string };
  } = {},
): RecordBody[] {
  const agentId = options.agentId ?? 'main';
  const joinCallId = options.joinCallId ?? 'call_w';
  const meta = metaBody(agentId) as RecordBody & Record<string, unknown>;
  const bodies: RecordBody[] = [
    {
      ...meta,
      agentType: options.agentType ?? 'main',
      label: agentId,
      model: 'attack:scripted',
      ...(options.parent === undefined ? {} : { parent: options.parent }),
    } as RecordBody,
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: options.task ?? 'plan:tree' }],
    },
    {
      type: 'message',
      role: 'assistant',
      content: children.map((child) => ({
        type: 'tool-call' as const,
        callId: child.callId,
        toolName: 'spawn_agent',
        input: { agentType: 'worker', task: child.task, label: child.task },
      })),
    },
  ];
  for (const child of children) {
    bodies.push(
      callBodies(child.callId, 'spawn_agent', {
        agentType: 'worker',
        task: child.task,
        label: child.task,
      }).dispatch,
    );
  }
  for (const child of children) {
    bodies.push(
      {
        type: 'message',
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: child.callId,
            toolName: 'spawn_agent',
            output: { agentId: child.agentId, status: 'running' },
            isError: false,
          },
        ],
      },
      { type: 'tool-settled', callId: child.callId, status: 'completed' },
    );
  }
  const ids = children.map((child) => child.agentId);
  const wait = callBodies(joinCallId, 'task_wait', { agentIds: ids }, 'read-only', ids);
  bodies.push(wait.call, wait.dispatch);
  return bodies;
}

// --- PostgreSQL -----------------------------------------------------------------------------

let sharedDatabase: Promise<import('../test/support/postgres.ts').TestDatabase> | undefined;
/** Cleanups main.ts runs before it exits (a database's schemas, a server it started). */
export const atEnd: (() => Promise<void>)[] = [];

/**
 * A fresh, migrated schema on the attacks' PostgreSQL (DATABASE_URL, or a throw-away server
 * started once and shared), and its URL.
 *
 * @example
 * const { url, schema } = await attackSchema();
 */
export async function attackSchema(): Promise<{ url: string; schema: string }> {
  if (sharedDatabase === undefined) {
    const { testDatabase } = await import('../test/support/postgres.ts');
    sharedDatabase = testDatabase();
    const database = await sharedDatabase;
    atEnd.push(() => database.stop());
  }
  const database = await sharedDatabase;
  const schema = await database.newSchema();
  const { PostgresStore } = await import('../src/store/postgres/postgres-store.ts');
  await PostgresStore.migrate({ connectionString: database.url, schema });
  return { url: database.url, schema };
}

/** One query on its own connection. */
export async function sqlQuery<Row extends Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}
