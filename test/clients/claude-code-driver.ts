/*
 * Driving the real Claude Code (`@anthropic-ai/claude-code`, pinned in test/clients/package.json) offline,
 * for test/clients/claude-code.test.ts and the fixture recorder of
 * test/fixtures/foreign/claude-code/: a throwaway HOME, an API key and ANTHROPIC_BASE_URL naming
 * a strict scripted Anthropic Messages server on 127.0.0.1, `claude -p` started detached, and a
 * kill that reaches every descendant. Claude Code's Bash tool starts each command in a session
 * of its own, so killing Claude Code's group is not enough: the whole tree is frozen (SIGSTOP,
 * so nothing forks or is re-parented meanwhile), then killed.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  anthropicPairingError,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
} from '../../src/testing/provider-servers.ts';
import { finishWithin, type RunningChild, startDetached } from './support/client-run.ts';
import { processTable, processTree } from './support/process-tree.ts';
import { type InstalledRelease, installedReleases } from './support/releases.ts';

// What the fixture recorder (test/fixtures/foreign/claude-code/record.ts) takes from here.
export { waitFor } from './support/client-run.ts';
export { killTree, processesMentioning } from './support/process-tree.ts';

/**
 * One installed Claude Code release and how to start it: 2.x installs a native `claude.exe`,
 * 1.x is a node script (`cli.js`, run with this Node).
 */
export interface ClaudeRelease extends InstalledRelease {
  command: string;
  prefix: readonly string[];
}

function claudeRelease(installed: InstalledRelease): ClaudeRelease {
  const native = join(installed.folder, 'bin', 'claude.exe');
  return existsSync(native)
    ? { ...installed, command: realpathSync(native), prefix: [] }
    : { ...installed, command: process.execPath, prefix: [join(installed.folder, 'cli.js')] };
}

/** Every installed Claude Code release, oldest first (the pinned one and npm aliases). */
export const CLAUDE_RELEASES: readonly ClaudeRelease[] = installedReleases(
  join('@anthropic-ai', 'claude-code'),
  'claude-code',
).map(claudeRelease);

/** The pinned Claude Code release. */
export const CLAUDE_PINNED = CLAUDE_RELEASES.find((release) => release.pinned) as ClaudeRelease;

/** The claude executable the pinned package installs (a native binary). */
export const CLAUDE_BIN = CLAUDE_PINNED.command;

/** The installed Claude Code version. */
export const CLAUDE_VERSION = CLAUDE_PINNED.version;

/** The model name passed to claude (the scripted server answers any). */
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

