/*
 * Driving the real pi coding agent (`@mariozechner/pi-coding-agent`, pinned in test/clients/package.json)
 * offline, for test/clients/pi.test.ts and the fixture recorder of test/fixtures/foreign/pi/:
 * a throwaway HOME whose `.pi/agent/models.json` names one custom provider on 127.0.0.1 (a
 * scripted OpenAI Chat Completions server), pi started detached in print mode, and a kill that
 * reaches every descendant. pi's bash tool starts each command in a process group of its own,
 * so killing pi's group is not enough: the whole tree is frozen (SIGSTOP, so nothing forks or
 * is re-parented meanwhile), then killed.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finishWithin, type RunningChild, startDetached } from './support/client-run.ts';
import { type InstalledRelease, installedReleases } from './support/releases.ts';

// What the fixture recorder (test/fixtures/foreign/pi/record.ts) takes from here.
export { waitFor } from './support/client-run.ts';
export { killTree, processesMentioning } from './support/process-tree.ts';

/** One installed pi release and its CLI script (run with this Node). */
export interface PiRelease extends InstalledRelease {
  cli: string;
}

/** Every installed pi release, oldest first: the pinned one and npm aliases (`pi-coding-agent-0-37`). */
export const PI_RELEASES: readonly PiRelease[] = installedReleases(
  join('@mariozechner', 'pi-coding-agent'),
  'pi-coding-agent',
).map((release) => ({ ...release, cli: realpathSync(join(release.folder, 'dist', 'cli.js')) }));

/** The pinned pi release. */
export const PI_PINNED = PI_RELEASES.find((release) => release.pinned) as PiRelease;

/** The pi CLI script the pinned package installs (run with this Node). */
export const PI_CLI = PI_PINNED.cli;

/** The installed pi version. */
export const PI_VERSION = PI_PINNED.version;

/** The model the fake provider offers. */
export const PI_MODEL = 'fake-model';

/** A throwaway HOME for pi, and the folder it works in. */
export interface PiHome {
  /** The release this home runs (the pinned one unless given). */
  release: PiRelease;
  root: string;
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh HOME for pi (its model server is named by {@link serveModelsFrom}). */
export async function makePiHome(
  name = 'pi-client-',
  release: PiRelease = PI_PINNED,
): Promise<PiHome> {
  const root = await mkdtemp(join(tmpdir(), name));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(join(home, '.pi', 'agent'), { recursive: true });
  await mkdir(work, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    PI_OFFLINE: '1',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
  };
  return { release, root, home, work, env };
}

/** Make pi's only provider, `fake`, the OpenAI Chat Completions server at `baseUrl` (…/v1). */
export async function serveModelsFrom(home: PiHome, baseUrl: string): Promise<void> {
  const models = {
    providers: {
      fake: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'test-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: PI_MODEL,
            name: 'Scripted model',
            reasoning: false,
            input: ['text'],
            // Required by pi 0.37 (optional later).
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
            contextWindow: 128000,
            maxTokens: 4096,
          },
        ],
      },
    },
  };
  await writeFile(join(home.home, '.pi', 'agent', 'models.json'), JSON.stringify(models, null, 2));
}

/** The arguments of one print-mode run against the fake provider. */
export function piArgs(prompt: string, ...extra: string[]): string[] {
  return ['--offline', '--provider', 'fake', '--model', PI_MODEL, ...extra, '-p', prompt];
}

/** A pi process started detached (its own process group), stdin closed, output collected. */
export type RunningPi = RunningChild;

/** Start pi in `home.work` with `args`. */
export function startPi(home: PiHome, args: readonly string[]): RunningPi {
  return startDetached(process.execPath, [home.release.cli, ...args], {
    cwd: home.work,
    env: home.env,
  });
}

/** Run pi to its end, killed (with its tree) if it takes longer than `timeoutMs`. */
export function runPi(
  home: PiHome,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return finishWithin(startPi(home, args), timeoutMs, 'pi');
}

/** The session files pi wrote below `home`. */
export function sessionFiles(home: PiHome): string[] {
  const root = join(home.home, '.pi', 'agent', 'sessions');
  if (!existsSync(root)) return [];
  const files: string[] = [];
  for (const folder of readdirSync(root)) {
    for (const file of readdirSync(join(root, folder))) {
      if (file.endsWith('.jsonl')) files.push(join(root, folder, file));
    }
  }
  return files.sort();
}
