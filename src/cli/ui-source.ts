import { type FSWatcher, watch } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { peek } from '../transcript/peek.ts';
import { type RunRecords, runRecordsOf } from '../render/conversation-html.ts';
import { type FolderListing, findTranscripts, type NotRead } from '../runs/find-transcripts.ts';
import type { RunNode } from '../render/run-node.ts';
import { mayBeLocked, readLockTableAsync } from '../runs/lock-snapshot.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { statusTree } from '../runs/status-tree.ts';
import { createStyle } from '../render/terminal-style.ts';
import { planText, planTreeRevival } from '../runs/tree-revival-plan.ts';

/**
 * What the page offers to do, and the command that does it once a person confirms.
 *
 * @example
 * const action: UiAction = { text: 'Nothing to revive.\n', runs: 0, verb: 'revive', argv: [] };
 */
export interface UiAction {
  /** The plan, as the command itself prints it. */
  text: string;
  /** How many runs the command acts on; 0 when there is nothing to confirm. */
  runs: number;
  /** What confirming does to them: `revive` (here) or `approve` (a worker revives them). */
  verb: 'revive' | 'approve';
  /** The `llm-agent` arguments that carry the plan out, without asking. */
  argv: string[];
  /** The same command as shown to the person (a secret such as a password left out). */
  shown?: string;
}

/**
 * The runs of a {@link UiSource}, and the folders below its PATHs that could not be read (their
 * runs are not in the tree: the page says so, as `status` does).
 *
 * @example
 * const { roots, notRead } = await source.tree();
 */
export interface UiTree {
  roots: RunNode[];
  notRead: NotRead[];
}

/**
 * Where the runs `llm-agent ui` shows come from: transcript files below some PATHs, or a
 * PostgreSQL store. Every read is made again on each request, so the page shows what is there
 * now.
 *
 * @example
 * const source = fileUiSource(['runs/'], process.cwd());
 * const { roots } = await source.tree();
 * const page = runTreeHtml(roots, new Map(), { sections: [] });
 */
export interface UiSource {
  /** The tree of runs, each with its state as `status` decides it. */
  tree(): Promise<UiTree>;
  /** What the page shows of one run of the tree (its records, or why they cannot be read). */
  records(node: RunNode): Promise<RunRecords>;
  /** The plan for the tree, and the command a Confirm runs. */
  action(roots: RunNode[]): Promise<UiAction>;
  /** Changes whenever anything the page shows may have changed; polled every second. */
  signature(): Promise<string>;
  /**
   * Calls `changed` soon after something may have changed, so the page need not wait for
   * the next poll; returns what stops it. Best effort: the poll stays the guarantee. Called
   * before the first `signature`, which may be what tells it where to look.
   */
  watch?(changed: () => void): () => void;
  /** Releases what the source holds (a database pool). */
  close(): Promise<void>;
}

/**
 * The runs recorded below `paths` (transcripts or folders, relative to `cwd`), as `status`
 * decides them (with its index, found through `env`, on a large tree); Confirm runs
 * `llm-agent revive PATH… --yes` (with `--agents` when given).
 *
 * @example
 * const source = fileUiSource(['runs/'], process.cwd(), { agents: 'agents.ts', env: process.env });
 */
export function fileUiSource(
  paths: string[],
  cwd: string,
  options: { agents?: string; env?: NodeJS.ProcessEnv } = {},
): UiSource {
  const { agents } = options;
  const env = options.env ?? {};
  const watching = new FolderWatch();
  return {
    tree: () => statusTree(paths, cwd, env, { maxRevivals: DEFAULT_MAX_REVIVALS }),
    async records(node) {
      return runRecordsOf(await peek(node.path));
    },
    async action(roots) {
      const plan = planTreeRevival(roots);
      // The PATHs after `--`: a folder named like an option stays a PATH.
      const argv = [
        'revive',
        '--yes',
        ...(agents === undefined ? [] : ['--agents', agents]),
        '--',
        ...paths,
      ];
      return {
        text: planText(plan, createStyle(false)),
        runs: plan.revivals.length,
        verb: 'revive',
        argv,
      };
    },
    async signature() {
      const seen = await fileSignature(paths, cwd);
      watching.follow(seen.folders);
      return seen.text;
    },
    // Where to watch is learnt from each signature: the folders it read.
    watch(changed) {
      watching.start(changed);
      return () => watching.stop();
    },
    async close() {
      watching.stop();
    },
  };
}