/** A throwaway HOME for Claude Code, and the folder it works in. */
export interface ClaudeHome {
  /** The release this home runs (the pinned one unless given). */
  release: ClaudeRelease;
  root: string;
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh HOME for Claude Code (its model server is named by {@link useModelServer}). */
export async function makeClaudeHome(
  name = 'claude-client-',
  release: ClaudeRelease = CLAUDE_PINNED,
): Promise<ClaudeHome> {
  const root = await mkdtemp(join(tmpdir(), name));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(home, { recursive: true });
  await mkdir(work, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ANTHROPIC_API_KEY: 'test',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  return { release, root, home, work, env };
}

/** Make Claude Code talk to the scripted model server at `url` (`http://127.0.0.1:PORT`). */
export function useModelServer(home: ClaudeHome, url: string): void {
  home.env.ANTHROPIC_BASE_URL = url;
}

/** The arguments of a print-mode run that starts session `sessionId` with `prompt`. */
export function startArgs(sessionId: string, prompt: string): string[] {
  return [
    '-p',
    prompt,
    '--session-id',
    sessionId,
    '--allowedTools',
    'Bash',
    '--model',
    CLAUDE_MODEL,
  ];
}

/** The arguments of a print-mode run that resumes session `sessionId` with `prompt`. */
export function resumeArgs(sessionId: string, prompt = 'continue'): string[] {
  return ['--resume', sessionId, '-p', prompt, '--allowedTools', 'Bash', '--model', CLAUDE_MODEL];
}

/** A claude process started detached (its own process group), stdin closed, output collected. */
export type RunningClaude = RunningChild;

/** Start claude in `home.work` with `args`. */
export function startClaude(home: ClaudeHome, args: readonly string[]): RunningClaude {
  return startDetached(home.release.command, [...home.release.prefix, ...args], {
    cwd: home.work,
    env: home.env,
  });
}

/** Run claude to its end, killed (with its tree) if it takes longer than `timeoutMs`. */
export function runClaude(
  home: ClaudeHome,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return finishWithin(startClaude(home, args), timeoutMs, 'claude');
}

/** The session file Claude Code writes for `sessionId` under `home`, once it exists. */
export function sessionFile(home: ClaudeHome, sessionId: string): string | null {
  const projects = join(home.home, '.claude', 'projects');
  if (!existsSync(projects)) return null;
  for (const project of readdirSync(projects)) {
    const file = join(projects, project, `${sessionId}.jsonl`);
    if (existsSync(file)) return file;
  }
  return null;
}

/** A long command that leaves `started-N` when it starts and `marker-N` when it ends. */
export function longCommand(work: string, n: number): string {
  return `echo started > ${work}/started-${n}; sleep 60; echo done > ${work}/marker-${n}`;
}

/** True when a live `sleep 60` runs below `root`: the long command really runs. */
export function sleepRunsBelow(root: number): boolean {
  const table = processTable();
  return processTree(root).some((pid) => {
    const entry = table.get(pid);
    return entry !== undefined && entry.state !== 'Z' && entry.command.startsWith('sleep 60');
  });
}

// ─── The scripted model ─────────────────────────────────────────────────────────────────────

/** One scripted model turn: text, then tool calls (Claude Code's Bash takes `command`). */
export interface ModelTurn {
  text?: string;
  calls?: { id: string; name: string; input: Record<string, unknown> }[];
}

/**
 * A running scripted Anthropic Messages server; its `url` is the base Claude Code takes
 * (`ANTHROPIC_BASE_URL`, without `/v1`).
 */
export type ModelServer = ScriptedServer;

/**
 * A strict scripted Anthropic Messages server: each `POST /v1/messages` is checked against
 * Anthropic's pairing rules ({@link anthropicPairingError}: a 400 in Anthropic's words if it
 * breaks them) and answered with the next turn of the script, streamed as Claude Code asks, with
 * a fresh `msg_…` id per answer as the real API gives. Anything else (Claude Code's `HEAD /`
 * probe) is a 404.
 */
export async function startModelServer(script: readonly ModelTurn[]): Promise<ModelServer> {
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  let answered = 0;
  const server = await startScriptedServer(
    (body, response) => {
      const problem = anthropicPairingError(
        (body.messages ?? []) as Parameters<typeof anthropicPairingError>[0],
        new Map(),
      );
      if (problem !== null) {
        rejections.push(problem);
        sendJson(response, 400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: problem },
        });
        return;
      }
      const step = steps.shift();
      if (step === undefined) {
        sendJson(response, 500, {
          type: 'error',
          error: { type: 'api_error', message: 'script exhausted' },
        });
        return;
      }
      answered += 1;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (event: string, data: Record<string, unknown>) =>
        response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
      send('message_start', {
        message: {
          id: `msg_scripted_${process.pid}_${answered}_${Date.now()}`,
          type: 'message',
          role: 'assistant',
          model: typeof body.model === 'string' ? body.model : CLAUDE_MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 1 },
        },
      });
      let index = 0;
      if (step.text !== undefined) {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { index, delta: { type: 'text_delta', text: step.text } });
        send('content_block_stop', { index });
        index += 1;
      }
      for (const call of step.calls ?? []) {
        send('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
        });
        send('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
        });
        send('content_block_stop', { index });
        index += 1;
      }
      const calls = (step.calls ?? []).length > 0;
      send('message_delta', {
        delta: { stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: 5 },
      });
      send('message_stop', {});
      response.end();
    },
    requests,
    rejections,
    steps,
    '/v1/messages',
  );
  return { ...server, url: server.url.replace(/\/v1$/, '') };
}
