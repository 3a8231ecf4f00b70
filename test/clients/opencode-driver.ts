/*
 * Driving the real opencode (its `opencode-linux-x64` binary package, pinned in
 * test/clients/package.json) offline, for
 * test/clients/opencode.test.ts: a throwaway HOME with private XDG folders (opencode keeps its
 * database in `$XDG_DATA_HOME/opencode/opencode.db`), an `opencode.json` in the work folder whose
 * only provider is a strict scripted Chat Completions server on 127.0.0.1 (through
 * `@ai-sdk/openai-compatible`, built into opencode), no update check and no models fetch;
 * `opencode run` started detached, and a kill that reaches every descendant.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finishWithin, type RunningChild, startDetached } from './support/client-run.ts';

const MODULES = fileURLToPath(new URL('./node_modules/', import.meta.url));

/** One installed opencode release: its version and its executable. */
export interface OpencodeRelease {
  version: string;
  bin: string;
}

function release(folder: string): OpencodeRelease {
  const path = join(MODULES, folder);
  const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { version, bin: join(path, 'bin', 'opencode') };
}

/** The pinned opencode: its Linux x64 binary package (the only platform the registry serves). */
const PINNED = release(`opencode-${process.platform}-${process.arch}`);

/** The opencode executable. */
export const OPENCODE_BIN = PINNED.bin;

/** The installed opencode version. */
export const OPENCODE_VERSION = PINNED.version;

/**
 * Every opencode release the client test runs: the pinned one and the others installed under
 * npm aliases (`opencode-1-18-34`: `npm:opencode-linux-x64@1.18.34`), oldest first.
 */
export const OPENCODE_RELEASES: readonly OpencodeRelease[] = [
  PINNED,
  ...readdirSync(MODULES)
    .filter((name) => /^opencode-\d/.test(name))
    .map(release),
].sort((left, right) => left.version.localeCompare(right.version, 'en', { numeric: true }));

/** The model opencode is told to use: the scripted provider's only one. */
export const OPENCODE_MODEL = 'fake/fake-model';

/** A throwaway HOME for opencode, the folder it works in, and its database. */
export interface OpencodeHome {
  /** The opencode executable this home runs (the pinned one unless a test sets another). */
  bin: string;
  root: string;
  home: string;
  work: string;
  database: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh HOME for opencode (its model server is named by {@link serveModelFrom}). */
export async function makeOpencodeHome(name = 'opencode-client-'): Promise<OpencodeHome> {
  const root = await mkdtemp(join(tmpdir(), name));
  const home = join(root, 'home');
  const work = join(root, 'work');
  const data = join(home, '.local', 'share');
  for (const folder of [home, work, join(root, 'tmp')]) await mkdir(folder, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: join(root, 'tmp'),
    XDG_DATA_HOME: data,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
  };
  return {
    bin: OPENCODE_BIN,
    root,
    home,
    work,
    database: join(data, 'opencode', 'opencode.db'),
    env,
  };
}

/** Make opencode's only provider, `fake`, the Chat Completions server at `baseURL` (…/v1). */
export async function serveModelFrom(home: OpencodeHome, baseURL: string): Promise<void> {
  const config = {
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'fake',
        options: { baseURL, apiKey: 'test-key' },
        models: { 'fake-model': { name: 'Scripted model' } },
      },
    },
    model: OPENCODE_MODEL,
    autoupdate: false,
    share: 'disabled',
    permission: { bash: 'allow' },
  };
  await writeFile(join(home.work, 'opencode.json'), JSON.stringify(config, null, 2));
}

/**
 * opencode asks the model for a session title in a request of its own (no tools), in no fixed
 * order with the turns: answered aside, outside the script.
 */
export function titleAside(body: Record<string, unknown>): { text: string } | null {
  return body.tools === undefined ? { text: 'A scripted session' } : null;
}

/** The arguments of `opencode run` with `prompt`, resuming `session` when given. */
export function runArgs(prompt: string, session?: string): string[] {
  return [
    'run',
    '--model',
    OPENCODE_MODEL,
    ...(session === undefined ? [] : ['--session', session]),
    prompt,
  ];
}

/** Start opencode in `home.work` with `args`, detached, output collected. */
export function startOpencode(home: OpencodeHome, args: readonly string[]): RunningChild {
  return startDetached(home.bin, args, { cwd: home.work, env: home.env });
}

/** Run opencode to its end, killed (with its tree) if it takes longer than `timeoutMs`. */
export function runOpencode(
  home: OpencodeHome,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return finishWithin(startOpencode(home, args), timeoutMs, 'opencode');
}