/**
 * What the page shows of the files, as text that changes when it does: each transcript's
 * identity, size and modification time, and whether a process holds its lock (a run whose
 * process dies changes no byte: only its lock goes); each tree claim file and its lock. And
 * the folders worth watching: the PATHs that are folders, and every folder that holds a
 * transcript (a new `.agents` folder shows up in its parent's, which holds the parent run).
 */
async function fileSignature(
  paths: string[],
  cwd: string,
): Promise<{ text: string; folders: Set<string> }> {
  const listing: FolderListing = { folders: new Set(), claims: new Set() };
  const found = await findTranscripts(paths, cwd, [], listing);
  const table = await readLockTableAsync();
  const locked = (ino: number): string =>
    table === null ? '?' : mayBeLocked(table, ino) ? 'locked' : 'free';
  const parts: string[] = [];
  const folders = new Set<string>();
  for (const given of paths) {
    // The walk lists folders by their real paths: a PATH given through a link is found so.
    const path = await realpath(resolve(cwd, given)).catch(() => resolve(cwd, given));
    if (listing.folders.has(path)) folders.add(path);
  }
  for (const path of found) {
    folders.add(dirname(path));
    const stats = await stat(path).catch(() => undefined);
    parts.push(
      stats === undefined
        ? `${path}:gone`
        : `${path}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${locked(stats.ino)}`,
    );
  }
  for (const claim of [...listing.claims].sort()) {
    const stats = await stat(claim).catch(() => undefined);
    parts.push(`${claim}:${stats === undefined ? 'gone' : `${stats.ino}:${locked(stats.ino)}`}`);
  }
  return { text: parts.join('\n'), folders };
}

/** More folders than this are not watched one by one: the poll alone notices their changes. */
const MAX_WATCHED_FOLDERS = 1000;

/**
 * A watch (not recursive) on each folder worth watching, kept to the set the last check found:
 * a folder that appears is watched from the check after it, one that goes is let go. A watch
 * that cannot be made (the folder went, the system's watch limit) is left to the poll.
 */
class FolderWatch {
  #changed: (() => void) | undefined;
  readonly #watchers = new Map<string, FSWatcher>();

  start(changed: () => void): void {
    this.#changed = changed;
  }

  follow(folders: ReadonlySet<string>): void {
    if (this.#changed === undefined) return;
    const wanted = folders.size > MAX_WATCHED_FOLDERS ? new Set<string>() : folders;
    for (const [folder, watcher] of this.#watchers) {
      if (!wanted.has(folder)) {
        watcher.close();
        this.#watchers.delete(folder);
      }
    }
    for (const folder of wanted) {
      if (this.#watchers.has(folder)) continue;
      try {
        const forget = (): void => {
          watcher.close();
          if (this.#watchers.get(folder) === watcher) this.#watchers.delete(folder);
        };
        const watcher = watch(folder, { persistent: false }, (event, name) => {
          // The folder itself went (removed, renamed): this watch hears nothing more, so it is
          // let go, and the next check watches whatever folder is at the path then.
          if (event === 'rename' && name === basename(folder)) forget();
          this.#changed?.();
        });
        watcher.on('error', forget);
        this.#watchers.set(folder, watcher);
      } catch {
        // Polled instead.
      }
    }
  }

  stop(): void {
    this.#changed = undefined;
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }
}
