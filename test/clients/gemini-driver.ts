/*
 * Driving the real Gemini CLI (`@google/gemini-cli`, pinned in test/clients/package.json)
 * offline, for test/clients/gemini.test.ts: a throwaway HOME whose `.gemini/settings.json`
 * selects API-key auth (any key) with no telemetry or usage statistics, and
 * GOOGLE_GEMINI_BASE_URL naming a strict scripted Gemini API on 127.0.0.1; `gemini -p` started
 * detached with `--skip-trust --yolo` (tools run without asking), and a kill that reaches every
 * descendant (its shell tool runs each command in a process group of its own).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finishWithin, type RunningChild, startDetached } from './support/client-run.ts';

const MODULES = fileURLToPath(new URL('./node_modules/', import.meta.url));

/** One installed Gemini CLI release: its version and its script (run with this Node). */
export interface GeminiRelease {
  version: string;
  cli: string;
}

function release(folder: string): GeminiRelease {
  const path = join(MODULES, folder);
  const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { version, cli: join(path, 'bundle', 'gemini.js') };
}

/** The pinned Gemini CLI (`@google/gemini-cli`), the newest tested. */
const NEWEST = release(join('@google', 'gemini-cli'));

/** The Gemini CLI script the pinned package installs (run with this Node). */
export const GEMINI_CLI = NEWEST.cli;

/** The installed Gemini CLI version. */
export const GEMINI_VERSION = NEWEST.version;

/**
 * Every Gemini CLI release the client test runs: the pinned one and the older ones installed
 * under npm aliases (`gemini-cli-0-58`: `npm:@google/gemini-cli@0.58.0`), oldest first.
 */
export const GEMINI_RELEASES: readonly GeminiRelease[] = [
  ...readdirSync(MODULES)
    .filter((name) => /^gemini-cli-\d/.test(name))
    .map(release)
    .sort((left, right) => left.version.localeCompare(right.version, 'en', { numeric: true })),
  NEWEST,
];

/** A throwaway HOME for Gemini CLI, and the folder it works in. */
export interface GeminiHome {
  /** The Gemini CLI script this home runs (the pinned one unless a test sets another). */
  cli: string;
  root: string;
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh HOME for Gemini CLI talking to the scripted server at `url` (an origin). */
export async function makeGeminiHome(url: string, name = 'gemini-client-'): Promise<GeminiHome> {
  const root = await mkdtemp(join(tmpdir(), name));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(join(home, '.gemini'), { recursive: true });
  await mkdir(work, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GEMINI_API_KEY: 'test-key',
    GOOGLE_GEMINI_BASE_URL: url,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
  };
  return { cli: GEMINI_CLI, root, home, work, env };
}

/** The arguments of one headless run with `prompt`, resuming session `resume` when given. */
export function geminiArgs(prompt: string, resume?: string): string[] {
  return [
    '--skip-trust',
    '--yolo',
    ...(resume === undefined ? [] : ['--resume', resume]),
    '-p',
    prompt,
  ];
}

/** Start Gemini CLI in `home.work` with `args`. */
export function startGemini(home: GeminiHome, args: readonly string[]): RunningChild {
  return startDetached(process.execPath, [home.cli, ...args], { cwd: home.work, env: home.env });
}

/** Run Gemini CLI to its end, killed (with its tree) if it takes longer than `timeoutMs`. */
export function runGemini(
  home: GeminiHome,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return finishWithin(startGemini(home, args), timeoutMs, 'gemini');
}

/** The chat session files Gemini CLI wrote below `home` (`~/.gemini/tmp/<project>/chats/`). */
export function sessionFiles(home: GeminiHome): string[] {
  const root = join(home.home, '.gemini', 'tmp');
  if (!existsSync(root)) return [];
  const files: string[] = [];
  for (const project of readdirSync(root)) {
    const chats = join(root, project, 'chats');
    if (!existsSync(chats)) continue;
    for (const file of readdirSync(chats))
      if (file.endsWith('.jsonl')) files.push(join(chats, file));
  }
  return files.sort();
}
