import { type FSWatcher, statSync, watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { peek } from '../transcript/peek.ts';
import { type RunRecords, runRecordsOf } from './conversation-html.ts';
import { findTranscripts, type NotRead } from './find-transcripts.ts';
import type { RunNode } from './inspect-tree.ts';
import { DEFAULT_MAX_REVIVALS } from './status-command.ts';
import { statusTree } from './status-tree.ts';
import { createStyle } from './terminal-style.ts';
import { planText, planTreeRevival } from './tree-revival-plan.ts';

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
   * the next poll; returns what stops it. Best effort: the poll stays the guarantee.
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
  return {
    tree: () => statusTree(paths, cwd, env, { maxRevivals: DEFAULT_MAX_REVIVALS }),
    async records(node) {
      return runRecordsOf(await peek(node.path));
    },
    async action(roots) {
      const plan = planTreeRevival(roots);
      const argv = [
        'revive',
        ...paths,
        '--yes',
        ...(agents === undefined ? [] : ['--agents', agents]),
      ];
      return {
        text: planText(plan, createStyle(false)),
        runs: plan.revivals.length,
        verb: 'revive',
        argv,
      };
    },
    signature: () => fileSignature(paths, cwd),
    watch: (changed) => watchPaths(paths, cwd, changed),
    async close() {},
  };
}

/** Every transcript below the PATHs with its size and mtime: changes when any of them does. */
async function fileSignature(paths: string[], cwd: string): Promise<string> {
  const found = await findTranscripts(paths, cwd);
  const parts: string[] = [];
  for (const path of found) {
    const stats = await stat(path).catch(() => undefined);
    parts.push(`${path}:${stats?.size ?? -1}:${stats?.mtimeMs ?? -1}`);
  }
  return parts.join('\n');
}

/**
 * Watches a folder PATH with everything below it, and a transcript PATH's folder (not below
 * it: that may be a whole home folder) and its children's `.agents` folder. A watch that
 * cannot be made (no such folder yet, the system's watch limit) is left to the poll.
 */
function watchPaths(paths: string[], cwd: string, changed: () => void): () => void {
  const watchers: FSWatcher[] = [];
  const add = (folder: string, recursive: boolean): void => {
    try {
      const watcher = watch(folder, { recursive, persistent: false }, () => changed());
      watcher.on('error', () => watcher.close());
      watchers.push(watcher);
    } catch {
      // Polled instead.
    }
  };
  for (const given of paths) {
    const path = resolve(cwd, given);
    let folder = false;
    try {
      folder = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (folder) add(path, true);
    else {
      add(dirname(path), false);
      add(path.replace(/\.jsonl$/, '.agents'), true);
    }
  }
  return () => {
    for (const watcher of watchers) watcher.close();
  };
}
