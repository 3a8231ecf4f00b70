/**
 * Helpers for the CLI's end-to-end tests: run `llm-agent` as a real process, and lay out a
 * small tree of transcripts in the states the CLI must show.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputDigest } from '../../../src/loop/input-digest.ts';
import type { JsonValue, Message, RecordBody } from '../../../src/transcript/records.ts';
import { Session, type SessionMeta } from '../../../src/transcript/session.ts';
import { abandonSession } from '../../support/abandon-session.ts';

/** The repository root. */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const NODE = join(REPO, 'node_modules/.bin/node');
const MAIN = join(REPO, 'src/cli/main.ts');

/** What a finished `llm-agent` process left. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `llm-agent ...args` as a real process (stdin is a pipe, never a terminal). The colour
 * variables of the test's own environment are removed; `env` adds to what is left.
 */
export function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; input?: string },
): Promise<CliResult> {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  delete env.LLM_AGENT_DEBUG;
  // As a user runs it from PATH, whatever npm script runs the tests (the hints say `llm-agent`).
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  Object.assign(env, options.env ?? {});
  return new Promise((done, fail) => {
    const child = spawn(NODE, [MAIN, ...args], { cwd: options.cwd, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A fresh temporary folder. */
export function temporaryFolder(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'llm-agent-cli-test-'));
}

/** True when text holds a JavaScript stack trace. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+[:(]/.test(text) || /^\s+at /m.test(text);
}

function text(value: string): Message['content'][number] {
  return { type: 'text', text: value };
}

/**
 * Write a run's transcript. `ending`: `close` for a run that ended (a finished run's host
 * closes its session, which adds the closing checkpoint); `die` for one whose process was
 * killed after its last record.
 */
async function write(
  path: string,
  meta: SessionMeta,
  bodies: RecordBody[],
  ending: 'close' | 'die',
): Promise<void> {
  const session = await Session.create(path, meta, { durability: 'none' });
  for (const body of bodies) await session.append(body);
  if (ending === 'close') await session.close();
  else await abandonSession(session);
}

function call(callId: string, toolName: string, input: JsonValue): Message['content'][number] {
  return { type: 'tool-call', callId, toolName, input };
}

function dispatch(
  callId: string,
  toolName: string,
  input: JsonValue,
  joins?: string[],
): RecordBody {
  return {
    type: 'tool-dispatched',
    callId,
    toolName,
    inputDigest: inputDigest(input),
    idempotency:
      toolName === 'write_file' || toolName === 'spawn_agent' ? 'side-effect' : 'read-only',
    ...(joins === undefined ? {} : { joins }),
  };
}

function result(callId: string, toolName: string, output: JsonValue): RecordBody {
  return {
    type: 'message',
    role: 'tool',
    content: [{ type: 'tool-result', callId, toolName, output, isError: false }],
  };
}

/** The ids of the fixture's runs. */
export const FIXTURE = {
  root: 'main',
  finishedChild: 'worker-call_s1',
  interruptedChild: 'worker-call_s2',
  joinCall: 'call_w',
  writeCall: 'call_x',
} as const;

/**
 * Lay out, below `folder`:
 * - `runs/main.jsonl`: a parent that spawned two workers and is waiting on both (an open
 *   `task_wait`): revivable;
 * - `runs/main.agents/worker-call_s1.jsonl`: a child that finished ("answer A");
 * - `runs/main.agents/worker-call_s2.jsonl`: a child whose `write_file` was in flight;
 * - `other/broken.jsonl`: not a transcript (unreadable);
 * - `other/empty.jsonl`: only a `session-meta` (empty);
 * - `other/noticed.jsonl`: a finished run whose conversation holds a background delivery.
 */
export async function writeFixtureTree(folder: string): Promise<void> {
  const runs = join(folder, 'runs');
  const spawnA = { agentType: 'worker', task: 'Task A', label: 'A' };
  const spawnB = { agentType: 'worker', task: 'Task B', label: 'B' };
  const wait = { agentIds: [FIXTURE.finishedChild, FIXTURE.interruptedChild] };
  await write(
    join(runs, 'main.jsonl'),
    { agentId: 'main', agentType: 'main', label: 'Main run', model: 'test:none' },
    [
      { type: 'message', role: 'user', content: [text('Do the thing')] },
      {
        type: 'message',
        role: 'assistant',
        content: [call('call_s1', 'spawn_agent', spawnA), call('call_s2', 'spawn_agent', spawnB)],
      },
      dispatch('call_s1', 'spawn_agent', spawnA),
      dispatch('call_s2', 'spawn_agent', spawnB),
      result('call_s1', 'spawn_agent', { agentId: FIXTURE.finishedChild, status: 'running' }),
      { type: 'tool-settled', callId: 'call_s1', status: 'completed' },
      result('call_s2', 'spawn_agent', { agentId: FIXTURE.interruptedChild, status: 'running' }),
      { type: 'tool-settled', callId: 'call_s2', status: 'completed' },
      { type: 'message', role: 'assistant', content: [call(FIXTURE.joinCall, 'task_wait', wait)] },
      dispatch(FIXTURE.joinCall, 'task_wait', wait, wait.agentIds),
    ],
    'die',
  );
  const parent = { transcript: '../main.jsonl' };
  await write(
    join(runs, 'main.agents', `${FIXTURE.finishedChild}.jsonl`),
    {
      agentId: FIXTURE.finishedChild,
      agentType: 'worker',
      label: 'A',
      model: 'test:none',
      parent: { ...parent, callId: 'call_s1' },
    },
    [
      { type: 'message', role: 'user', content: [text('Task A')] },
      { type: 'message', role: 'assistant', content: [text('answer A')] },
    ],
    'close',
  );
  const writeInput = { path: 'b.txt', content: 'B' };
  await write(
    join(runs, 'main.agents', `${FIXTURE.interruptedChild}.jsonl`),
    {
      agentId: FIXTURE.interruptedChild,
      agentType: 'worker',
      label: 'B',
      model: 'test:none',
      parent: { ...parent, callId: 'call_s2' },
    },
    [
      { type: 'message', role: 'user', content: [text('Task B')] },
      {
        type: 'message',
        role: 'assistant',
        content: [text('Writing b.txt'), call(FIXTURE.writeCall, 'write_file', writeInput)],
      },
      dispatch(FIXTURE.writeCall, 'write_file', writeInput),
    ],
    'die',
  );
  const other = join(folder, 'other');
  await mkdir(other, { recursive: true });
  await writeFile(join(other, 'broken.jsonl'), 'this is not a transcript\n');
  await write(
    join(other, 'empty.jsonl'),
    { agentId: 'empty', agentType: 'main', label: 'Empty', model: 'test:none' },
    [],
    'close',
  );
  await write(
    join(other, 'noticed.jsonl'),
    { agentId: 'noticed', agentType: 'main', label: 'Noticed', model: 'test:none' },
    [
      { type: 'message', role: 'user', content: [text('Wait for news')] },
      {
        type: 'message',
        role: 'user',
        content: [text('[background event] A child has finished.')],
        extras: { injected: 'background' },
      },
      { type: 'message', role: 'assistant', content: [text('Noted.')] },
    ],
    'close',
  );
}

/**
 * An `--agents` module for the fixture, in `folder/agents.ts`: scripted models (no network)
 * for `main` (after its join: "main done: " and the join's output), `worker` (after an
 * interrupted call: "B checked after the interruption"), `solo` ("hello from solo"), `keyed`
 * (an `openai:` spec, which needs OPENAI_API_KEY) and `slow` (a `wait` tool that ends only
 * when the run is aborted).
 */
export async function writeFixtureAgents(folder: string): Promise<string> {
  const path = join(folder, 'agents.ts');
  const scripted = join(REPO, 'src/demo/prompt-model.ts');
  const deps = join(REPO, 'test/cli/support/fixture-deps.ts');
  await writeFile(
    path,
    `import { createPromptModel } from ${JSON.stringify(scripted)};
import { z } from ${JSON.stringify(deps)};

const lastResult = (prompt) => prompt.turns.flatMap((turn) => turn.toolResults).at(-1);

export default {
  main: {
    description: 'The parent',
    system: 'main',
    model: createPromptModel({
      script: (prompt) => {
        const last = lastResult(prompt);
        if (last?.toolName === 'task_wait') return { text: 'main done: ' + JSON.stringify(last.output) };
        return { text: 'main has nothing to do' };
      },
    }),
  },
  worker: {
    description: 'A child',
    system: 'worker',
    canSpawn: false,
    model: createPromptModel({
      script: (prompt) => {
        const last = lastResult(prompt);
        if (last?.isError && /interrupted/.test(String(last.output))) return { text: 'B checked after the interruption' };
        return { text: 'worker answer' };
      },
    }),
  },
  solo: {
    description: 'Says hello',
    system: 'solo',
    model: createPromptModel({ script: () => ({ text: 'hello from solo' }) }),
  },
  keyed: { description: 'Needs a key', system: 'keyed', model: 'openai:gpt-5' },
  slow: {
    description: 'Calls a tool that only ends when the run is aborted',
    system: 'slow',
    canSpawn: false,
    model: createPromptModel({
      script: (prompt) =>
        lastResult(prompt) === undefined
          ? { toolCalls: [{ toolName: 'wait', input: {} }] }
          : { text: 'the wait ended' },
    }),
    tools: [
      {
        name: 'wait',
        description: 'Waits until the run is aborted',
        inputSchema: z.object({}),
        idempotency: 'read-only',
        execute: (_input, { signal }) =>
          new Promise((resolve) => {
            // A real tool waits on I/O; this one keeps the process alive with a timer.
            const timer = setInterval(() => undefined, 1000);
            signal.addEventListener('abort', () => {
              clearInterval(timer);
              resolve('aborted');
            });
          }),
      },
    ],
  },
};
`,
  );
  return path;
}
